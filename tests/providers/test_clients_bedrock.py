"""Claude on AWS Bedrock against a local server that answers with AWS
event-stream binary frames, decoded by the real `anthropic` SDK and botocore."""

import json
import logging

import pytest

from assistant_engine.providers.catalog import client_for, model_option
from assistant_engine.providers.clients.base import (
    ModelRequest,
    ProviderError,
    Stop,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
    UserText,
)
from tests.fakes.wire_servers import (
    Reply,
    WireServer,
    anthropic_events,
    bedrock_chunk_frame,
    bedrock_event_stream,
    event_stream_frame,
    json_reply,
)

SEARCH = ToolSpec("search_notes", "Search the notes", {"type": "object", "properties": {"query": {"type": "string"}}})
LEAK = "RAW-PROVIDER-TEXT echoing the secret prompt"
HAIKU = "eu.anthropic.claude-haiku-4-5-20251001-v1:0"


@pytest.fixture
def server(monkeypatch, settings):
    settings.BEDROCK_REGION = "eu-central-2"
    settings.BEDROCK_API_KEY = "bedrock-key-123"
    with WireServer() as wire:
        # The SDK's own override of the regional endpoint.
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", wire.url)
        yield wire


def haiku():
    return client_for(model_option("bedrock-claude-haiku-4-5"), max_retries=0)


def ask() -> ModelRequest:
    return ModelRequest(system="Be brief.", history=[UserText("find budget")], tools=[SEARCH], max_tokens=321)


def test_streams_events_decoded_from_event_stream_frames(server):
    events = anthropic_events(
        text=("Let me ", "look."),
        tool_calls=(("toolu_1", "search_notes", ('{"que', 'ry": "budget"}')),),
        stop_reason="tool_use",
        start_usage={"input_tokens": 50, "output_tokens": 1, "cache_read_input_tokens": 7},
        final_usage={"output_tokens": 42},
    )
    server.reply(bedrock_event_stream(events))

    streamed = list(haiku().stream(ask()))

    assert streamed == [
        TextDelta("Let me "),
        TextDelta("look."),
        ToolCallEvent("toolu_1", "search_notes", {"query": "budget"}),
        Usage(input_tokens=50, output_tokens=42, cache_read_tokens=7),
        Stop("tool_use", raw_reason="tool_use"),
    ]


def test_request_goes_to_the_eu_profile_streaming_url_with_the_bearer_key(server):
    server.reply(bedrock_event_stream(anthropic_events(text=("ok",))))

    list(haiku().stream(ask()))

    request = server.requests[0]
    assert request.path == f"/model/{HAIKU}/invoke-with-response-stream"
    assert request.headers["authorization"] == "Bearer bedrock-key-123"
    body = request.json()
    # On Bedrock the model and the stream flag live in the URL, not the body.
    assert "model" not in body and "stream" not in body
    assert "anthropic_version" in body
    assert body["max_tokens"] == 321
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert [tool["name"] for tool in body["tools"]] == ["search_notes"]
    assert body["messages"][0]["content"][0]["text"] == "find budget"


def test_sonnet_uses_its_own_eu_profile(server):
    server.reply(bedrock_event_stream(anthropic_events(text=("ok",))))

    list(client_for(model_option("bedrock-claude-sonnet-4-6"), max_retries=0).stream(ask()))

    assert server.requests[0].path == "/model/eu.anthropic.claude-sonnet-4-6/invoke-with-response-stream"


@pytest.mark.parametrize(("status", "kind"), [(400, "api"), (403, "auth"), (429, "rate_limit"), (500, "api")])
def test_error_statuses_map_to_provider_error_kinds_without_the_provider_text(server, caplog, status, kind):
    caplog.set_level(logging.DEBUG)
    server.reply(json_reply(status, {"message": LEAK}, headers={"x-amzn-ErrorType": "SomeException"}))

    with pytest.raises(ProviderError) as caught:
        list(haiku().stream(ask()))

    assert caught.value.kind == kind
    assert LEAK not in str(caught.value) and LEAK not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert LEAK not in caplog.text


def test_an_exception_frame_in_the_middle_of_the_stream_is_an_api_error_without_its_text(server, caplog):
    caplog.set_level(logging.DEBUG)
    events = anthropic_events(text=("Hal",))[:4]  # message_start, ping, block start, one delta
    exception = event_stream_frame(
        json.dumps({"message": LEAK}).encode(),
        {
            ":message-type": "exception",
            ":exception-type": "throttlingException",
            ":content-type": "application/json",
        },
    )
    body = b"".join(bedrock_chunk_frame(event) for event in events) + exception
    server.reply(Reply(content_type="application/vnd.amazon.eventstream", body=body, chunk_size=31))

    streamed = []
    with pytest.raises(ProviderError) as caught:
        for event in haiku().stream(ask()):
            streamed.append(event)

    assert streamed == [TextDelta("Hal")]
    assert caught.value.kind == "api"
    assert LEAK not in str(caught.value) and LEAK not in caplog.text


def test_a_region_outside_the_eu_is_refused_before_any_request(server, settings):
    settings.BEDROCK_REGION = "eu-west-2"

    with pytest.raises(ProviderError) as caught:
        haiku()

    assert caught.value.kind == "refused"
    assert "eu-west-2" in str(caught.value)
    assert server.requests == []


def test_the_conversation_is_not_logged_even_at_debug_level(server, caplog):
    # botocore logs every decoded frame (the replies, base64) at DEBUG.
    caplog.set_level(logging.DEBUG)
    server.reply(bedrock_event_stream(anthropic_events(text=("a private ", "reply"))))

    list(haiku().stream(ask()))

    assert "find budget" not in caplog.text
    assert not [r for r in caplog.records if r.name.startswith(("anthropic", "botocore")) and r.levelno < logging.INFO]
