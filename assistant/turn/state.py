"""What a turn's loop holds while it runs, shared by its phases (the request,
the stream, the tool calls): its counters, its credit hold, its taint, its
deadline, and the safe points where a Stop or the wall-time bound ends it."""

from collections.abc import Callable
from uuid import UUID

from django.conf import settings

from assistant.history import Context
from assistant.instructions import system_prompt
from assistant.models import Turn
from assistant.trifecta import Taint
from assistant.turn.outcome import NOTICES, TurnCancelled, TurnStopped
from assistant.turn.process_cache import tool_specs_and_size
from assistant.turn.settle import PROGRESS_FIELDS, USAGE_FIELDS, ThreadAfterTurn, store_usage
from assistant_engine.providers.catalog import ModelOption, model_option
from assistant_engine.providers.clients.base import ModelClient, Usage
from assistant_engine.tools.registry import all_tools

# How often, at most, the loop reads the Stop flag while a model streams (or pauses).
CANCEL_CHECK_SECONDS = 0.5


class TurnState:
    """One turn's loop state. The phases are this class's subclasses
    (assistant.turn.request, .stream, .tool_calls), joined in
    assistant.loop.TurnRunner: each reads and updates these fields."""

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
        # The organization's model option and members' rule, read with the verified member.
        self.model_rule: tuple[str, str] | None = None
        # The organization's Organization.HistoryMode, as this conversation applies it (read with the member).
        self.history_mode = "summarize"
        # Organization.untrusted_writes: "confirm" holds a write after third-party content for the person.
        self.untrusted_writes = "confirm"
        self.summaries = 0  # summaries this turn wrote (assistant/turn/summarize.py)
        # Where the third-party content the model has seen came from (the history's, then this turn's reads).
        self.sources: list[str] = []
        self.system = system_prompt()  # with the instructions once the member is verified
        self.cancel_checked_at = self.deadline - settings.ASSISTANT_TURN_SECONDS  # the start: no extra reading
        # Whether a Stop is known to be requested, as read just now by a query the loop runs anyway (the turn's
        # row at its start, a step's progress write); None: not known, the next model call reads it first.
        self.stop_known: bool | None = turn.cancel_requested_at is not None
        # What the call being streamed has cost so far when the stream is closed
        # before the provider reported its usage (see _estimate_unreported_usage).
        self.unreported_usage = Usage()
        self.call_input_bound = 0
        self.call_output_bound = 0

    def thread_after(self) -> ThreadAfterTurn | None:
        """What the thread row keeps once the turn ends, as this loop knows it."""
        if self.context is None:
            return None
        return ThreadAfterTurn(next_seq=self.context.next_seq, history_bytes=self.context.size,
                               last_reply_id=self.last_reply_id)

    def _stop_if_cancelled(self, *, lock: bool = False) -> None:
        """A safe point: the person's Stop ends the turn here (one indexed read).
        `lock`: read under the turn's row lock (inside the caller's transaction),
        the lock turn_cancel takes to accept a Stop."""
        turns = Turn.objects.select_for_update() if lock else Turn.objects
        if turns.filter(id=self.turn.id).values_list("cancel_requested_at", flat=True).first() is not None:
            raise TurnCancelled

    def _stop_if_cancelled_before_call(self) -> None:
        """The safe point before each model call (issue 17): no call starts
        after an accepted Stop. When the loop's previous query just read the
        flag (stop_known), it is not read a second time."""
        known, self.stop_known = self.stop_known, None
        if known is None:
            self._stop_if_cancelled()
        elif known:
            raise TurnCancelled

    def _stop_if_cancelled_while_streaming(self) -> None:
        now = self.clock()
        if now - self.cancel_checked_at >= CANCEL_CHECK_SECONDS:
            self.cancel_checked_at = now
            self._stop_if_cancelled()

    def _check_time(self) -> None:
        if self.clock() > self.deadline:
            raise TurnStopped(Turn.FailureKind.TIMEOUT, NOTICES[Turn.FailureKind.TIMEOUT])

    def progress(self) -> dict:
        """The turn's counters as the loop holds them (usage apart)."""
        return dict(zip(PROGRESS_FIELDS, (self.steps, self.calls, self.held_micros, self.taint.read_private,
                                          self.taint.read_untrusted), strict=True))

    def _save_progress(self) -> None:
        """The turn's one progress write of a step (after its tool calls; the
        last step's is part of finish_turn), which is also the next call's Stop
        check: it writes only a turn without a Stop (one statement, not two).
        Not written under a Stop: finish_turn writes what the loop holds."""
        fields = self.progress()
        for field, value in fields.items():
            setattr(self.turn, field, value)
        store_usage(self.turn, self.usage)
        written = Turn.objects.filter(id=self.turn.id, cancel_requested_at__isnull=True).update(
            **fields, **{field: getattr(self.turn, field) for field in USAGE_FIELDS})
        self.stop_known = not written
