"""Reading a streamed response (StreamingHttpResponse) in a test."""

import json


def streamed_text(response) -> str:
    assert response.streaming, "expected a streamed response"
    return b"".join(response.streaming_content).decode()


def streamed_json(response):
    return json.loads(streamed_text(response))
