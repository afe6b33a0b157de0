"""Phase 3, run the tool calls: each stored before it runs (under the turn's
row lock, so a Stop accepted before it is seen) and finished after; routed by
the trifecta guard, whose taint follows every result the model sees; a write
becomes a confirmation card (assistant.proposals), never runs here; so does
a write after third-party content, unless the organization lets it run."""

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from assistant import live, proposals
from assistant.history import StoredCall
from assistant.trifecta import Route, route_call, taint_after
from assistant.turn.outcome import ToolCrashed
from assistant.turn.state import TurnState
from assistant_engine.providers.clients.base import ToolCallEvent
from assistant_engine.tools import framework
from assistant_engine.tools.registry import get_tool
from conversations.models import Message, ToolCall

logger = logging.getLogger("assistant.turn")


class ToolCallPhase(TurnState):
    """The step's tool calls, run one after the other."""

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
        route = route_call(tool.tool_class, self.taint, settings.ASSISTANT_TRIFECTA,
                           untrusted_writes=self.untrusted_writes)
        # Any card proposed in a context that holds third-party content says so (a delete, a send, a write).
        after_untrusted = self.taint.read_untrusted
        self.taint = taint_after(self.taint, tool.tool_class, tool.flags)
        if route == Route.REFUSE:
            return {"error": proposals.TRIFECTA_REFUSAL}, True
        try:
            if route == Route.RUN:
                result = framework.execute(
                    tool, self.member, parsed, context=framework.ToolContext(untrusted=self.taint.read_untrusted)
                )
                # A result may carry marks of its own (a note written from inbox content).
                marks = framework.result_marks(tool, result)
                self.taint = taint_after(self.taint, tool.tool_class, marks)
                if "untrusted" in tool.flags | marks:
                    self.sources = list(dict.fromkeys([*self.sources, *framework.sources_of(tool, result)]))
                return result, False
            proposed = proposals.propose(
                self.member, turn=self.turn, tool=tool, tool_input=parsed, tool_call=record,
                warning=route == Route.PROPOSE_WITH_WARNING, after_untrusted=after_untrusted,
                sources=self.sources if after_untrusted else (),
            )
            # Its description may carry marks of its own (a note's title written from inbox content).
            self.taint = taint_after(self.taint, tool.tool_class, framework.result_marks(tool, proposed))
            return proposed, False
        except framework.ToolError as error:
            return {"error": str(error) or type(error).__name__}, True
        except Exception as error:
            logger.exception("tool_crashed", extra={"turn_id": str(self.turn.id), "tool": call.name})
            raise ToolCrashed from error
