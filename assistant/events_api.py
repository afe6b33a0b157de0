"""GET /api/turns/{id}/events: the turn's progress as Server-Sent Events.

The request is checked in a thread once (the person's turn, the cursor); the
stream itself is an async generator over Redis or the database
(assistant.live) that holds no thread and no connection while it waits."""

import json
from uuid import UUID

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from rest_framework import renderers
from sse_starlette.event import ServerSentEvent

from assistant import events_schema, live, progress
from assistant.api import turn_or_404
from assistant_engine.foundation.api_errors import bad_request
from assistant_engine.foundation.openapi import errors, extend_schema
from assistant_engine.organizations.api import ORGANIZATION_PARAMETER, MemberAPIView


class TurnEventsView(MemberAPIView):
    """Authenticates and checks the turn is the person's (in a thread, once);
    the stream itself is an async generator that holds no thread while it waits."""

    renderer_classes = [renderers.JSONRenderer]

    def perform_content_negotiation(self, request, force=False):
        # An error is JSON, as documented, whatever the Accept (EventSource asks
        # for text/event-stream only); the stream itself is not rendered by DRF.
        return self.renderer_classes[0](), "application/json"

    @extend_schema(
        operation_id="turn_events", parameters=[ORGANIZATION_PARAMETER],
        responses={(200, "text/event-stream"): events_schema.EVENT},
        extensions=errors("invalid_last_event_id", "not_found"),
        description="Server-Sent Events of the turn's progress (`message_started`, `text`, `tool_call_started`, "
        "`tool_call_finished`, `card_proposed`, `turn_ended`); `Last-Event-ID` resumes. The stream stays open "
        "until the turn ends (or for STREAM_MAX_SECONDS: then reconnect with the last id).",
    )
    def get(self, request, turn_id: str):
        turn = turn_or_404(self.member, turn_id)
        cursor = resume_cursor(request)
        if isinstance(request._request, ASGIRequest):
            body = sse_body(turn.id, cursor)
        else:  # WSGI (`make run`'s dev server): Django would gather an async stream before sending it
            body = map(sse_frame, live.poll_turn_blocking(turn.id, cursor))
        response = StreamingHttpResponse(body, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # a reverse proxy must not hold the events back
        return response


def resume_cursor(request) -> progress.Cursor:
    # The header (EventSource's own reconnection) wins over the query
    # parameter (a stream the page reopened itself).
    raw = request.headers.get("Last-Event-ID") or request.query_params.get("lastEventId", "")
    if not raw:
        return progress.Cursor()
    try:
        return progress.Cursor.decode(raw)
    except progress.BadCursor:
        raise bad_request("invalid_last_event_id", "Last-Event-ID is not an id this stream sent.",
                          {"Last-Event-ID": ["Not an event id of this stream."]}) from None


async def sse_body(turn_id: UUID, cursor: progress.Cursor):
    async for event in live.follow_turn(turn_id, cursor):
        yield sse_frame(event)


def sse_frame(event: progress.Event | None) -> bytes:
    if event is None:
        return ServerSentEvent(comment="keep-alive").encode()
    return ServerSentEvent(data=json.dumps(event.data, ensure_ascii=False), event=event.name, id=event.id).encode()


def async_endpoint(view):
    """`view` (a DRF view) behind an async view: under ASGI the request is
    checked in a thread once, then its async stream runs on the event loop.
    Keeps `cls` so the OpenAPI schema still documents it."""
    def check_then_release(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        if response.streaming:  # the stream reads the database on its own when it must
            live.release_database()
        return response

    checked = sync_to_async(check_then_release)

    async def endpoint(request, *args, **kwargs):
        async with live.read_slot():  # a crowd of streams opening reads a few at a time, as it follows
            return await checked(request, *args, **kwargs)

    endpoint.cls, endpoint.initkwargs, endpoint.csrf_exempt = view.cls, view.initkwargs, True
    return endpoint
