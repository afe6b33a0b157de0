"""Real HTTP servers on 127.0.0.1 that speak the model providers' wire protocols,
so tests exercise the official SDKs end to end (their HTTP, SSE and AWS
event-stream decoding), not a mock of them.

A WireServer answers each request with the next scripted Reply and records what
it received, so a test can assert on the body the SDK sent.
"""

import base64
import json
import struct
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content_type: str = "application/json"
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering, to provoke client timeouts
    chunk_size: int = 0  # >0: write the body in pieces this small, flushed one by one
    # Stop writing for `pause` seconds once the first `pause_after` bytes are out
    # (a model composing a long tool input); WireServer.pausing is set meanwhile.
    pause_after: int = 0
    pause: float = 0.0
    interval: float = 0.0  # seconds between pieces (chunk_size): a model that streams slowly


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class _Server(ThreadingHTTPServer):
    request_queue_size = 512  # hundreds of turns connecting at once (bench/turns.py)


class WireServer:
    def __init__(self, responder: "Callable[[RecordedRequest], Reply] | None" = None) -> None:
        # `responder`: answers each request from what it holds (a model that reads it), instead of a script.
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self.pausing = threading.Event()
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        # A short poll interval: shutdown() waits for it, once per test.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def reply(self, *replies: Reply) -> None:
        """Queue answers, one per incoming request, in order."""
        with self._lock:
            self._replies.extend(replies)

    def __enter__(self) -> "WireServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self.responder is not None:
                return self.responder(request)
            if not self._replies:
                return json_reply(599, {"error": "the test scripted no reply for this request"})
            return self._replies.pop(0)


def _handler_for(server: WireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: a streamed body ends when the connection closes, as SSE may.
        protocol_version = "HTTP/1.0"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = server._next(RecordedRequest("POST", self.path, headers, body))
            time.sleep(reply.delay)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if not reply.chunk_size:
                self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self._write(reply)

        def _write(self, reply: Reply) -> None:
            if reply.pause_after:
                self._write_pieces(reply, reply.body[: reply.pause_after])
                server.pausing.set()
                time.sleep(reply.pause)
                server.pausing.clear()
                self._write_pieces(reply, reply.body[reply.pause_after :])
            else:
                self._write_pieces(reply, reply.body)

        def _write_pieces(self, reply: Reply, body: bytes) -> None:
            size = reply.chunk_size or len(body) or 1
            try:
                for start in range(0, len(body), size):
                    if start and reply.interval:
                        time.sleep(reply.interval)
                    self.wfile.write(body[start : start + size])
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    return Handler


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None, delay: float = 0.0) -> Reply:
    return Reply(status=status, body=json.dumps(body).encode(), headers=headers or {}, delay=delay)


# --- Anthropic Messages ------------------------------------------------------


def anthropic_events(
    *,
    text: tuple[str, ...] = (),
    tool_calls: tuple[tuple[str, str, tuple[str, ...]], ...] = (),
    stop_reason: str = "end_turn",
    start_usage: dict[str, int] | None = None,
    final_usage: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """The events of one streamed message: a text block sent in the `text`
    pieces, then one tool_use block per (id, name, json fragments)."""
    usage = start_usage or {"input_tokens": 10, "output_tokens": 1}
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        },
        {"type": "ping"},
    ]
    index = 0
    if text:
        events.append({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        events += [
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
            for piece in text
        ]
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    for offset, (call_id, name, fragments) in enumerate(tool_calls):
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        events.append({"type": "content_block_start", "index": index + offset, "content_block": block})
        events += [
            {
                "type": "content_block_delta",
                "index": index + offset,
                "delta": {"type": "input_json_delta", "partial_json": fragment},
            }
            for fragment in fragments
        ]
        events.append({"type": "content_block_stop", "index": index + offset})
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": final_usage or {"output_tokens": 20},
        },
        {"type": "message_stop"},
    ]
    return events


def anthropic_sse(events: list[dict[str, Any]], chunk_size: int = 17) -> Reply:
    """Server-sent events with `event:` lines (the SDK skips frames without
    one), cut in small pieces so frames straddle reads."""
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    return Reply(content_type="text/event-stream", body=body, chunk_size=chunk_size)


# --- OpenAI chat completions -------------------------------------------------


def openai_chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish_reason}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [choice],
    }


def openai_usage_chunk(prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> dict[str, Any]:
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_tokens},
    }
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [],
        "usage": usage,
    }


def openai_tool_fragment(index: int, arguments: str, call_id: str = "", name: str = "") -> dict[str, Any]:
    """One piece of a streamed tool call: only the first carries id and name."""
    fragment: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        fragment.update(id=call_id, type="function")
        fragment["function"]["name"] = name
    return openai_chunk({"tool_calls": [fragment]})


def openai_completion(content: str = "p") -> Reply:
    """A non-streamed chat completion (what a one-token key verification gets)."""
    return json_reply(200, {
        "id": "chatcmpl-v", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    })


def openai_sse(chunks: list[dict[str, Any]], chunk_size: int = 23) -> Reply:
    """Data-only server-sent events, ending with `data: [DONE]`."""
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return Reply(content_type="text/event-stream", body=body.encode(), chunk_size=chunk_size)


# --- AWS Bedrock event stream --------------------------------------------------


def _string_header(name: str, value: str) -> bytes:
    # name length (1 byte), name, value type 7 (string), value length (2 bytes), value
    raw_name, raw_value = name.encode(), value.encode()
    return bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value


def event_stream_frame(payload: bytes, headers: dict[str, str]) -> bytes:
    """One AWS event-stream message: prelude (total length, headers length,
    CRC32 of both), headers, payload, CRC32 of everything before it."""
    encoded_headers = b"".join(_string_header(name, value) for name, value in headers.items())
    total = 12 + len(encoded_headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded_headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded_headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_chunk_frame(event: dict[str, Any]) -> bytes:
    """A Bedrock `chunk` event carrying one Anthropic stream event, base64-encoded."""
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode()
    headers = {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}
    return event_stream_frame(payload, headers)


def bedrock_event_stream(events: list[dict[str, Any]], chunk_size: int = 29) -> Reply:
    body = b"".join(bedrock_chunk_frame(event) for event in events)
    return Reply(content_type="application/vnd.amazon.eventstream", body=body, chunk_size=chunk_size)
