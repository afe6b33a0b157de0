"""The bounded assistant turn, in its phases.

A worker claims a queued turn (claim_turn), then loops, step by step, until
the model ends or a bound is hit:

1. build the request: the person's rights, the model and the client checked
   at the start, the history read once; each step's request made from it and
   its cost's upper bound held in credits (assistant/turn/request.py);
2. stream the model: its text written to the database as it arrives, no
   database connection held while waiting (assistant/turn/stream.py);
3. run the tool calls by class, each stored as a ToolCall, the trifecta
   guard's taint following what the model sees (assistant/turn/tool_calls.py);
4. settle: the turn's end, its thread back to idle and its credits closed in
   one transaction under the turn's row lock (assistant/turn/settle.py).

What the phases share (counters, hold, taint, deadline, the Stop's safe
points) is assistant/turn/state.py; how a turn ends (outcomes, notices)
assistant/turn/outcome.py. Slow I/O (the model) never runs inside a database
transaction.
"""

import logging
import time
from collections.abc import Callable
from uuid import UUID

from django.conf import settings
from django.utils import timezone

from assistant.models import Turn
from assistant.turn.outcome import (
    CANCELLED_NOTICE,
    NOTICES,
    OWN_KEY_REFUSED_NOTICE,
    Outcome,
    ToolCrashed,
    TurnCancelled,
    TurnStopped,
    bounds_notice,
)
from assistant.turn.request import RequestPhase
from assistant.turn.settle import ThreadAfterTurn, finish_turn, own_key
from assistant.turn.stream import StreamPhase
from assistant.turn.summarize import SummaryPhase
from assistant.turn.tool_calls import ToolCallPhase
from assistant_engine.foundation.prepared import PreparedUpdate
from assistant_engine.providers.clients.base import ModelClient, ProviderError, Usage

logger = logging.getLogger("assistant.turn")


# --- Entry point (the Celery task calls this) ---------------------------------


# Compiled once: every turn runs it (assistant_engine.foundation.prepared).
_claim = PreparedUpdate(
    Turn,
    lambda turn_id, now: (Turn.objects.filter(id=turn_id, status=Turn.Status.QUEUED),
                          {"status": Turn.Status.RUNNING, "started_at": now}),
    Turn._meta.pk, Turn._meta.get_field("started_at"),
)


def claim_turn(turn_id: UUID) -> bool:
    """Queued → running, once: a twice-delivered task finds nothing to claim."""
    return _claim(turn_id, timezone.now()) == 1


def run_turn(turn_id: UUID, *, client: ModelClient | None = None, clock: Callable[[], float] = time.monotonic):
    if not claim_turn(turn_id):
        logger.info("turn_not_claimed", extra={"turn_id": str(turn_id)})
        return None
    # With its thread: whether the history is windowed (continuous) is read once.
    turn = Turn.objects.select_related("thread").get(id=turn_id)
    started = clock()
    runner = None
    try:
        runner = TurnRunner(turn, client=client, clock=clock)
        outcome = runner.run()
    except Exception:
        logger.exception("turn_internal_error", extra={"turn_id": str(turn_id)})
        outcome = Outcome(Turn.Status.FAILED, Turn.FailureKind.INTERNAL, NOTICES[Turn.FailureKind.INTERNAL])
    # What the model was paid for is charged even when the turn then crashed.
    usage = runner.usage if runner else Usage()
    # A turn that did not end well may have stopped between a write and the
    # loop's count of it: the thread's size is then measured again.
    thread_after = runner.thread_after() if runner and outcome.status == Turn.Status.DONE else None
    if runner and thread_after is None and runner.context is not None:
        thread_after = ThreadAfterTurn(runner.context.next_seq, None, runner.last_reply_id)
    # 4. settle: the end, the thread and the credits at once, under the turn's row lock.
    finish_turn(turn_id, outcome, usage=usage if runner else None, thread_after=thread_after,
                progress=runner.progress() if runner else None,
                key_source=runner.key_source if runner else "", loop_turn=runner.turn if runner else None)
    logger.info(
        "turn_finished",
        extra={
            "turn_id": str(turn_id),
            "thread_id": str(turn.thread_id),
            "organization_id": turn.organization_id,
            "status": outcome.status,
            "failure_kind": outcome.failure_kind,
            "steps": runner.steps if runner else 0,
            "tool_calls": runner.calls if runner else 0,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "duration_ms": round((clock() - started) * 1000),
        },
    )
    return outcome


class TurnRunner(RequestPhase, SummaryPhase, StreamPhase, ToolCallPhase):
    """One turn's loop: phases 1 to 3, step after step; run_turn settles (4)."""

    def run(self) -> Outcome:
        try:
            self.member = self._verified_member()
            self._check_model()
            self._open_client()
            return self._loop()
        except TurnStopped as stop:
            return Outcome(Turn.Status.FAILED, stop.kind, stop.notice)
        except TurnCancelled:
            self.usage = self.usage + self.unreported_usage
            return Outcome(Turn.Status.CANCELLED, "", CANCELLED_NOTICE)
        except ProviderError as error:
            kind = Turn.FailureKind.TIMEOUT if error.kind == "timeout" else Turn.FailureKind.API
            logger.warning("turn_provider_error", extra={"turn_id": str(self.turn.id), "provider_error": error.kind})
            notice = OWN_KEY_REFUSED_NOTICE if error.kind == "auth" and own_key(self.turn) else NOTICES[kind]
            return Outcome(Turn.Status.FAILED, kind, notice)
        except ToolCrashed:
            return Outcome(Turn.Status.FAILED, Turn.FailureKind.TOOL, NOTICES[Turn.FailureKind.TOOL])

    def _loop(self) -> Outcome:
        self._load_history()
        for _ in range(settings.ASSISTANT_MAX_STEPS):
            self._stop_if_cancelled_before_call()
            request = self._next_request()  # 1. build the request, its cost held
            reply, calls = self._step(request)  # 2. stream the model
            if not calls:
                self.context.append_reply(reply.content, [])
                return Outcome(Turn.Status.DONE)
            if len(calls) > settings.ASSISTANT_MAX_TOOL_CALLS_PER_STEP:
                self._store_refused_calls(reply, calls)
                raise TurnStopped(Turn.FailureKind.BOUNDS, bounds_notice(
                    f"{settings.ASSISTANT_MAX_TOOL_CALLS_PER_STEP} tool calls in one step"))
            self.context.append_reply(reply.content, self._run_calls(reply, calls))  # 3. run the tool calls
            self._check_time()
        raise TurnStopped(Turn.FailureKind.BOUNDS, bounds_notice(f"{settings.ASSISTANT_MAX_STEPS} steps"))
