"""A local fake of the Telegram Bot API, over real HTTP, so python-telegram-bot
runs for real (its request encoding, its error mapping: a 429 becomes
RetryAfter). It answers the methods the surface uses, records each call
(method, decoded parameters, arrival time) and can fail the next call of a
method once with a scripted status."""

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

TOKEN = "123456:TEST-token"  # noqa: S105 (the fake's own token)


@dataclass
class BotCall:
    method: str
    params: dict[str, Any]
    at: float  # time.monotonic() when it arrived
    answered: int  # the HTTP status the fake answered


class FakeBotApi:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.calls: list[BotCall] = []
        self._failures: dict[str, list[list]] = {}  # method -> [calls to let through first, status, body]
        self._next_message_id = 1000
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def fail_next(self, method: str, status: int, body: dict, *, after: int = 0) -> None:
        """The next call of `method` (or the one after `after` more) gets `status`."""
        with self._lock:
            self._failures.setdefault(method, []).append([after, status, body])

    def of(self, method: str, *, ok_only: bool = True) -> list[BotCall]:
        with self._lock:
            return [c for c in self.calls if c.method == method and (c.answered == 200 or not ok_only)]

    def texts_to(self, chat_id: int) -> list[str]:
        """What the chat shows now: each sent message's latest text."""
        with self._lock:
            shown: dict[int, str] = {}
            for call in self.calls:
                if call.answered != 200 or call.params.get("chat_id") != chat_id:
                    continue
                if call.method == "sendMessage":
                    shown[call.params["_message_id"]] = call.params["text"]
                elif call.method == "editMessageText":
                    shown[call.params["message_id"]] = call.params["text"]
            return [shown[key] for key in sorted(shown)]

    def __enter__(self) -> "FakeBotApi":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, method: str, params: dict[str, Any]) -> tuple[int, dict]:
        with self._lock:
            failures = self._failures.get(method)
            if failures and failures[0][0] > 0:
                failures[0][0] -= 1
            elif failures:
                _, status, body = failures.pop(0)
                self.calls.append(BotCall(method, params, time.monotonic(), status))
                return status, body
            result = self._result(method, params)
            self.calls.append(BotCall(method, params, time.monotonic(), 200))
            return 200, {"ok": True, "result": result}

    def _result(self, method: str, params: dict[str, Any]) -> Any:
        if method == "getMe":
            return {"id": 123456, "is_bot": True, "first_name": "Assistant", "username": "assistant_bot"}
        if method in ("sendMessage", "editMessageText"):
            if method == "sendMessage":
                self._next_message_id += 1
                params["_message_id"] = self._next_message_id
            return {
                "message_id": params.get("message_id") or params["_message_id"], "date": int(time.time()),
                "chat": {"id": params["chat_id"], "type": "private"}, "text": params.get("text", ""),
                "from": {"id": 123456, "is_bot": True, "first_name": "Assistant"},
            }
        return True  # sendChatAction, answerCallbackQuery, setWebhook


def _decode(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _handler_for(api: FakeBotApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode()
            prefix = f"/bot{api.token}/"
            if not self.path.startswith(prefix):
                return self._send(404, {"ok": False, "error_code": 404, "description": "Not Found"})
            if self.headers.get("Content-Type", "").startswith("application/json"):
                params = json.loads(body or "{}")
            else:
                params = {key: _decode(value) for key, value in parse_qsl(body)}
            status, answer = api._answer(self.path[len(prefix):], params)
            self._send(status, answer)

        def _send(self, status: int, answer: dict) -> None:
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def too_many_requests(retry_after: int = 1) -> tuple[int, dict]:
    return 429, {"ok": False, "error_code": 429, "description": f"Too Many Requests: retry after {retry_after}",
                 "parameters": {"retry_after": retry_after}}
