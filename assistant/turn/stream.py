"""Phase 2, stream the model: one call, its text written to the database as
it arrives (within FIRST_TEXT_SECONDS, then at most every FLUSH_SECONDS) and
published to open streams; the wait between events, with no database
connection held (assistant.pacing), bounded by the turn's deadline and woken
to read the Stop flag. Whatever ends the stream, the text so far is kept."""

import json
from collections.abc import Callable
from contextlib import closing

from django.db.models import Exists
from django.utils import timezone

from assistant import live
from assistant.models import Turn
from assistant.pacing import PAUSE, paced
from assistant.proposals import MAX_SOURCES
from assistant.turn.outcome import TurnCancelled
from assistant.turn.state import CANCEL_CHECK_SECONDS, TurnState
from assistant_engine.foundation.prepared import PreparedUpdate
from assistant_engine.providers.clients.base import ModelRequest, TextDelta, ToolCallEvent, Usage
from conversations.models import Message

FLUSH_SECONDS = 0.25
# A reply's first text is written at most this long after its step started:
# a model that answers at once shows its first words at once (issue 21), and a
# step that ends within it is still one INSERT.
FIRST_TEXT_SECONDS = 0.02


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


class StreamPhase(TurnState):
    """One model call, streamed into the database."""

    def _step(self, request: ModelRequest) -> tuple[Message, list[ToolCallEvent]]:
        # The reply's row is written with its first text (within FLUSH_SECONDS)
        # or at the step's end, whichever comes first: a quick step is one
        # INSERT. Its seq is taken now: the loop is the thread's only writer.
        reply = Message(
            thread_id=self.turn.thread_id, turn_id=self.turn.id, seq=self.context.next_seq,
            role=Message.Role.ASSISTANT, content="", status=Message.Status.STREAMING, created_at=timezone.now(),
            # What the model wrote this after: the person sees where outside content came from.
            after_reading=self.sources[:MAX_SOURCES] if self.taint.read_untrusted else [],
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
        open streams (Redis, when configured). A write after the first is
        also the stream's Stop check (issue 36.2: one statement, not two): it
        writes only while no Stop is requested; under a Stop the turn ends and
        the final write keeps the text (_step's `finally`)."""
        reply.content = text
        if reply._state.adding:
            self._save_reply(reply, update_fields=["content"])
        else:
            if not write_text_unless_stopped(reply.id, self.turn.id, text):
                raise TurnCancelled
            self.cancel_checked_at = self.clock()
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


# The reply's text, written unless a Stop is requested for its turn (0 rows
# under a Stop). The hot loop's statement: every FLUSH_SECONDS of every
# streaming turn, so compiled once (assistant_engine.foundation.prepared).
write_text_unless_stopped = PreparedUpdate(
    Message,
    lambda message_id, turn_id, text: (
        Message.objects.filter(~Exists(Turn.objects.filter(id=turn_id, cancel_requested_at__isnull=False)),
                               id=message_id),
        {"content": text}),
    Message._meta.pk, Turn._meta.pk, Message._meta.get_field("content"),
)
