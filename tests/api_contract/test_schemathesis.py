"""Schemathesis against a real API server process: every operation of the
OpenAPI document, all checks (server errors, status codes, content types,
response schemas, negative-data rejection, positive-data acceptance, object-level
authorization between two people, …), the examples, coverage, fuzzing and
stateful phases, bounded in time. 0 failures, and enough requests to mean it.

Every operation is in (none excluded), and none is left untested behind a 429:
the server keeps its throttles and storage bounds on, set explicitly high
(CONTRACT_LIMITS), and the run fails if any answer was a 429. A well-formed
request the server won't carry out for what it holds (a model the organization
doesn't allow, a file's bytes) is a documented 422, which the positive-data
check is told a valid request may get (POSITIVE_STATUSES); nothing else is.

The SSE stream (`turn_events`) is in: its events are checked against their
documented schema (one event per item: its name and fields; `data` is JSON text). No worker
runs the turns here, so a stream of a turn still queued ends at the server's
STREAM_MAX_SECONDS, as a client would see it and reconnect: 4 s here, well under
schemathesis's 10 s response-time limit (a stream held for 10 s exceeded it).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from assistant_engine.organizations.models import Organization
from credits.models import CreditAccount
from credits.selectors import credits_audit_mismatches
from tests.api_contract.harness import api_server, auth_header, seed_person
from tests.conftest import make_person
from tests.workers import PROJECT

pytestmark = [pytest.mark.schemathesis, pytest.mark.django_db(transaction=True)]

# Under load (2 shared cores) 180 s gave as few as 1,878 requests; 240 s keeps a margin.
MAX_SECONDS = int(os.environ.get("SCHEMATHESIS_MAX_SECONDS", "240"))
# Fixed, so a failure replays; another seed explores other cases.
SEED = os.environ.get("SCHEMATHESIS_SEED", "1")
MIN_REQUESTS = 2000
# The throttles on, but high enough that no operation is throttled in the run (the
# settings_test default is no throttle at all: here each rate is named explicitly),
# and the storage bounds that answer 429 likewise (no worker reads the PDFs here).
HIGH_RATE = "1000000/minute"
CONTRACT_LIMITS = {
    **{f"THROTTLE_{scope}": HIGH_RATE for scope in ("CHAT", "UPLOADS", "CARDS", "ANON", "MCP")},
    "FILE_UNATTACHED_MAX_BYTES": str(8 * 1024**3), "FILE_ORGANIZATION_UNATTACHED_MAX_BYTES": str(8 * 1024**3),
    "FILE_PDF_READING_PER_PERSON": "1000000", "FILE_PDF_READING_PER_ORGANIZATION": "1000000",
}
# schemathesis's defaults for a valid request, and 422: the documented answer to one the
# organization or the bytes refuse (foundation/openapi.py, ERROR_STATUS; README, "API").
POSITIVE_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "422", "429", "5xx"]
# CPython 3.11's ast module can crash inside hypothesis while it describes one of
# schemathesis's own strategies: a "Runtime Error" of the tool, not a finding
# about the API (once in five full runs here). A run that crashed so and found
# no failure is run again once; a failure is never retried.
TOOL_CRASH = "SystemError: AST constructor recursion depth mismatch"


def test_schemathesis_finds_nothing(tmp_path, capsys):
    acme = Organization.objects.create(slug="acme", name="Acme", monthly_credits=10_000_000)
    people = [make_person("olivia", acme), make_person("colin", acme)]
    seeded = {person.user.username: seed_person(person, label=person.user.username) for person in people}
    config = write_config(tmp_path, people, seeded)
    with api_server(STREAM_MAX_SECONDS="4", **CONTRACT_LIMITS) as server:
        result = run_schemathesis(server.url, config, tmp_path / "report")
        if only_the_tool_crashed(result):
            result = run_schemathesis(server.url, config, tmp_path / "report-again")
        statuses = server.statuses_served()
    throttled = statuses.count(429)
    with capsys.disabled():  # the count is part of the run's report, even under -q
        print(f"\nschemathesis: {len(statuses)} requests answered by the server, {throttled} of them 429, "
              f"exit code {result.returncode}\n{summary_of(result.stdout)}")
    assert result.returncode == 0, result.stdout[-20000:]
    assert len(statuses) >= MIN_REQUESTS
    assert throttled == 0, "an operation was left untested behind a 429"
    # Thousands of chats, refusals and deletes later, the money still adds up.
    assert not credits_audit_mismatches()
    assert CreditAccount.objects.get(organization=acme).reserved_micros > 0  # the turns did reserve


def summary_of(stdout: str) -> str:
    """schemathesis's own closing lines: the operations and phases it ran, and its tally."""
    lines = stdout.strip().splitlines()
    start = next((i for i, line in enumerate(lines) if "SUMMARY" in line), max(0, len(lines) - 30))
    return "\n".join(lines[start:])


def only_the_tool_crashed(result: subprocess.CompletedProcess) -> bool:
    return result.returncode != 0 and TOOL_CRASH in result.stdout and "Failures:" not in result.stdout


def write_config(folder: Path, people, seeded: dict) -> Path:
    """schemathesis.toml: our hooks and check (tests/api_contract/st_hooks.py),
    and a Web Fuzzing Commons auth document with both people, who must not see
    each other's objects (the object_level_authorization check)."""
    headers = {person.user.username: auth_header(person) for person in people}
    auth = {"auth": [
        {"name": name, "fixedHeaders": [{"name": header, "value": value}]}
        for name, (header, value) in headers.items()
    ]}
    (folder / "auth.json").write_text(json.dumps(auth))
    (folder / "seed.json").write_text(json.dumps({
        "people": seeded, "tokens": {value: name for name, (_, value) in headers.items()},
    }))
    config = folder / "schemathesis.toml"
    config.write_text(
        'hooks = "tests.api_contract.st_hooks"\n'
        # NUL is refused in any string the database stores: the schema says so
        # of every text field (a pattern), but it can't of the strings nested
        # in a free JSON value (a tool call's input or result, keys included).
        "[generation]\nallow-x00 = false\n"
        f"[checks.positive_data_acceptance]\nexpected-statuses = {json.dumps(POSITIVE_STATUSES)}\n"
        f"[auth.wfc]\npath = {json.dumps(str(folder / 'auth.json'))}\n"
        f"peers = {json.dumps(list(headers))}\n"
    )
    return config


def run_schemathesis(base_url: str, config: Path, report_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "st"), "--config-file", str(config), "run", f"{base_url}/api/schema/",
         "--checks", "all", "--mode", "all", "--phases", "examples,coverage,fuzzing,stateful",
         "--max-time", str(MAX_SECONDS), "--workers", "2", "--request-timeout", "30", "--seed", SEED,
         "--report", "junit", "--report-dir", str(report_dir)],
        capture_output=True, text=True, timeout=MAX_SECONDS + 600, check=False, cwd=settings.RUN_DIR,
        env={**os.environ, "PYTHONPATH": str(PROJECT), "API_CONTRACT_SEED": str(config.parent / "seed.json")},
    )
