"""A step of its own before a reply's call, when the history no longer fits
the model's window under "summarize": the model extends the conversation's
summary with the oldest messages still sent whole (assistant/summaries.py).

Each summary call is held for in credits like any call (the ledger's hold is
marked `summarize`), billed to the turn, and fits the window itself: a long
unsummarized past (a conversation that was "full" or "window" before) is read
in chunks, at most ASSISTANT_SUMMARY_CALLS_PER_TURN of them.
"""

import logging
from contextlib import closing

from django.conf import settings

from assistant.summaries import OMITTED, chunks, summary_request, summary_store, transcript_lines
from assistant.turn.state import TurnState
from assistant_engine.providers.clients.base import ModelRequest, TextDelta, Usage
from assistant_engine.providers.windows import FRAMING_TOKENS_PER_PART, request_token_bound

logger = logging.getLogger("assistant.turn")

# What the summary's block adds around its text (assistant.history.SummaryShown.item), at most.
SUMMARY_FRAMING = 512


class SummaryPhase(TurnState):
    """The summary's calls, and the history the loop holds made shorter by them."""

    def _fold(self, keep: int, room: int) -> None:
        """Fold the items before `keep` (after the current summary) into the summary,
        store it, and send the summary and the items from `keep` on from now on."""
        context = self.context
        first = 1 if context.summary else 0
        max_tokens = min(settings.ASSISTANT_SUMMARY_MAX_TOKENS, max(64, room // 8))
        previous = context.summary.content if context.summary else ""
        # What one call may read beside its prompt, the previous summary and its output.
        chunk_bytes = max(1024, room - max_tokens - len(previous.encode()) * 2 - 2048)
        lines = list(transcript_lines(context.items[first:keep], line_bytes=chunk_bytes))
        parts = chunks(lines, chunk_bytes=chunk_bytes, most=settings.ASSISTANT_SUMMARY_CALLS_PER_TURN)
        if sum(len(part) for part in parts) < len(lines):
            previous = f"{previous}\n{OMITTED}".strip()
        usage = Usage()
        for part in parts:
            self._stop_if_cancelled()
            previous, call_usage = self._summary_call(summary_request(previous, part, max_tokens=max_tokens))
            usage = usage + call_usage
        through_seq = next(start.seq for start in context.starts if start.index == keep)
        summary = summary_store(thread_id=self.turn.thread_id, turn_id=self.turn.id, through_seq=through_seq,
                                content=_bounded_summary(previous, room // 4 - SUMMARY_FRAMING), taint=context.taint,
                                input_tokens=usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
                                output_tokens=usage.output_tokens)
        context.replace_head(summary, keep)
        self.summaries += 1
        logger.info("turn_history_summarized", extra={"turn_id": str(self.turn.id), "through_seq": through_seq,
                                                      "calls": len(parts)})

    def _summary_call(self, request: ModelRequest) -> tuple[str, Usage]:
        """One summary call, held for first; its text and its usage (added to the turn's)."""
        text_bytes = len(request.system.encode()) + sum(len(item.text.encode()) for item in request.history)
        self._hold_for_call(request_token_bound(text_bytes=text_bytes, parts=len(request.history))
                            + FRAMING_TOKENS_PER_PART, request.max_tokens, job="summarize")
        text, usage, reported = [], Usage(), False
        try:
            with closing(iter(self.client.stream(request))) as events:
                for event in events:
                    self._check_time()
                    if isinstance(event, TextDelta):
                        text.append(event.text)
                    elif isinstance(event, Usage):
                        usage, reported = usage + event, True
        finally:
            if not reported:  # ended before the provider said: charged on the high side, as a reply's call
                written = len("".join(text).encode())
                usage = Usage(input_tokens=self.call_input_bound, output_tokens=min(written, request.max_tokens))
            self.usage = self.usage + usage
        return "".join(text).strip(), usage


def _bounded_summary(text: str, limit: int) -> str:
    """A summary never takes more than its share of the window (a model that
    ignored its output bound, or a byte-heavy script)."""
    encoded = text.encode()
    return text if len(encoded) <= limit else encoded[:limit].decode(errors="ignore")
