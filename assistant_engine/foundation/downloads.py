"""Streamed downloads (exports) that stay streamed under ASGI.

Under ASGI, Django serves a StreamingHttpResponse built from a plain
(synchronous) iterator by reading the whole iterator into memory first
("StreamingHttpResponse must consume synchronous iterators in order to serve
them asynchronously"): an export would then hold its whole document again.
So under ASGI the chunks are pulled one at a time in the request's sync thread
(where the ORM runs) and handed over as an async iterator; under WSGI (the
development server, the test client) the plain iterator is served as is.
"""

from collections.abc import AsyncIterator, Iterable, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse

_END = object()


def download_response(request: HttpRequest, chunks: Iterable[str], *, content_type: str,
                      filename: str) -> StreamingHttpResponse:
    http_request = getattr(request, "_request", request)  # a DRF Request wraps Django's
    served_async = isinstance(http_request, ASGIRequest)
    body = _pulled_in_sync_thread(iter(chunks)) if served_async else chunks
    response = StreamingHttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


async def _pulled_in_sync_thread(chunks: Iterator[str]) -> AsyncIterator[str]:
    pull = sync_to_async(next, thread_sensitive=True)
    try:
        while (chunk := await pull(chunks, _END)) is not _END:
            yield chunk
    finally:
        close = getattr(chunks, "close", None)  # a generator's finally (its cursor) runs in the ORM's thread
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()
