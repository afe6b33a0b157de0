"""The OpenAI-compatible client (Infomaniak) against a local server speaking the
chat-completions wire protocol, through the real `openai` SDK."""

import logging

import pytest

from assistant_engine.providers.catalog import client_for, model_option
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
from assistant_engine.providers.clients.openai_compat import OpenAICompatClient
from tests.fakes.wire_servers import (
    WireServer,
    json_reply,
    openai_chunk,
    openai_sse,
    openai_tool_fragment,
    openai_usage_chunk,
)

SEARCH = ToolSpec("search_notes", "Search the notes", {"type": "object", "properties": {"query": {"type": "string"}}})
LEAK = "RAW-PROVIDER-TEXT echoing the secret prompt"


@pytest.fixture
def server():
    with WireServer() as wire:
        yield wire


def make_client(server: WireServer, **kwargs) -> OpenAICompatClient:
    return OpenAICompatClient(model="qwen3", api_key="tok-123", base_url=server.url + "/v1", max_retries=0, **kwargs)


def ask(text: str = "hello", tools=(SEARCH,)) -> ModelRequest:
    return ModelRequest(system="Be brief.", history=[UserText(text)], tools=list(tools), max_tokens=321)


def test_streams_text_then_tool_calls_assembled_from_fragments_then_usage_and_stop(server):
    server.reply(
        openai_sse(
            [
                openai_chunk({"role": "assistant", "content": ""}),
                openai_chunk({"content": "Let me "}),
                openai_chunk({"content": "look."}),
                openai_tool_fragment(0, '{"que', call_id="call_a", name="search_notes"),
                openai_tool_fragment(1, "", call_id="call_b", name="read_inbox"),
                openai_tool_fragment(0, 'ry": "bud'),
                openai_tool_fragment(0, 'get"}'),
                openai_chunk(finish_reason="tool_calls"),
                openai_usage_chunk(prompt_tokens=120, completion_tokens=30, cached_tokens=20),
            ]
        )
    )

    events = list(make_client(server).stream(ask()))

    assert events == [
        TextDelta("Let me "),
        TextDelta("look."),
        ToolCallEvent("call_a", "search_notes", {"query": "budget"}),
        ToolCallEvent("call_b", "read_inbox", {}),
        # Cached tokens are split out of prompt_tokens, as Anthropic counts them.
        Usage(input_tokens=100, output_tokens=30, cache_read_tokens=20),
        Stop("tool_use", raw_reason="tool_calls"),
    ]


def test_sends_history_tools_and_stream_flags_in_the_chat_completions_shape(server):
    server.reply(openai_sse([openai_chunk({"content": "ok"}, finish_reason="stop")]))
    history = [
        UserText("find budget"),
        AssistantReply("Searching.", (ToolUse("call_1", "search_notes", {"query": "budget"}),)),
        ToolResults((ToolResult("call_1", '{"notes": []}'),)),
        AssistantReply("", (ToolUse("call_2", "delete_note", {"note_id": 3}),)),
        ToolResults((ToolResult("call_2", "not allowed", is_error=True),)),
        UserText("thanks"),
    ]

    list(make_client(server).stream(ModelRequest(system="Be brief.", history=history, tools=[SEARCH], max_tokens=77)))

    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer tok-123"
    body = request.json()
    assert body["model"] == "qwen3"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 77
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": SEARCH.name,
                "description": SEARCH.description,
                "parameters": SEARCH.input_schema,
            },
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "find budget"},
        {
            "role": "assistant",
            "content": "Searching.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_notes", "arguments": '{"query": "budget"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"notes": []}'},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "delete_note", "arguments": '{"note_id": 3}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: not allowed"},
        {"role": "user", "content": "thanks"},
    ]


def test_no_tools_field_when_no_tools_are_offered(server):
    # Some OpenAI-compatible servers refuse an empty tools list.
    server.reply(openai_sse([openai_chunk({"content": "hi"}, finish_reason="stop")]))

    list(make_client(server).stream(ask(tools=())))

    assert "tools" not in server.requests[0].json()


@pytest.mark.parametrize(
    ("finish_reason", "reason"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("function_call", "other"),
    ],
)
def test_finish_reason_maps_to_a_neutral_stop_reason(server, finish_reason, reason):
    server.reply(openai_sse([openai_chunk({"content": "x"}), openai_chunk(finish_reason=finish_reason)]))

    events = list(make_client(server).stream(ask()))

    assert events[-1] == Stop(reason, raw_reason=finish_reason)


@pytest.mark.parametrize("arguments", ['{"query": "bud', "[1, 2]", '"just a string"'])
def test_arguments_that_are_not_a_json_object_give_no_input_but_the_raw_text(server, arguments):
    server.reply(
        openai_sse(
            [
                openai_tool_fragment(0, arguments, call_id="call_x", name="search_notes"),
                openai_chunk(finish_reason="tool_calls"),
            ]
        )
    )

    events = list(make_client(server).stream(ask()))

    assert events[0] == ToolCallEvent("call_x", "search_notes", None, raw_input=arguments)


def test_a_stream_cut_short_still_ends_with_usage_and_stop(server):
    server.reply(openai_sse([openai_chunk({"content": "Hal"})]))

    events = list(make_client(server).stream(ask()))

    assert events == [TextDelta("Hal"), Usage(), Stop("other", raw_reason="")]


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "api"),
        (401, "auth"),
        (403, "auth"),
        (404, "api"),
        (429, "rate_limit"),
        (500, "api"),
        (503, "api"),
    ],
)
def test_error_statuses_map_to_provider_error_kinds_without_the_provider_text(server, caplog, status, kind):
    caplog.set_level(logging.DEBUG)
    server.reply(json_reply(status, {"error": {"message": LEAK, "type": "x"}}))

    with pytest.raises(ProviderError) as caught:
        list(make_client(server).stream(ask()))

    assert caught.value.kind == kind
    assert str(status) in str(caught.value)
    assert LEAK not in str(caught.value) and LEAK not in repr(caught.value)
    # Raised `from None`: a logged traceback does not carry the SDK's exception either.
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert LEAK not in caplog.text


def test_a_slow_provider_is_a_timeout(server):
    server.reply(json_reply(200, {}, delay=1.0))

    with pytest.raises(ProviderError) as caught:
        list(make_client(server, timeout=0.2).stream(ask()))

    assert caught.value.kind == "timeout"


def test_an_unreachable_provider_is_an_api_error():
    with WireServer() as gone:
        url = gone.url
    client = OpenAICompatClient(model="qwen3", api_key="t", base_url=url, max_retries=0)

    with pytest.raises(ProviderError) as caught:
        list(client.stream(ask()))

    assert caught.value.kind == "api"


def test_client_for_infomaniak_uses_the_token_and_the_configured_base_url(server, settings):
    settings.INFOMANIAK_AI_TOKEN = "ik-token"
    settings.INFOMANIAK_AI_PRODUCT_ID = "4242"
    settings.INFOMANIAK_AI_BASE_URL = server.url + "/2/ai/4242/openai/v1"
    server.reply(openai_sse([openai_chunk({"content": "Grüezi"}, finish_reason="stop")]))

    client = client_for(model_option("infomaniak-apertus-70b"), max_retries=0)
    events = list(client.stream(ask()))

    assert events[0] == TextDelta("Grüezi")
    assert server.requests[0].path == "/2/ai/4242/openai/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == "Bearer ik-token"
    assert server.requests[0].json()["model"] == "swiss-ai/Apertus-70B-Instruct-2509"
