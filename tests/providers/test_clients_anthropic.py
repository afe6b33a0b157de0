"""The Anthropic client (direct) against a local server speaking the Messages
SSE protocol, through the real `anthropic` SDK."""

import json
import logging

import pytest

from assistant_engine.providers.catalog import client_for, model_option
from assistant_engine.providers.clients.anthropic_client import AnthropicClient
from assistant_engine.providers.clients.base import (
    AssistantReply,
    ModelRequest,
    ProviderError,
    Stop,
    TextDelta,
    ToolCallEvent,
    ToolResult,
    ToolResults,
    ToolSpec,
    ToolUse,
    Usage,
    UserText,
)
from tests.fakes.wire_servers import WireServer, anthropic_events, anthropic_sse, json_reply

SEARCH = ToolSpec("search_notes", "Search the notes", {"type": "object", "properties": {"query": {"type": "string"}}})
LEAK = "RAW-PROVIDER-TEXT echoing the secret prompt"


@pytest.fixture
def server(monkeypatch):
    with WireServer() as wire:
        # The SDK's own variable, as a deployment behind a proxy would set it.
        monkeypatch.setenv("ANTHROPIC_BASE_URL", wire.url)
        yield wire


def make_client(**kwargs) -> AnthropicClient:
    return AnthropicClient.direct(model="claude-haiku-4-5", api_key="sk-test", max_retries=0, **kwargs)


def ask(text: str = "hello") -> ModelRequest:
    return ModelRequest(system="Be brief.", history=[UserText(text)], tools=[SEARCH], max_tokens=321)


def test_streams_text_and_tool_calls_whose_json_arrives_in_fragments(server):
    events = anthropic_events(
        text=("Let me ", "look."),
        tool_calls=(
            ("toolu_1", "search_notes", ('{"que', 'ry": ', '"budget"}')),
            ("toolu_2", "read_inbox", ()),
        ),
        stop_reason="tool_use",
        start_usage={
            "input_tokens": 50,
            "output_tokens": 1,
            "cache_creation_input_tokens": 400,
            "cache_read_input_tokens": 900,
        },
        final_usage={"output_tokens": 42},
    )
    server.reply(anthropic_sse(events))

    streamed = list(make_client().stream(ask()))

    assert streamed == [
        TextDelta("Let me "),
        TextDelta("look."),
        ToolCallEvent("toolu_1", "search_notes", {"query": "budget"}),
        ToolCallEvent("toolu_2", "read_inbox", {}),
        Usage(input_tokens=50, output_tokens=42, cache_write_tokens=400, cache_read_tokens=900),
        Stop("tool_use", raw_reason="tool_use"),
    ]


def test_message_delta_usage_is_cumulative_and_wins_over_message_start(server):
    events = anthropic_events(
        text=("ok",),
        start_usage={"input_tokens": 50, "output_tokens": 1},
        final_usage={"input_tokens": 55, "output_tokens": 9, "cache_read_input_tokens": 3},
    )
    server.reply(anthropic_sse(events))

    streamed = list(make_client().stream(ask()))

    assert streamed[-2] == Usage(input_tokens=55, output_tokens=9, cache_read_tokens=3)


def test_sends_history_as_content_blocks_with_tool_results_in_a_user_message(server):
    server.reply(anthropic_sse(anthropic_events(text=("ok",))))
    history = [
        UserText("find budget"),
        AssistantReply("Searching.", (ToolUse("toolu_1", "search_notes", {"query": "budget"}),)),
        ToolResults((ToolResult("toolu_1", '{"notes": []}'), ToolResult("toolu_9", "refused", is_error=True))),
        UserText("thanks"),
        AssistantReply(""),  # an empty reply: the API refuses empty content
        UserText("bye"),
    ]

    list(make_client().stream(ModelRequest(system="Be brief.", history=history, tools=[SEARCH], max_tokens=77)))

    request = server.requests[0]
    assert request.path == "/v1/messages"
    assert "sk-test" in (request.headers.get("x-api-key", "") + request.headers.get("authorization", ""))
    body = request.json()
    assert body["model"] == "claude-haiku-4-5"
    assert body["stream"] is True
    assert body["max_tokens"] == 77
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert body["tools"] == [
        {"name": SEARCH.name, "description": SEARCH.description, "input_schema": SEARCH.input_schema}
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "find budget"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "toolu_1", "name": "search_notes", "input": {"query": "budget"}},
            ],
        },
        {
            # Tool results and the next user text merge into one user message.
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": '{"notes": []}',
                    "is_error": False,
                },
                {"type": "tool_result", "tool_use_id": "toolu_9", "content": "refused", "is_error": True},
                {"type": "text", "text": "thanks"},
                {"type": "text", "text": "bye", "cache_control": {"type": "ephemeral"}},
            ],
        },
    ]


def test_the_summary_of_earlier_messages_is_a_cache_breakpoint_and_a_summarys_own_call_caches_nothing(server):
    """Three breakpoints of Anthropic's four: the system prompt, the summary (stable for many
    turns), the request's end; a call that writes a summary is made once: no cache write to pay."""
    server.reply(anthropic_sse(anthropic_events(text=("ok",))), anthropic_sse(anthropic_events(text=("ok",))))
    history = [UserText("<conversation_summary>…</conversation_summary>", cache_here=True),
               AssistantReply("Noted."), UserText("and now?")]

    list(make_client().stream(ModelRequest(system="Be brief.", history=history)))
    list(make_client().stream(ModelRequest(system="Summarize.", history=history, purpose="summary")))

    cached, summary_call = (request.json() for request in server.requests)
    marked = [block for message in cached["messages"] for block in message["content"] if "cache_control" in block]
    assert [block["text"] for block in marked] == ["<conversation_summary>…</conversation_summary>", "and now?"]
    assert "cache_control" in cached["system"][0]
    assert "cache_control" not in json.dumps(summary_call)


def test_no_system_nor_tools_fields_when_there_are_none(server):
    server.reply(anthropic_sse(anthropic_events(text=("ok",))))

    list(make_client().stream(ModelRequest(system="", history=[UserText("hi")])))

    body = server.requests[0].json()
    assert "system" not in body and "tools" not in body


@pytest.mark.parametrize(
    ("stop_reason", "reason"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("stop_sequence", "other"),
        ("pause_turn", "other"),
        ("model_context_window_exceeded", "other"),
    ],
)
def test_stop_reason_maps_to_a_neutral_stop_reason(server, stop_reason, reason):
    server.reply(anthropic_sse(anthropic_events(text=("x",), stop_reason=stop_reason)))

    streamed = list(make_client().stream(ask()))

    assert streamed[-1] == Stop(reason, raw_reason=stop_reason)


@pytest.mark.parametrize("fragments", [('{"query": ', '"bud'), ("[1, ", "2]")])
def test_tool_input_that_is_not_a_json_object_gives_no_input_but_the_raw_text(server, fragments):
    events = anthropic_events(tool_calls=(("toolu_1", "search_notes", fragments),), stop_reason="tool_use")
    server.reply(anthropic_sse(events))

    streamed = list(make_client().stream(ask()))

    assert streamed[0] == ToolCallEvent("toolu_1", "search_notes", None, raw_input="".join(fragments))


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "api"),
        (401, "auth"),
        (403, "auth"),
        (404, "api"),
        (429, "rate_limit"),
        (500, "api"),
        (529, "api"),
    ],
)
def test_error_statuses_map_to_provider_error_kinds_without_the_provider_text(server, caplog, status, kind):
    caplog.set_level(logging.DEBUG)
    server.reply(json_reply(status, {"type": "error", "error": {"type": "some_error", "message": LEAK}}))

    with pytest.raises(ProviderError) as caught:
        list(make_client().stream(ask()))

    assert caught.value.kind == kind
    assert str(status) in str(caught.value)
    assert LEAK not in str(caught.value) and LEAK not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert LEAK not in caplog.text


def test_an_error_event_in_the_middle_of_the_stream_is_an_api_error_without_its_text(server, caplog):
    caplog.set_level(logging.DEBUG)
    events = anthropic_events(text=("Hal",))[:4]  # message_start, ping, block start, one delta
    events.append({"type": "error", "error": {"type": "overloaded_error", "message": LEAK}})
    server.reply(anthropic_sse(events))

    streamed = []
    with pytest.raises(ProviderError) as caught:
        for event in make_client().stream(ask()):
            streamed.append(event)

    assert streamed == [TextDelta("Hal")]
    assert caught.value.kind == "api"
    assert LEAK not in str(caught.value) and LEAK not in caplog.text


def test_a_slow_provider_is_a_timeout(server):
    server.reply(json_reply(200, {}, delay=1.0))

    with pytest.raises(ProviderError) as caught:
        list(make_client(timeout=0.2).stream(ask()))

    assert caught.value.kind == "timeout"


def test_an_unreachable_provider_is_an_api_error(monkeypatch):
    with WireServer() as gone:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", gone.url)

    with pytest.raises(ProviderError) as caught:
        list(make_client().stream(ask()))

    assert caught.value.kind == "api"


def test_client_for_anthropic_direct_uses_the_key_when_us_processing_is_allowed(server, settings):
    settings.ANTHROPIC_API_KEY = "sk-from-settings"
    settings.DEBUG = False
    settings.ASSISTANT_ALLOW_US_PROCESSING = True
    server.reply(anthropic_sse(anthropic_events(text=("Hi",))))

    streamed = list(client_for(model_option("anthropic-claude-sonnet-4-6"), max_retries=0).stream(ask()))

    assert streamed[0] == TextDelta("Hi")
    request = server.requests[0]
    assert request.json()["model"] == "claude-sonnet-4-6"
    assert "sk-from-settings" in (request.headers.get("x-api-key", "") + request.headers.get("authorization", ""))


def test_client_for_anthropic_direct_refuses_us_processing_and_sends_nothing(server, settings):
    settings.ANTHROPIC_API_KEY = "sk-from-settings"
    settings.DEBUG = False
    settings.ASSISTANT_ALLOW_US_PROCESSING = False

    with pytest.raises(ProviderError) as caught:
        client_for(model_option("anthropic-claude-sonnet-4-6"), max_retries=0)

    assert caught.value.kind == "refused"
    assert server.requests == []


def test_the_conversation_is_not_logged_even_at_debug_level(server, caplog):
    # The SDK logs request bodies at DEBUG; the client keeps its logger at INFO.
    caplog.set_level(logging.DEBUG)
    server.reply(anthropic_sse(anthropic_events(text=("a private ", "reply"))))

    list(make_client().stream(ask("my secret diary entry")))

    assert "my secret diary entry" not in caplog.text
    assert "a private" not in caplog.text
