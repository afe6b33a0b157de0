"""The bounded assistant turn.

A worker claims a queued turn, then loops: build the request from the stored
history, stream the model (writing its text to the database as it arrives),
run the tool calls by class, store each ToolCall, until the model ends or a
bound is hit. The turn ends settled (credits) with the thread back to idle.
Slow I/O (the model) never runs inside a database transaction.
"""

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, replace
from functools import lru_cache
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext_noop

from assistant import live, proposals
from assistant.clients.base import (
    ModelClient,
    ModelRequest,
    ProviderError,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
)
from assistant.history import (
    Context,
    StoredCall,
    history_bytes,
    history_parts,
    in_window,
    load_context,
    request_token_bound,
    uses_window,
)
from assistant.instructions import system_prompt
from assistant.models import ENDED_STATUSES, Turn
from assistant.org_models import DEPLOYMENT, option_allowed, turn_key
from assistant.pacing import PAUSE, paced
from assistant.providers import ModelOption, client_for, model_option
from assistant.tools import framework
from assistant.tools.registry import all_tools, get_tool
from assistant.trifecta import Route, Taint, route_call, taint_after, taint_union
from conversations.models import Message, Thread, ToolCall
from credits.money import call_bound_micros, charged_micros, micros_from_credits, request_micros
from credits.services import (
    CreditsExhausted,
    MemberCapReached,
    credits_keep_on_stuck,
    credits_release,
    credits_reserve_more,
    credits_settle,
)
from organizations.members import Member
from organizations.models import Membership

logger = logging.getLogger("assistant.turn")

FLUSH_SECONDS = 0.25
# A reply's first text is written at most this long after its step started:
# a model that answers at once shows its first words at once (issue 21), and a
# step that ends within it is still one INSERT.
FIRST_TEXT_SECONDS = 0.02

# Stored in English with the reply; the browser shows them in the person's language (web.presenters).
NOTICES = {
    Turn.FailureKind.API: gettext_noop("The model provider did not answer properly. Please try again in a moment."),
    Turn.FailureKind.TIMEOUT: gettext_noop("This reply took too long and was stopped."),
    Turn.FailureKind.TOOL: gettext_noop("A tool failed unexpectedly, so the reply was stopped."),
    Turn.FailureKind.INTERNAL: gettext_noop("Something went wrong on our side, so the reply was stopped."),
    Turn.FailureKind.QUEUE: gettext_noop("The assistant could not start this reply. Please try again."),
    Turn.FailureKind.CREDITS: gettext_noop("Your organization's credits ran out during this reply, so it was stopped."),
    Turn.FailureKind.SUSPENDED: gettext_noop(
        "Your membership in this organization is suspended, so this reply was not started."),
}
CAP_NOTICE = gettext_noop("You reached your monthly limit in this organization during this reply, so it was stopped.")
OWN_KEY_REFUSED_NOTICE = gettext_noop(
    "The model provider refused your organization's own API key. An organization admin should check the key "
    "on the organization page."
)
MODEL_NOT_ALLOWED_NOTICE = gettext_noop(
    "Your organization no longer allows this conversation's model. Choose another model and send again.")
CANCELLED_NOTICE = gettext_noop("You stopped this reply.")
# How often, at most, the loop reads the Stop flag while a model streams (or pauses).
CANCEL_CHECK_SECONDS = 0.5
CEILING_NOTICE = gettext_noop(
    "This reply reached the most one reply may cost, so it was stopped. You can ask to continue.")


class TurnStopped(Exception):
    """Ends the loop with a failure kind and a notice for the person."""

    def __init__(self, kind: str, notice: str):
        super().__init__(kind)
        self.kind = kind
        self.notice = notice


class TurnCancelled(Exception):
    """The person pressed Stop (Turn.cancel_requested_at): raised at a safe point."""


class ToolCrashed(Exception):
    """A tool raised something other than a ToolError: a bug, not a model mistake."""


@dataclass
class Outcome:
    status: str
    failure_kind: str = ""
    notice: str = ""


def bounds_notice(what: str) -> str:
    return f"This reply stopped at a limit: {what}. You can ask the assistant to continue."


# --- Entry point (the Celery task calls this) ---------------------------------


def claim_turn(turn_id: UUID) -> bool:
    """Queued → running, once: a twice-delivered task finds nothing to claim."""
    return (
        Turn.objects.filter(id=turn_id, status=Turn.Status.QUEUED).update(
            status=Turn.Status.RUNNING, started_at=timezone.now()
        )
        == 1
    )


@lru_cache(maxsize=8)
def _specs_for(toolsets: tuple[str, ...]) -> tuple[list[ToolSpec], int]:
    specs = framework.tool_specs(all_tools())
    return specs, len(json.dumps([vars(spec) for spec in specs]).encode())


def tool_specs_and_size() -> tuple[list[ToolSpec], int]:
    """The tools' specs as sent to the model, and their size: per process,
    since declarations do not change between turns (rebuilding the JSON
    Schemas took ~7 ms a turn). Keyed by the setting, as the registry is."""
    return _specs_for(tuple(settings.ASSISTANT_TOOLSETS))


# What shapes a deployment's SDK client: a change of any makes a new one.
_CLIENT_SETTINGS = (
    "DEBUG", "ASSISTANT_ALLOW_US_PROCESSING", "ANTHROPIC_API_KEY", "BEDROCK_API_KEY", "BEDROCK_REGION",
    "INFOMANIAK_AI_TOKEN", "INFOMANIAK_AI_PRODUCT_ID", "INFOMANIAK_AI_BASE_URL",
)
_CLIENT_ENVIRONMENT = ("ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "OPENAI_BASE_URL")


@lru_cache(maxsize=16)
def _client_of(option_id: str, shape: tuple) -> ModelClient:
    return client_for(model_option(option_id))


def deployment_client(option: ModelOption) -> ModelClient:
    """The option's client with the deployment's own key, per process: the
    SDK's client (its HTTP connection pool) is reused from turn to turn. Keyed
    by the settings and environment that shape it. (An organization's own key
    is never kept here.)"""
    shape = tuple(getattr(settings, name, None) for name in _CLIENT_SETTINGS)
    # Locked: lru_cache does not hold concurrent misses back, and a worker's
    # threads (Celery's threads pool) starting together would each build one.
    with _CLIENT_LOCK:
        return _client_of(option.id, shape + tuple(os.environ.get(name) for name in _CLIENT_ENVIRONMENT))


_CLIENT_LOCK = threading.Lock()


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
    finish_turn(turn_id, outcome, usage=usage if runner else None, thread_after=thread_after,
                progress=runner.progress() if runner else None,
                key_source=runner.key_source if runner else "")
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


# How finish_turn closes a turn's credits.
SETTLE = "settle"  # the real cost (the turn ran)
STUCK = "stuck"  # the reservation kept as cost (the turn never finished: a killed worker)
RELEASE = "release"  # no cost (no model call was ever made)


@dataclass(frozen=True)
class ThreadAfterTurn:
    """What the loop knows of its thread at the end: the next seq, the
    history's size for the model (None: unknown) and the turn's last reply."""

    next_seq: int
    history_bytes: int | None
    last_reply_id: UUID | None


def finish_turn(
    turn_id: UUID, outcome: Outcome, *, usage: Usage | None, cost_micros: int | None = None,
    credits: str = SETTLE, expect_status: str | None = None, job: str = "run_turn",
    thread_after: ThreadAfterTurn | None = None, progress: dict | None = None, key_source: str = "",
) -> bool:
    """Record the end, free the thread and close the credits, all at once.

    `usage=None` keeps the usage the turn stored as it went. `thread_after`:
    what the loop knows of the thread; without it (a sweeper) the next seq is
    measured and the history's size marked unknown. With
    `expect_status`, only a turn still in that status is finished. Returns
    whether this call finished the turn: under the turn's row lock, a second
    caller (a redelivered task, a second sweeper) finds it finished and does
    nothing. `key_source` (which key paid) is recorded with the end, in the
    same write.
    """
    if credits not in (SETTLE, STUCK, RELEASE):
        raise ValueError(f"unknown way to close credits: {credits!r}")
    now = timezone.now()
    with transaction.atomic():
        turn = Turn.objects.select_for_update().get(id=turn_id)
        if turn.status in ENDED_STATUSES:
            return False
        if expect_status is not None and turn.status != expect_status:
            return False
        outcome = _after_a_stop(turn, outcome)
        if usage is not None:
            _store_usage(turn, usage)
        for field, value in (progress or {}).items():  # the last step's, not written yet
            setattr(turn, field, value)
        if key_source:
            turn.key_source = key_source
        if cost_micros is None and credits == SETTLE:
            cost_micros = request_micros(model_option(turn.model_option), _usage_of(turn))
        elif cost_micros is None:
            cost_micros = turn.reserved_micros if credits == STUCK else 0
        charged = charge_for(turn, cost_micros) if credits == SETTLE else None
        turn.status = outcome.status
        turn.failure_kind = outcome.failure_kind
        turn.finished_at = now
        turn.cost_micros = cost_micros
        turn.save()
        thread_after = thread_after or _measured_thread(turn)
        if outcome.notice:
            thread_after = _mark_last_reply(turn, outcome, thread_after)
        Thread.objects.filter(id=turn.thread_id).update(
            status=Thread.Status.IDLE, updated_at=now, last_activity_at=now,
            next_seq=thread_after.next_seq, history_bytes=thread_after.history_bytes,
        )
        if credits == SETTLE:
            credits_settle(turn_id=turn.id, cost_micros=cost_micros, charged_micros=charged, job=job)
        elif credits == STUCK:
            credits_keep_on_stuck(turn_id=turn.id, job=job)
        else:
            credits_release(turn_id=turn.id, reason="the turn never started", job=job)
    live.publish_turn_ended(turn_id)
    return True


def _after_a_stop(turn: Turn, outcome: Outcome) -> Outcome:
    """A Stop the person was told was accepted (turn_cancel's 202) wins over
    whatever the loop reached meanwhile, however fast the model finished:
    both take the turn's row lock, so either the Stop came first and the turn
    ends cancelled (its text kept), or the turn had ended and the Stop is
    refused (409 turn_ended)."""
    if turn.cancel_requested_at is None or outcome.status == Turn.Status.CANCELLED:
        return outcome
    logger.info("turn_cancel_settled", extra={"turn_id": str(turn.id), "reached": outcome.status})
    return Outcome(Turn.Status.CANCELLED, "", CANCELLED_NOTICE)


def own_key(turn: Turn) -> bool:
    return bool(turn.key_source) and turn.key_source != DEPLOYMENT


def charge_for(turn: Turn, cost_micros: int) -> int:
    """What the turn is charged in credits: its cost, or CREDITS_OWN_KEY_RATE of
    it when the organization's own key paid the provider."""
    return charged_micros(cost_micros, settings.CREDITS_OWN_KEY_RATE) if own_key(turn) else cost_micros


def _usage_of(turn: Turn) -> Usage:
    return Usage(turn.input_tokens, turn.output_tokens, turn.cache_write_tokens, turn.cache_read_tokens)


def _store_usage(turn: Turn, usage: Usage) -> None:
    turn.input_tokens = usage.input_tokens
    turn.output_tokens = usage.output_tokens
    turn.cache_write_tokens = usage.cache_write_tokens
    turn.cache_read_tokens = usage.cache_read_tokens


def _measured_thread(turn: Turn) -> ThreadAfterTurn:
    """For a turn finished without its loop (a sweeper): its thread as stored."""
    last = Message.objects.filter(thread_id=turn.thread_id).aggregate(last=Max("seq"))["last"]
    return ThreadAfterTurn(next_seq=0 if last is None else last + 1, history_bytes=None, last_reply_id=None)


def _mark_last_reply(turn: Turn, outcome: Outcome, thread_after: ThreadAfterTurn) -> ThreadAfterTurn:
    """Put the notice on the turn's last reply (created if the turn wrote none)."""
    status = Message.Status.FAILED if outcome.status == Turn.Status.FAILED else Message.Status.COMPLETE
    reply_id = thread_after.last_reply_id
    if reply_id is None:
        reply_id = (Message.objects.filter(turn_id=turn.id, role=Message.Role.ASSISTANT).order_by("-seq")
                    .values_list("id", flat=True).first())
    if reply_id is not None:
        Message.objects.filter(id=reply_id).update(status=status, notice=outcome.notice[:300])
        return thread_after
    if not turn.thread_id:
        return thread_after
    append_message(turn.thread_id, turn.id, role=Message.Role.ASSISTANT, content="", status=status,
                   notice=outcome.notice, seq=thread_after.next_seq)
    return replace(thread_after, next_seq=thread_after.next_seq + 1)


def append_message(
    thread_id: UUID, turn_id: UUID, *, role: str, content: str, status: str, notice: str = "",
    seq: int | None = None,
):
    """A message at the end of the thread (at `seq` when the caller knows it).
    Only the turn's worker writes while the thread is `responding` (upserts and
    deletes are refused), so the next seq can't be taken by anyone else."""
    if seq is None:
        last = Message.objects.filter(thread_id=thread_id).aggregate(last=Max("seq"))["last"]
        seq = 0 if last is None else last + 1
    return Message.objects.create(
        thread_id=thread_id, turn_id=turn_id, seq=seq,
        role=role, content=content, status=status, notice=notice, created_at=timezone.now(),
    )


# --- The loop ------------------------------------------------------------------


class StreamedText:
    """A reply's text as it streams, in the database within FLUSH_SECONDS of
    arriving, whatever the model does next: written at once when nothing was
    written for FLUSH_SECONDS (leading edge), otherwise as soon as that delay
    is over, during a pause too (trailing edge; the loop waits on `paced` with
    `seconds_until_due`). At most one write per FLUSH_SECONDS while it streams;
    the first one FIRST_TEXT_SECONDS after the start at the latest."""

    def __init__(self, write: Callable[[str], None], *, clock: Callable[[], float]):
        self.write = write
        self.clock = clock
        self.text = ""
        self.written_chars = 0
        self.written_at = clock() - FLUSH_SECONDS + FIRST_TEXT_SECONDS

    def add(self, piece: str) -> None:
        self.text += piece
        self.write_if_due()

    def seconds_until_due(self) -> float | None:
        """None when everything received is written."""
        if len(self.text) == self.written_chars:
            return None
        return max(0.0, self.written_at + FLUSH_SECONDS - self.clock())

    def write_if_due(self) -> None:
        if len(self.text) != self.written_chars and self.clock() - self.written_at >= FLUSH_SECONDS:
            self.write(self.text)
            self.written_chars, self.written_at = len(self.text), self.clock()



class TurnRunner:
    def __init__(self, turn: Turn, *, client: ModelClient | None, clock: Callable[[], float]):
        self.turn = turn
        self.option: ModelOption = model_option(turn.model_option)
        self.client = client
        self.clock = clock
        self.deadline = clock() + settings.ASSISTANT_TURN_SECONDS
        self.usage = Usage()
        self.steps = 0
        self.calls = 0
        self.taint = Taint(turn.read_private, turn.read_untrusted)
        self.tools = all_tools()
        self.tool_specs, self.tools_bytes = tool_specs_and_size()
        self.held_micros = turn.reserved_micros
        self.context: Context | None = None
        self.last_reply_id: UUID | None = None
        self.key_source = ""
        self.system = system_prompt()  # with the instructions once the member is verified
        self.cancel_checked_at = self.deadline - settings.ASSISTANT_TURN_SECONDS  # the start: no extra reading
        # What the call being streamed has cost so far when the stream is closed
        # before the provider reported its usage (see _estimate_unreported_usage).
        self.unreported_usage = Usage()
        self.call_input_bound = 0
        self.call_output_bound = 0

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

    def _verified_member(self) -> Member:
        """The person's rights now, not when the turn was queued."""
        # With the organization and the person's preferences (one query): its instructions, the person's
        # and their chosen language go in the system prompt.
        membership = Membership.objects.filter(
            organization_id=self.turn.organization_id, user_id=self.turn.user_id
        ).select_related("organization", "user__preferences").first()
        if membership is None or self.turn.thread_id is None:
            raise TurnStopped(Turn.FailureKind.INTERNAL, NOTICES[Turn.FailureKind.INTERNAL])
        # Suspended before the turn started: it does not start (a running one finishes).
        if membership.is_suspended:
            raise TurnStopped(Turn.FailureKind.SUSPENDED, NOTICES[Turn.FailureKind.SUSPENDED])
        preferences = getattr(membership.user, "preferences", None)  # none until the person chooses
        self.system = system_prompt(organization=membership.organization.instructions, person=membership.instructions,
                                    language=preferences.language if preferences else "")
        return Member(membership.organization_id, membership.user_id, membership.role)

    def _check_model(self) -> None:
        """A model chosen for the conversation must still be allowed when the
        turn starts (an admin may have changed the organization's options since)."""
        thread = self.turn.thread
        if thread is not None and thread.model_option and not option_allowed(
                self.turn.organization_id, self.turn.model_option):
            raise TurnStopped(Turn.FailureKind.MODEL, MODEL_NOT_ALLOWED_NOTICE)

    def _open_client(self) -> None:
        """The client of this turn, on the organization's own key for the
        option's provider when it has one (opened here, in the worker, at the
        call), and the key source the turn records."""
        source = DEPLOYMENT
        if self.client is None:
            key = turn_key(self.option, self.turn.organization_id)
            source = key.source
            # The deployment's client is shared in the process (its connection
            # pool reused); one on an organization's key serves this turn only.
            self.client = (deployment_client(self.option) if source == DEPLOYMENT
                           else client_for(self.option, api_key=key.api_key))
        # Stored with the turn's end (finish_turn), in the same write.
        self.turn.key_source = self.key_source = source

    def _loop(self) -> Outcome:
        # Read once: the worker is the thread's only writer while it responds,
        # so each step appends what it wrote to what the loop holds.
        self.context = load_context(self.turn.thread_id)
        # The guard follows what the model is about to see: every tool result
        # in the history, from this turn or any earlier one.
        self.taint = taint_union(self.taint, self.context.taint)
        for _ in range(settings.ASSISTANT_MAX_STEPS):
            self._stop_if_cancelled()
            windowed = uses_window(self.turn.thread.continuous)
            if not windowed and self.context.size > settings.ASSISTANT_HISTORY_BYTES:
                raise TurnStopped(Turn.FailureKind.BOUNDS, bounds_notice("the conversation is full"))
            # A continuous conversation (Telegram) sends its most recent
            # messages that fit (the taint above still covers all of them).
            history = in_window(self.context.items) if windowed else list(self.context.items)
            request = ModelRequest(
                system=self.system, history=history, tools=self.tool_specs,
                max_tokens=settings.ASSISTANT_MAX_OUTPUT_TOKENS,
            )
            self._hold_for_call(request)
            reply, calls = self._step(request)
            if not calls:
                self.context.append_reply(reply.content, [])
                return Outcome(Turn.Status.DONE)
            if len(calls) > settings.ASSISTANT_MAX_TOOL_CALLS_PER_STEP:
                self._store_refused_calls(reply, calls)
                raise TurnStopped(Turn.FailureKind.BOUNDS, bounds_notice(
                    f"{settings.ASSISTANT_MAX_TOOL_CALLS_PER_STEP} tool calls in one step"))
            self.context.append_reply(reply.content, self._run_calls(reply, calls))
            self._check_time()
        raise TurnStopped(Turn.FailureKind.BOUNDS, bounds_notice(f"{settings.ASSISTANT_MAX_STEPS} steps"))

    def thread_after(self) -> "ThreadAfterTurn | None":
        """What the thread row keeps once the turn ends, as this loop knows it."""
        if self.context is None:
            return None
        return ThreadAfterTurn(next_seq=self.context.next_seq, history_bytes=self.context.size,
                               last_reply_id=self.last_reply_id)

    def _hold_for_call(self, request: ModelRequest) -> None:
        """Hold an upper bound of this call's cost before making it, so the turn
        can never spend what the organization was not granted. Holds more only
        when what the turn holds does not cover what it spent plus the bound."""
        if len(request.history) == len(self.context.items):
            size, parts = self.context.size, self.context.parts
        else:  # a window: measure what is sent
            size, parts = history_bytes(request.history), history_parts(request.history)
        input_bound = request_token_bound(system=request.system, tools_bytes=self.tools_bytes,
                                          history_size=size, history_parts=parts)
        self.call_input_bound, self.call_output_bound = input_bound, request.max_tokens
        bound = call_bound_micros(self.option, input_tokens=input_bound, output_tokens=request.max_tokens)
        needed = request_micros(self.option, self.usage) + bound
        if needed > micros_from_credits(settings.ASSISTANT_TURN_MAX_CREDITS):
            raise TurnStopped(Turn.FailureKind.CREDITS, CEILING_NOTICE)
        # On the organization's own key only CREDITS_OWN_KEY_RATE of it is charged.
        needed = charge_for(self.turn, needed)
        if needed <= self.held_micros:
            return
        try:
            # The turn row learns it with the step's progress; the ledger is the truth.
            self.held_micros = credits_reserve_more(turn_id=self.turn.id, micros=needed - self.held_micros)
        except CreditsExhausted as refusal:
            logger.info("turn_credits_exhausted", extra={"turn_id": str(self.turn.id), "needed_micros": needed,
                                                         "member_cap": isinstance(refusal, MemberCapReached)})
            notice = CAP_NOTICE if isinstance(refusal, MemberCapReached) else NOTICES[Turn.FailureKind.CREDITS]
            raise TurnStopped(Turn.FailureKind.CREDITS, notice) from None

    def _stop_if_cancelled(self, *, lock: bool = False) -> None:
        """A safe point: the person's Stop ends the turn here (one indexed read).
        `lock`: read under the turn's row lock (inside the caller's transaction),
        the lock turn_cancel takes to accept a Stop."""
        turns = Turn.objects.select_for_update() if lock else Turn.objects
        if turns.filter(id=self.turn.id).values_list("cancel_requested_at", flat=True).first() is not None:
            raise TurnCancelled

    def _stop_if_cancelled_while_streaming(self) -> None:
        now = self.clock()
        if now - self.cancel_checked_at >= CANCEL_CHECK_SECONDS:
            self.cancel_checked_at = now
            self._stop_if_cancelled()

    def _check_time(self) -> None:
        if self.clock() > self.deadline:
            raise TurnStopped(Turn.FailureKind.TIMEOUT, NOTICES[Turn.FailureKind.TIMEOUT])

    # One model call, streamed into the database.

    def _step(self, request: ModelRequest) -> tuple[Message, list[ToolCallEvent]]:
        # The reply's row is written with its first text (within FLUSH_SECONDS)
        # or at the step's end, whichever comes first: a quick step is one
        # INSERT. Its seq is taken now: the loop is the thread's only writer.
        reply = Message(
            thread_id=self.turn.thread_id, turn_id=self.turn.id, seq=self.context.next_seq,
            role=Message.Role.ASSISTANT, content="", status=Message.Status.STREAMING, created_at=timezone.now(),
        )
        self.context.next_seq += 1
        self.steps += 1
        calls: list[ToolCallEvent] = []
        streamed = StreamedText(lambda text: self._flush_text(reply, text), clock=self.clock)
        reported = False
        try:
            # closing(): a Stop leaves the loop early; the model's stream is closed at once.
            with closing(paced(lambda: self.client.stream(request), lambda: self._wait_seconds(streamed))) as events:
                for event in events:
                    self._check_time()
                    self._take_event(event, streamed, calls)
                    reported = reported or isinstance(event, Usage)
                    self._stop_if_cancelled_while_streaming()
        except TurnCancelled:
            if not reported:
                self.unreported_usage = self._estimate_unreported_usage(streamed.text, calls)
            raise
        finally:
            # The final text is never lost, whatever ended the stream.
            reply.content = streamed.text
            reply.status = Message.Status.COMPLETE
            self._save_reply(reply, update_fields=["content", "status"])
            live.publish_text(self.turn.id, reply, streamed.text)
        return reply, calls

    def _take_event(self, event, streamed: "StreamedText", calls: list[ToolCallEvent]) -> None:
        if event is PAUSE:
            streamed.write_if_due()
        elif isinstance(event, TextDelta):
            streamed.add(event.text)
        elif isinstance(event, ToolCallEvent):
            calls.append(event)
        elif isinstance(event, Usage):
            self.usage = self.usage + event

    def _estimate_unreported_usage(self, text: str, calls: list[ToolCallEvent]) -> Usage:
        """Providers report usage at a stream's end, so a stopped call's cost is
        estimated on the high side: its whole input (the bound held for it) and
        one token per byte of what it wrote, but never more than the call could
        produce (its max_tokens): so never more than the hold made for it. The
        organization is never charged less than the provider bills."""
        written = len(text.encode()) + sum(len(json.dumps(c.input if c.input is not None else c.raw_input))
                                           for c in calls)
        return Usage(input_tokens=self.call_input_bound, output_tokens=min(written, self.call_output_bound))

    def _flush_text(self, reply: Message, text: str) -> None:
        """Write the reply's text so far (the catch-up source), then tell the
        open streams (Redis, when configured)."""
        reply.content = text
        self._save_reply(reply, update_fields=["content"])
        live.publish_text(self.turn.id, reply, text)

    def _save_reply(self, reply: Message, *, update_fields: list[str]) -> None:
        if reply._state.adding:  # its first write
            reply.save(force_insert=True)
            self.last_reply_id = reply.id
        else:
            reply.save(update_fields=update_fields)

    def _wait_seconds(self, streamed: "StreamedText") -> float:
        """How long to wait for the model's next event: until pending text is
        due to be written, and never past the turn's deadline."""
        until_deadline = max(0.0, self.deadline - self.clock())
        due = streamed.seconds_until_due()
        # Woken at least every CANCEL_CHECK_SECONDS, so a Stop is seen during a pause too.
        wait = min(until_deadline, CANCEL_CHECK_SECONDS)
        return wait if due is None else min(due, wait)

    def progress(self) -> dict:
        """The turn's counters as the loop holds them (usage apart)."""
        return {
            "steps": self.steps, "tool_calls": self.calls, "reserved_micros": self.held_micros,
            "read_private": self.taint.read_private, "read_untrusted": self.taint.read_untrusted,
        }

    def _save_progress(self) -> None:
        """The turn's one progress write of a step (after its tool calls; the
        last step's is part of finish_turn)."""
        fields = self.progress()
        for field, value in fields.items():
            setattr(self.turn, field, value)
        _store_usage(self.turn, self.usage)
        self.turn.save(update_fields=[
            *fields, "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens",
        ])

    # Tool calls.

    def _run_calls(self, reply: Message, calls: list[ToolCallEvent]) -> list[StoredCall]:
        """Run and store each call (stored before it runs, finished after);
        returns them as the history holds them."""
        stored = []
        for position, call in enumerate(calls):
            # Between tool calls (a started one always finishes whole). The call
            # is recorded under the lock of the check: a Stop accepted before it
            # is seen here, one accepted after finds the call already started.
            with transaction.atomic():
                self._stop_if_cancelled(lock=True)
                record = ToolCall.objects.create(
                    message=reply, position=position, tool_use_id=call.id, name=call.name,
                    input=call.input if call.input is not None else {"raw": call.raw_input},
                    created_at=timezone.now(),
                )
            live.publish_tool_call_started(record)
            self.calls += 1
            try:
                result, is_error = self._run_call(call, record)
            except ToolCrashed:
                self._finish_call(record, {"error": "The tool failed unexpectedly."}, is_error=True)
                raise
            self._finish_call(record, result, is_error=is_error)
            stored.append(StoredCall(record.tool_use_id, record.name, record.input, record.result,
                                     record.is_error, finished=True))
        self._save_progress()
        return stored

    def _store_refused_calls(self, reply: Message, calls: list[ToolCallEvent]) -> None:
        now = timezone.now()
        ToolCall.objects.bulk_create([
            ToolCall(
                message=reply, position=position, tool_use_id=call.id, name=call.name,
                input=call.input if call.input is not None else {"raw": call.raw_input},
                result={"error": "Not run: too many tool calls in one step."}, is_error=True,
                created_at=now, finished_at=now,
            )
            for position, call in enumerate(calls)
        ])

    @staticmethod
    def _finish_call(record: ToolCall, result, *, is_error: bool) -> None:
        record.result = result
        record.is_error = is_error
        record.finished_at = timezone.now()
        record.save(update_fields=["result", "is_error", "finished_at"])
        live.publish_tool_call_finished(record)

    def _run_call(self, call: ToolCallEvent, record: ToolCall) -> tuple[object, bool]:
        """(raw result, is_error). A ToolError becomes an error the model can read."""
        try:
            tool = get_tool(call.name)
        except framework.ToolError:
            names = ", ".join(sorted(t.name for t in self.tools))
            return {"error": f"Unknown tool {call.name!r}. Available tools: {names}."}, True
        if call.input is None:
            return {"error": "The input was not a valid JSON object. Send the arguments as a JSON object."}, True
        try:
            parsed = framework.parse_input(tool, call.input)
        except framework.ToolInputError as error:
            return {"error": str(error)}, True
        route = route_call(tool.tool_class, self.taint, settings.ASSISTANT_TRIFECTA)
        self.taint = taint_after(self.taint, tool.tool_class, tool.flags)
        if route == Route.REFUSE:
            return {"error": proposals.TRIFECTA_REFUSAL}, True
        try:
            if route == Route.RUN:
                result = framework.execute(
                    tool, self.member, parsed, context=framework.ToolContext(untrusted=self.taint.read_untrusted)
                )
                # A result may carry marks of its own (a note written from inbox content).
                self.taint = taint_after(self.taint, tool.tool_class, framework.result_marks(tool, result))
                return result, False
            return proposals.propose(
                self.member, turn=self.turn, tool=tool, tool_input=parsed, tool_call=record,
                warning=route == Route.PROPOSE_WITH_WARNING,
            ), False
        except framework.ToolError as error:
            return {"error": str(error) or type(error).__name__}, True
        except Exception as error:
            logger.exception("tool_crashed", extra={"turn_id": str(self.turn.id), "tool": call.name})
            raise ToolCrashed from error
