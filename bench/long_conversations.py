"""Long conversations (`make bench`, issue 32): what a turn costs at 50 and at
5,000 messages, and how much of a long conversation's input the prompt cache serves.

1. A turn's time and queries in a conversation of 50 messages and of 5,000,
   under the organization's "summarize" choice (the default) on a model with
   Qwen3's window (32,768 tokens): the 5,000-message one is summarized once
   (its first turn, not timed), then each turn reads the summary and the
   messages after it. For contrast, "window" at 5,000 messages, which reads
   every message at each turn to pick the most recent ones. The offline model
   answers instantly, so what is measured is the engine.
2. The cache-read share: 50 turns of a 2,000-message conversation on Claude
   Haiku 4.5 through the official SDK, against the wire-faked Anthropic server
   that caches as Anthropic documents it (tests/fakes/windowed_models.py):
   cache_read_input_tokens over all input tokens.

Prints a Markdown table; with --write appends it to bench/README.md (a plain
run leaves `git status` clean). BENCH_LONG_TURNS sets the timed turns per row.
"""

import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORKDIR = Path(tempfile.mkdtemp(prefix="assistant-bench-long-"))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{WORKDIR / 'bench.sqlite3'}")
os.environ.update(SECRET_KEY="bench-only", DEBUG="0", RUN_DIR=str(WORKDIR), OFFLINE_MODEL_CHUNK_DELAY_MS="0",
                  LOG_LEVEL="WARNING", ASSISTANT_ALLOW_US_PROCESSING="1")
os.environ.setdefault("ASSISTANT_KEYS_SECRET", "bench-only")
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.utils import timezone  # noqa: E402

import assistant.chat  # noqa: E402
from assistant.chat import chat_submit  # noqa: E402
from assistant.loop import run_turn  # noqa: E402
from assistant.models import Turn  # noqa: E402
from assistant_engine.organizations.members import Member  # noqa: E402
from assistant_engine.organizations.models import Membership, Organization  # noqa: E402
from assistant_engine.providers.catalog import client_for, model_option  # noqa: E402
from conversations.models import Message, Summary, Thread  # noqa: E402
from tests.fakes.windowed_models import AnthropicWindowed  # noqa: E402

TURNS = int(os.environ.get("BENCH_LONG_TURNS", "30"))
CACHE_TURNS = int(os.environ.get("BENCH_LONG_CACHE_TURNS", "50"))
WORDS = "The quarterly budget review moved to Thursday; Lena brings the figures and the venue list. "


def setup() -> Member:
    call_command("migrate", verbosity=0)
    organization = Organization.objects.create(slug="bench", name="Bench", monthly_credits=10_000_000)
    user = get_user_model().objects.create_user(username="bench", password="bench-password")
    Membership.objects.create(organization=organization, user=user)
    assistant.chat.enqueue_turn = lambda turn_id: None  # the benchmark runs each turn itself
    return Member(organization.id, user.id, "member", "bench")


def seeded(member: Member, messages: int) -> Thread:
    then = timezone.now() - timedelta(days=30)
    thread = Thread.objects.create(organization_id=member.organization_id, user_id=member.user_id, created_at=then,
                                   updated_at=then, last_activity_at=then, next_seq=messages)
    rows = []
    for seq in range(messages):
        message_id = uuid.uuid4()
        role = Message.Role.USER if seq % 2 == 0 else Message.Role.ASSISTANT
        rows.append(Message(id=message_id, client_id=message_id, thread=thread, seq=seq, role=role,
                            content=f"#{seq} {WORDS}", turn_id=None if role == Message.Role.USER else thread.id,
                            created_at=then))
    Message.objects.bulk_create(rows, batch_size=500)
    return thread


def one_turn(member: Member, thread: Thread, client=None) -> tuple[float, int]:
    submitted = chat_submit(member, message="What did we decide about the review?", conversation_id=thread.id)
    if client is not None:
        Turn.objects.filter(id=submitted.turn_id).update(model_option="anthropic-claude-haiku-4-5")
    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        run_turn(submitted.turn_id, client=client)
        elapsed = (time.perf_counter() - started) * 1000
    assert Turn.objects.get(id=submitted.turn_id).status == "done"
    return elapsed, len(captured.captured_queries)


def turn_row(member: Member, messages: int, mode: str) -> dict:
    Organization.objects.filter(pk=member.organization_id).update(history_mode=mode)
    thread = seeded(member, messages)
    one_turn(member, thread)  # a first turn catches up (the summary of a long past), not timed
    times, queries = zip(*(one_turn(member, thread) for _ in range(TURNS)), strict=True)
    return {"messages": messages, "mode": mode, "median": statistics.median(times),
            "queries": statistics.mean(queries), "summaries": Summary.objects.filter(thread=thread).count()}


def cache_share(member: Member) -> dict:
    """50 turns of a 2,000-message conversation on Claude Haiku 4.5's window."""
    Organization.objects.filter(pk=member.organization_id).update(history_mode="summarize")
    thread = seeded(member, 2000)
    option = model_option("anthropic-claude-haiku-4-5")
    fake = AnthropicWindowed(option.context_window_tokens)
    with fake.server() as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.url
        client = client_for(option, api_key="bench-key", max_retries=0)
        one_turn(member, thread, client)  # the catch-up
        fake.cache_read = fake.input_total = 0
        for _ in range(CACHE_TURNS):
            one_turn(member, thread, client)
    return {"turns": CACHE_TURNS, "share": fake.cache_read / max(1, fake.input_total), "refused": fake.refused,
            "summaries": Summary.objects.filter(thread=thread).count()}


def main() -> None:
    member = setup()
    settings.ASSISTANT_CONTEXT_WINDOW_TOKENS = 32_768  # Qwen3's window, the seeds' default provider
    rows = [turn_row(member, 50, "summarize"), turn_row(member, 5000, "summarize"), turn_row(member, 5000, "window")]
    settings.ASSISTANT_CONTEXT_WINDOW_TOKENS = 0
    cache = cache_share(member)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {connection.vendor}"
    base = rows[0]["median"]
    lines = [
        f"### Long conversations — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine}, {TURNS} turns per row",
        "",
        "| conversation | history mode | turn median ms | vs 50 messages | SQL queries per turn | summaries |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(f"| {row['messages']:,} messages | {row['mode']} | {row['median']:.1f} | "
                     f"{row['median'] / base:.2f} | {row['queries']:.1f} | {row['summaries']} |")
    lines += [
        "",
        f"Prompt cache over {cache['turns']} turns of a 2,000-message conversation (Claude Haiku 4.5, wire-faked "
        f"Anthropic server): {cache['share']:.1%} of input tokens read from the cache; "
        f"{cache['summaries']} summaries in all; {cache['refused']} requests refused for their length.",
    ]
    table = "\n".join(lines)
    print(table)
    if "--write" in sys.argv:
        with open(ROOT / "bench" / "README.md", "a") as readme:
            readme.write("\n" + table + "\n")


if __name__ == "__main__":
    main()
