"""How much the per-call holds over-reserve on typical turns (`make bench-reservation`).

Before each model call the loop holds an upper bound of its cost: one input
token per byte of the request (plus framing) at the dearer of the input and
cache-write prices, and the full `ASSISTANT_MAX_OUTPUT_TOKENS` at the output
price. This runs the benchmark's scripted turns with a model whose usage is
what a real one would bill for the same request — about 4 bytes per input
token (Claude's tokenizer on English and JSON) and 150 output tokens per call
— and compares the most the turn held with what it cost. Prints a table;
writes nothing into the repository.
"""

import json
import os
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("BENCH_TURNS", "5")

import run as bench  # noqa: E402  (sets up Django on a throw-away database)

from assistant.chat import chat_submit  # noqa: E402
from assistant.history import history_bytes  # noqa: E402
from assistant.loop import run_turn  # noqa: E402
from assistant.models import Turn  # noqa: E402
from assistant_engine.providers.clients.base import Stop, TextDelta, ToolCallEvent, Usage  # noqa: E402
from conversations.models import Message  # noqa: E402
from credits.money import credits_from_micros  # noqa: E402

BYTES_PER_TOKEN = 4
OUTPUT_TOKENS = 150
OPTIONS = ("bedrock-claude-haiku-4-5", "bedrock-claude-sonnet-4-6", "infomaniak-apertus-70b")


class BilledLikeARealModel:
    """The benchmark's script, with the usage a provider would bill for each request."""

    def __init__(self, steps: int):
        self.steps_left = steps

    def stream(self, request):
        tools = len(json.dumps([vars(spec) for spec in request.tools]))
        input_tokens = (len(request.system) + tools + history_bytes(request.history)) // BYTES_PER_TOKEN
        self.steps_left -= 1
        if self.steps_left:
            yield TextDelta("Looking. ")
            yield ToolCallEvent(f"toolu_{self.steps_left}", "search_notes", {"query": "Zurich"})
        else:
            yield TextDelta("Here is what I found in your notes, summarized in a few words.")
        yield Usage(input_tokens, OUTPUT_TOKENS)
        yield Stop("end_turn" if not self.steps_left else "tool_use")


def measure(member, option: str, steps: int, history_messages: int) -> tuple[int, int]:
    submitted = chat_submit(member, message="Search my notes for Zurich", conversation_id=None)
    Message.objects.bulk_create([
        Message(client_id=uuid.uuid4(), thread_id=submitted.thread_id, seq=1000 + i,
                role="user" if i % 2 == 0 else "assistant",
                content="A message of the kind people write, about a trip to Zurich. " * 3,
                created_at=Message.objects.get(id=submitted.message_id).created_at)
        for i in range(history_messages)
    ])
    Turn.objects.filter(id=submitted.turn_id).update(model_option=option)
    run_turn(submitted.turn_id, client=BilledLikeARealModel(steps))
    turn = Turn.objects.get(id=submitted.turn_id)
    return turn.reserved_micros, turn.cost_micros


def main() -> None:
    bench.enqueue_turn_in_process()
    member = bench.setup()
    print("| option | thread | steps | most held (credits) | cost (micros) | held / cost |")
    print("|---|---|---|---|---|---|")
    for option in OPTIONS:
        for history_messages in (0, 200):
            for steps in (1, 2):
                held, cost = measure(member, option, steps, history_messages)
                print(f"| {option} | {history_messages} msgs | {steps} | {credits_from_micros(held)} | {cost} | "
                      f"{held / cost:.1f}× |")


if __name__ == "__main__":
    main()
