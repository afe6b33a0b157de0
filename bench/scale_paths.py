"""The hot paths `make bench-scale` times at each size (bench/scale.py), each
as the probe organization's person (or staff, or a periodic job) meets it,
and how a path's plans are read (EXPLAIN ANALYZE, JSON)."""

import json
import re
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

import assistant.chat
from assistant import exports, maintenance
from assistant.cards import cards_expire, cards_mark_interrupted
from assistant.chat import chat_submit
from assistant.loop import run_turn
from assistant_engine.organizations.access_log import staff_accesses_purge
from assistant_engine.organizations.members import member_from_membership
from assistant_engine.organizations.models import Membership, Organization
from assistant_engine.organizations.personal_data import erase_user, export_user, export_user_stream
from assistant_engine.organizations.tokens import expired_tokens_purge
from assistant_engine.surfaces.telegram.handlers import telegram_purge
from assistant_engine.web.spend import spend_section
from bench import scale_work
from conversations.models import Thread
from credits.spend import organization_spend, people_ranking
from tests.fakes.scripted import ScriptedClient, say

READ_FACTOR, READ_FLOOR = 100, 1000
# The large probe organization, identical at both sizes (bench/scale.py seeds
# it, and other large organizations of its shape, more of them at S10).
CROWD = {"people": 240, "threads": 5, "messages": 10}


@dataclass(frozen=True)
class Path:
    run: Callable  # (context, prepared) -> None
    setup: Callable | None = None  # (context, round) -> prepared, not timed
    repeat: int = 1  # runs per sample; the sample is their mean (time and queries)


def prepare(rounds: int) -> dict:
    """The probe's people and clients in the database in use; a person to erase per round."""
    assistant.chat.enqueue_turn = lambda turn_id: None  # the benchmark runs the turn itself
    Organization.objects.filter(slug="probe-1").update(model_option="offline")
    users = get_user_model().objects
    root = users.create_superuser("root", "root@example.com", "bench-password")
    olivia = users.get(username="probe-1-1")
    membership = Membership.objects.select_related("organization").get(user=olivia)
    api, web, admin = APIClient(), Client(), Client()
    api.force_login(olivia)
    web.force_login(olivia)
    admin.force_login(root)
    thread = Thread.objects.filter(user=olivia).order_by("-updated_at").first()
    big = Membership.objects.select_related("organization").get(user__username="big-1-1")
    # One more than the rounds: the plans' run erases one too.
    one_each = range(2, 2 + rounds + 1)
    return {
        "api": api, "web": web, "admin": admin, "member": member_from_membership(membership),
        "big": member_from_membership(big), "thread": str(thread.id),
        "erasable": [users.get(username=f"probe-1-{n}").pk for n in one_each],
        "erasable_in_crowd": [users.get(username=f"crowd-1-{n}").pk for n in one_each],
        "month": f"{timezone.now():%Y-%m}", "today": timezone.now().date(),
    }


def get(client_name: str, url: str, **query) -> Path:
    def run(context, _prepared):
        response = context[client_name].get(url.format(**context), query)
        assert response.status_code == 200, (url, response.status_code)
        if response.streaming:
            for _chunk in response.streaming_content:
                pass

    return Path(run)


def export(what: str, fmt: str, **extra) -> Path:
    def run(context, _prepared):
        query = {"what": what, "format": fmt, "organization": "probe-1", "month": context["month"],
                 "start": context["today"] - timedelta(days=30), "end": context["today"], **extra}
        response = context["admin"].get("/admin/assistant/turn/exports/", query)
        assert response.status_code == 200 and response.streaming, (what, response.status_code)
        for _chunk in response.streaming_content:
            pass

    return Path(run)


def submit(context, _round):
    return chat_submit(context["member"], message="What is in the budget?", conversation_id=None).turn_id


def spend(context, _prepared):
    """The organization page's spend section on its own: its two reads (day and month totals), the
    people's month totals the page reads anyway, and the charts laid out."""
    organization_id, month = context["member"].organization_id, context["month"]
    usage = exports.usage_rows(organization_id, month)
    section = spend_section(organization_spend(organization_id, month),
                            people_ranking((row[1], row[2], row[3], row[6]) for row in usage))
    assert section.charts[0].rows, "the probe's month has day totals"


def erase(context, round_number, among="erasable"):
    user = get_user_model().objects.get(pk=context[among][round_number])
    while not erase_user(user, settings.ASSISTANT_ERASURE_BATCH_SIZE).done:
        pass


# A job that finds nothing takes a few ms: timed over this many runs, so the
# median is the job's, not the scheduler's noise on a shared machine.
JOB_REPEAT = 10


def job(fn: Callable, setup: Callable | None = None) -> Path:
    return Path(lambda _context, _prepared: fn(), setup=setup, repeat=JOB_REPEAT)


def job_with_work(fn: Callable, *statements: str) -> Path:
    """The job once, after its work was made (bench/scale_work.py, not timed)."""
    return Path(lambda _context, _prepared: fn(), setup=scale_work.work(*statements))


PATHS: dict[str, Path] = {
    "API conversation list": get("api", "/api/conversations"),
    "API one conversation": get("api", "/api/conversations/{thread}"),
    "API search, rarer word": get("api", "/api/conversations", q="budget"),
    "API search, common word": get("api", "/api/conversations", q="hello"),
    "API search, absent word": get("api", "/api/conversations", q="zanzibar"),
    "API credits": get("api", "/api/credits"),
    "API personal export (streamed)": get("api", "/api/me/export"),
    "web chat page": get("web", "/"),
    "web conversation page": get("web", "/c/{thread}/"),
    "web sidebar search": get("web", "/conversations/list", q="budget"),
    "web data page": get("web", "/data/"),
    "web organization page (admin role)": get("web", "/organization/"),
    "web organization page: its spend section": Path(spend),
    "web tokens page": get("web", "/tokens/"),
    "submission (POST /api/chat's service)": Path(lambda context, _p: submit(context, 0)),
    "a turn (1 step, scripted model)": Path(lambda _c, turn_id: run_turn(turn_id, client=ScriptedClient(
        say("The budget is in your notes."))), setup=submit),
    "erasure of a person (380 messages)": Path(lambda context, round_number: erase(context, round_number),
                                               setup=lambda _context, round_number: round_number),
    f"erasure of a person in a {CROWD['people']}-person organization "
    f"({CROWD['threads'] * CROWD['messages']} messages)": Path(
        lambda context, round_number: erase(context, round_number, among="erasable_in_crowd"),
        setup=lambda _context, round_number: round_number),
    "job: fail stuck turns": job(maintenance.fail_stuck_turns),
    "job: sweep queued turns": job(maintenance.sweep_queued_turns),
    "job: expire cards": job(cards_expire),
    "job: interrupted-card sweep": job(cards_mark_interrupted),
    # (The erasures the job with work left stalled are done first: this one finds nothing.)
    "job: continue erasures": job(maintenance.continue_erasures, setup=scale_work.work(scale_work.ERASURES_DONE)),
    "job: purge idle conversations": job(maintenance.purge_idle_threads),
    "job: purge staff accesses": job(staff_accesses_purge),
    "job: purge expired tokens": job(expired_tokens_purge),
    "job: purge Telegram updates": job(lambda: telegram_purge(older_than=timedelta(days=2))),
    "admin: conversations": get("admin", "/admin/conversations/thread/"),
    "admin: one conversation": get("admin", "/admin/conversations/thread/{thread}/change/"),
    "admin: turns": get("admin", "/admin/assistant/turn/"),
    "admin: turns of a model": get("admin", "/admin/assistant/turn/", model_option="offline"),
    "admin: turns of an organization": get("admin", "/admin/assistant/turn/", q="probe-1"),
    "admin: ledger": get("admin", "/admin/credits/ledgerentry/"),
    "admin: ledger, a month's days": get("admin", "/admin/credits/ledgerentry/",
                                         created_at__year=f"{timezone.now():%Y}",
                                         created_at__month=str(timezone.now().month)),
    "admin: cards": get("admin", "/admin/assistant/actioncard/"),
    "admin: exports page": get("admin", "/admin/assistant/turn/exports/"),
    "admin: staff accesses": get("admin", "/admin/assistant_organizations/staffaccess/"),
    "admin: staff accesses, a year's months": get("admin", "/admin/assistant_organizations/staffaccess/",
                                                  at__year=f"{timezone.now():%Y}"),
    "admin export: turns of an organization, 30 days": export("turns", "json"),
    "admin export: ledger of an organization's month": export("ledger", "csv"),
    "admin export: usage of an organization's month": export("usage", "csv"),
}


# The jobs again, each once after its work was made (bench/scale_work.py, not timed).
JOBS_WITH_WORK = {
    "fail stuck turns": (maintenance.fail_stuck_turns, *scale_work.STUCK_TURNS),
    "sweep queued turns": (maintenance.sweep_queued_turns, *scale_work.QUEUED_TURNS),
    "expire cards": (cards_expire, scale_work.EXPIRED_CARDS),
    "interrupted-card sweep": (cards_mark_interrupted, scale_work.INTERRUPTED_CARDS),
    "continue erasures": (maintenance.continue_erasures, *scale_work.STALLED_ERASURES),
    "purge idle conversations": (maintenance.purge_idle_threads, scale_work.IDLE),
    "purge staff accesses": (staff_accesses_purge, scale_work.OLD_ACCESSES),
    "purge expired tokens": (expired_tokens_purge, scale_work.EXPIRED_TOKENS),
    "purge Telegram updates": (lambda: telegram_purge(older_than=timedelta(days=2)), scale_work.OLD_UPDATES),
}
PATHS.update({f"job: {name}, {scale_work.WORK} found": job_with_work(fn, *statements)
              for name, (fn, *statements) in JOBS_WITH_WORK.items()})


def timed(path: Path, context: dict, round_number: int) -> tuple[float, int]:
    prepared = path.setup(context, round_number) if path.setup else None
    connection.queries_log.clear()  # a full log (9,000 queries) would capture nothing
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        for _ in range(path.repeat):
            path.run(context, prepared)
        elapsed = (time.perf_counter() - started) * 1000
    return elapsed / path.repeat, len(captured.captured_queries) // path.repeat


def worst_plan(path: Path, context: dict, round_number: int) -> dict:
    """Runs the path once more and EXPLAIN ANALYZEs each of its statements
    (in a transaction rolled back); the scan that reads the most rows for
    what its statement returns."""
    prepared = path.setup(context, round_number) if path.setup else None
    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as captured:
        path.run(context, prepared)
    if not captured.captured_queries:
        raise RuntimeError("no statement captured")
    worst = {"read": 0, "returned": 0, "where": "", "flagged": False, "ratio": 0.0}
    for query in captured.captured_queries:
        for found in _scans(query["sql"]):
            if (found["flagged"], found["ratio"]) > (worst["flagged"], worst["ratio"]):
                worst = found
    return worst


def _scans(sql: str) -> list[dict]:
    declared = re.search(r"\bCURSOR\b.*?\bFOR\s+(?=SELECT|WITH)", sql, re.IGNORECASE | re.DOTALL)
    if sql.lstrip().upper().startswith("DECLARE") and declared:  # .iterator()'s server-side cursor
        sql = sql[declared.end():]
    # INSERTs are left out: a row written again would only break a unique key.
    if not sql.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE", "WITH")):
        return []
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
                plan = cursor.fetchone()[0]
            transaction.set_rollback(True)
    except DatabaseError as error:  # shown: a plan that can't be read must not pass for a good one
        print(f"EXPLAIN failed ({type(error).__name__}: {str(error).splitlines()[0]}): {sql[:120]}", flush=True)
        return []
    plan = json.loads(plan) if isinstance(plan, str) else plan
    root = plan[0]["Plan"]
    returned = root["Actual Rows"] * root["Actual Loops"]
    if root["Node Type"] == "ModifyTable" and root.get("Plans"):
        returned = max(returned, root["Plans"][0]["Actual Rows"])
    found = []
    for node in _nodes(root):
        if "Relation Name" not in node and "Index Name" not in node:
            continue
        read = round((node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
                      + node.get("Rows Removed by Index Recheck", 0)) * node["Actual Loops"])
        ratio = read / max(returned, 1)
        where = f"({node['Node Type']} {node.get('Index Name') or node.get('Relation Name')})"
        found.append({"read": read, "returned": returned, "where": where, "ratio": ratio, "sql": sql[:400],
                      "flagged": ratio >= READ_FACTOR and read > READ_FLOOR})
    return found


def _nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def export_memory(context: dict) -> list[dict]:
    """Peak Python memory while the personal export is written, streamed and
    (for comparison) built whole as before, for a person with 10× the other's
    conversations."""
    measured = []
    for who, member in (("a person", context["member"]), ("a person with 10× the conversations", context["big"])):
        tracemalloc.start()
        size = sum(len(chunk.encode()) for chunk in export_user_stream(member))
        streamed_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        tracemalloc.start()
        whole = len(json.dumps(export_user(member), default=str).encode())
        whole_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        threads = Thread.objects.filter(user_id=member.user_id).count()
        measured.append({"who": who, "threads": threads, "bytes": size, "peak_kb": streamed_peak // 1024,
                         "whole_kb": whole_peak // 1024, "whole_bytes": whole})
    return measured
