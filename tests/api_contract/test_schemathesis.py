"""Schemathesis against a real API server process: every operation of the
OpenAPI document, all checks (server errors, status codes, content types,
response schemas, negative-data rejection, positive-data acceptance, object-level
authorization between two people, …), the examples, coverage, fuzzing and
stateful phases, bounded in time. 0 failures, and enough requests to mean it.

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
EXCLUDED_OPERATIONS: tuple[str, ...] = ()
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
    with api_server(STREAM_MAX_SECONDS="4") as server:
        result = run_schemathesis(server.url, config, tmp_path / "report")
        if only_the_tool_crashed(result):
            result = run_schemathesis(server.url, config, tmp_path / "report-again")
        requests = server.requests_served()
    with capsys.disabled():  # the count is part of the run's report, even under -q
        print(f"\nschemathesis: {requests} requests answered by the server, exit code {result.returncode}")
    assert result.returncode == 0, result.stdout[-20000:]
    assert requests >= MIN_REQUESTS
    # Thousands of chats, refusals and deletes later, the money still adds up.
    assert not credits_audit_mismatches()
    assert CreditAccount.objects.get(organization=acme).reserved_micros > 0  # the turns did reserve


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
        f"[auth.wfc]\npath = {json.dumps(str(folder / 'auth.json'))}\n"
        f"peers = {json.dumps(list(headers))}\n"
    )
    return config


def run_schemathesis(base_url: str, config: Path, report_dir: Path) -> subprocess.CompletedProcess:
    excluded = [arg for operation in EXCLUDED_OPERATIONS for arg in ("--exclude-operation-id", operation)]
    return subprocess.run(
        [str(Path(sys.executable).parent / "st"), "--config-file", str(config), "run", f"{base_url}/api/schema/",
         "--checks", "all", "--mode", "all", "--phases", "examples,coverage,fuzzing,stateful",
         "--max-time", str(MAX_SECONDS), "--workers", "2", "--request-timeout", "30", "--seed", SEED,
         "--report", "junit", "--report-dir", str(report_dir), *excluded],
        capture_output=True, text=True, timeout=MAX_SECONDS + 600, check=False, cwd=settings.RUN_DIR,
        env={**os.environ, "PYTHONPATH": str(PROJECT), "API_CONTRACT_SEED": str(config.parent / "seed.json")},
    )
