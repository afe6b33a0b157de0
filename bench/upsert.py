"""Benchmark of a conversation re-upload (`make bench`; not part of the tests).

A 1,000-message conversation (every other message with a tool call and a
1 KB raw result) is uploaded once, then re-uploaded REPEAT times, each time with
one new message at the end, as an offline client does. Measured in one run:
rows written and write statements per re-upload, the time the upsert holds its
transaction (the database's write lock on SQLite), the time to validate the
body, and the same for the first upload, as a ratio. Prints a Markdown table;
writes nothing in the repository (a throw-away database in a temporary folder).
Set `DATABASE_URL` to benchmark PostgreSQL, `BENCH_MESSAGES`, `BENCH_REPEAT`.
"""

import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORKDIR = Path(tempfile.mkdtemp(prefix="assistant-bench-upsert-"))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{WORKDIR / 'bench.sqlite3'}")
os.environ.update(SECRET_KEY="bench-only", DEBUG="0", RUN_DIR=str(WORKDIR), LOG_LEVEL="WARNING")
# Production settings refuse to start without these (README, Configuration).
os.environ.setdefault("ASSISTANT_KEYS_SECRET", "bench-only")
os.environ.setdefault("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

from assistant_engine.organizations.members import Member  # noqa: E402
from assistant_engine.organizations.models import Membership, Organization  # noqa: E402
from conversations.api import conversation_data  # noqa: E402
from conversations.serializers import ConversationSerializer  # noqa: E402
from conversations.services import conversation_upsert  # noqa: E402

MESSAGES = int(os.environ.get("BENCH_MESSAGES", "1000"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "20"))
START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
WRITES = ("INSERT", "UPDATE", "DELETE")


def setup() -> Member:
    call_command("migrate", verbosity=0)
    organization = Organization.objects.create(slug="bench-upsert", name="Bench", monthly_credits=1000)
    user = get_user_model().objects.create_user(username="bench-upsert", password="bench-password")
    Membership.objects.create(organization=organization, user=user)
    return Member(organization.id, user.id, "member", organization.slug)


def message(index: int) -> dict:
    calls = [{"id": f"toolu_{index}", "name": "search_notes", "input": {"query": f"q{index}"},
              "result": {"notes": [{"id": index, "body": "x" * 1000}]}}] if index % 2 else []
    return {"id": str(uuid.uuid4()), "role": "assistant" if index % 2 else "user",
            "content": f"Message {index} " + "lorem ipsum " * 20,
            "createdAt": (START + timedelta(seconds=index)).isoformat(), "toolCalls": calls}


def upload(member: Member, body: dict) -> dict:
    started = time.perf_counter()
    serializer = ConversationSerializer(data=body)
    serializer.is_valid(raise_exception=True)
    data = conversation_data(uuid.UUID(body["id"]), serializer.validated_data)
    validated = time.perf_counter()
    with CaptureQueriesContext(connection) as captured:
        outcome = conversation_upsert(member, data=data)
    done = time.perf_counter()
    assert outcome.applied
    statements = [q["sql"].lstrip().upper() for q in captured.captured_queries]
    return {
        "rows": 1 + outcome.writes.rows,  # the thread's row, then messages and tool calls
        "write_statements": sum(sql.startswith(WRITES) for sql in statements),
        "queries": len(statements),
        "validate_ms": (validated - started) * 1000,
        "upsert_ms": (done - validated) * 1000,
    }


def main() -> None:
    member = setup()
    messages = [message(index) for index in range(MESSAGES)]
    body = {"id": str(uuid.uuid4()), "title": "Bench", "createdAt": START.isoformat(),
            "updatedAt": START.isoformat(), "messages": messages}
    first = upload(member, body)
    again = []
    for round_ in range(1, REPEAT + 1):
        messages = [*messages, message(MESSAGES + round_ * 2)]  # a user message: no tool call
        body = {**body, "updatedAt": (START + timedelta(minutes=round_)).isoformat(), "messages": messages}
        again.append(upload(member, body))
    median = {key: statistics.median(run[key] for run in again) for key in again[0]}
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {connection.vendor}"
    print(f"### {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine}; {MESSAGES} messages "
          f"({MESSAGES // 2} tool calls), re-uploaded {REPEAT} times with one new message\n")
    print("| upload | rows written | write statements | queries | validate ms | upsert ms (transaction) |")
    print("|---|---|---|---|---|---|")
    for label, run in (("first (everything new)", first), ("again + 1 message (median)", median)):
        print(f"| {label} | {run['rows']:.0f} | {run['write_statements']:.0f} | {run['queries']:.0f} | "
              f"{run['validate_ms']:.1f} | {run['upsert_ms']:.1f} |")
    print(f"\nThe re-upload's transaction is {first['upsert_ms'] / median['upsert_ms']:.1f}× shorter than the "
          f"first upload's, for {first['rows'] / median['rows']:.0f}× fewer rows written.")


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(WORKDIR, ignore_errors=True)
