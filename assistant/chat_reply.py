"""CHLOVA's synchronous reply: `POST /api/chat` with `Prefer: wait=N` (RFC 7240).

The turn still runs in a worker; the request only waits, asynchronously (no
thread held while it waits), for the turn to end within N seconds, then
answers 200 `{reply, conversationId, turnId}` (a failed turn: its notice and
`failureKind` too). Past N seconds it answers the usual 202.
"""

import asyncio
import re
from uuid import UUID

from asgiref.sync import sync_to_async
from django.conf import settings

from assistant import live
from assistant.models import Turn
from assistant.progress import Cursor
from conversations.models import Message

MAX_WAIT_SECONDS = 60

ENDED = (Turn.Status.DONE, Turn.Status.FAILED)

# One preference of a Prefer header: a token, optionally `=value` (token or
# quoted string), then parameters after `;` that `wait` does not use.
_PREFERENCE = re.compile(r'^\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*("[^"]*"|[^;,\s]*))?')


def requested_wait(header: str | None) -> int | None:
    """Seconds to wait from a Prefer header, capped at MAX_WAIT_SECONDS; None
    when there is no valid `wait` preference (then the request is answered as
    usual: a preference that can't be honoured is ignored, RFC 7240 §2).

    Without any (CHLOVA's client sends none), the deployment's
    ASSISTANT_CHAT_WAIT_SECONDS (0: answer 202 at once, the default);
    `Prefer: respond-async` (this product's pages send it) never waits."""
    default = min(settings.ASSISTANT_CHAT_WAIT_SECONDS, MAX_WAIT_SECONDS) or None
    if not header:
        return default
    for preference in header.split(","):
        match = _PREFERENCE.match(preference)
        if match is not None and match.group(1).lower() == "respond-async":
            default = None  # an explicit wait still wins
        if match is None or match.group(1).lower() != "wait":
            continue
        value = (match.group(2) or "").strip('"')
        if not (value.isascii() and value.isdigit()):  # "²" is a digit to str.isdigit, not to int()
            return None
        return min(int(value), MAX_WAIT_SECONDS)
    return default


def turn_reply(turn_id: UUID) -> dict | None:
    """The reply of an ended turn for CHLOVA's contract; None while it runs."""
    turn = Turn.objects.filter(id=turn_id).only("id", "thread_id", "status", "failure_kind").first()
    if turn is None or turn.status not in ENDED:
        return None
    final = (
        Message.objects.filter(turn_id=turn.id, role=Message.Role.ASSISTANT)
        .order_by("-seq").only("content", "notice").first()
    )
    body = {"reply": final.content if final else "", "conversationId": str(turn.thread_id), "turnId": str(turn.id)}
    if turn.status == Turn.Status.FAILED:
        body.update(notice=final.notice if final else "", failureKind=turn.failure_kind or None)
    return body


async def wait_for_reply(turn_id: UUID, seconds: float) -> dict | None:
    """The turn's reply once it has ended, or None after `seconds`.

    Follows the turn on the same events as its stream (assistant.live: Redis
    pub/sub when configured, else the database polled), so a waiting request
    costs no query while the worker is silent; reads the reply once at the end.
    """
    try:
        async with asyncio.timeout(seconds):
            async for _event in live.follow_turn(turn_id, Cursor()):
                pass  # only its end matters here
    except TimeoutError:
        return None
    return await read_reply(turn_id)


def _reply_and_release(turn_id: UUID) -> dict | None:
    try:
        return turn_reply(turn_id)
    finally:
        live.release_database()


read_reply = sync_to_async(_reply_and_release)
