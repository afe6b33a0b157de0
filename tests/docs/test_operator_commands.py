"""The README's operator commands, run as printed: each line of the block under
"Operators' commands", in order, by bash from the checkout, on a fresh demo
database (migrate + setup_demo, as `make run` makes it). Only what the README
leaves to the operator is filled in: the database's location (DATABASE_URL,
RUN_DIR: a temporary folder instead of the checkout's), the `…` placeholders
and $KEY, and the two outside services pointed at local fakes of their wire
protocol (INFOMANIAK_AI_BASE_URL, TELEGRAM_API_BASE_URL). Each must exit 0 and
leave its effect in the database or on the fake."""

import hashlib
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.fakes.telegram_api import TOKEN as BOT_TOKEN
from tests.fakes.telegram_api import FakeBotApi
from tests.fakes.wire_servers import WireServer, openai_completion

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "README.md").read_text().split("## Operators' commands", 1)[1].split("\n## ", 1)[0]
BLOCK = re.search(r"^```sh\n(.*?)^```$", SECTION, re.M | re.S).group(1)
LINES = [line for line in BLOCK.splitlines() if line.strip()]

# It makes its own SQLite database whatever the suite's: once is enough (the SQLite pass).
pytestmark = pytest.mark.skipif(os.environ.get("DATABASE_URL", "").startswith("postgres"),
                                reason="runs on its own SQLite demo database, in the SQLite pass")

PASSWORD = "alice-long-password-1"  # noqa: S105 - a test login
ORG_KEY = "ik-operator-key-7f3a"
# What each `…` of a line stands for, by what precedes it.
PLACEHOLDERS = {
    "--password '…'": f"--password '{PASSWORD}'",
    "INFOMANIAK_AI_PRODUCT_ID=…": "INFOMANIAK_AI_PRODUCT_ID=4242",
    "TELEGRAM_BOT_TOKEN=…": f"TELEGRAM_BOT_TOKEN={BOT_TOKEN}",
    "TELEGRAM_WEBHOOK_SECRET=…": "TELEGRAM_WEBHOOK_SECRET=operator-webhook-secret",
}


def filled(line: str) -> str:
    for printed, value in PLACEHOLDERS.items():
        line = line.replace(printed, value)
    assert "…" not in line, f"a placeholder the test does not know: {line}"
    return line


def test_the_block_is_the_commands_through_the_wrapper():
    assert len(LINES) == 11
    assert all("scripts/manage.sh " in line and ".venv/bin/python" not in line for line in LINES)


@pytest.fixture
def demo(tmp_path):
    """make run's database, made as make run makes it, in a temporary folder."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DEBUG", "PYTEST"))}
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}", RUN_DIR=str(tmp_path / "run"),
               PYTHONPATH=str(ROOT), KEY=ORG_KEY)
    for name in ("REDIS_URL", "CELERY_BROKER_URL", "ASSISTANT_MODEL", "TELEGRAM_BOT_TOKEN", "SECRET_KEY"):
        env.pop(name, None)
    for command in ("migrate --noinput", "setup_demo"):
        done = subprocess.run(f"scripts/manage.sh {command}", shell=True, cwd=ROOT, env=env, check=True,  # noqa: S602
                              capture_output=True, text=True, timeout=120)
    # What make run prints says who administers the demo organization.
    assert "admin / admin-password: the demo organization's administrator" in done.stdout
    return env, tmp_path / "demo.sqlite3"


def run(line: str, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run(["bash", "-c", filled(line)], cwd=ROOT, env=env, capture_output=True, text=True,  # noqa: S603
                          timeout=120)
    assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    assert "make run's environment (DEBUG=1, the database in DATABASE_URL)" in done.stderr
    return done


def test_each_command_works_as_printed_against_the_demo(demo):
    env, database = demo
    db = sqlite3.connect(database)

    def one(sql: str, *params):
        return db.execute(sql, params).fetchone()

    with WireServer() as provider, FakeBotApi() as telegram:
        provider.reply(openai_completion())
        env.update(INFOMANIAK_AI_BASE_URL=provider.url + "/v1", TELEGRAM_API_BASE_URL=telegram.base_url)
        out = {line.split("scripts/manage.sh ")[1].split()[0]: run(line, env).stdout for line in LINES}
        webhooks = telegram.of("setWebhook")
        verification = provider.requests

    acme = one("SELECT id, monthly_credits FROM assistant_organizations_organization WHERE slug = 'acme'")
    assert acme is not None and acme[1] == 5000
    alice = one("SELECT id FROM auth_user WHERE username = 'alice'")[0]
    assert one("SELECT role, monthly_cap_credits FROM assistant_organizations_membership "
               "WHERE user_id = ? AND organization_id = ?", alice, acme[0]) == ("admin", 500)
    assert "offline" in out["assistant_models"]
    assert out["credits_audit"].strip()
    assert out["credits_days_rebuild"].startswith("Day totals rebuilt for ")
    assert one("SELECT hint FROM assistant_providerkey WHERE organization_id = ?", acme[0]) == ("…7f3a",)
    assert verification[0].headers["authorization"] == f"Bearer {ORG_KEY}"
    token = out["create_token"].strip()
    assert re.fullmatch(r"\S{20,}", token)
    assert one("SELECT COUNT(*) FROM assistant_organizations_apitoken WHERE user_id = ? AND token_key = ?",
               alice, token[:15]) == (1,)
    assert out["reseal_provider_keys"].strip()
    code = out["telegram_link_code"].strip()
    assert one("SELECT COUNT(*) FROM telegram_surface_linkcode WHERE code_hash = ?",
               hashlib.sha256(code.encode()).hexdigest()) == (1,)
    assert [call.params["url"] for call in webhooks] == ["https://assistant.example.com/telegram/webhook"]
    # The demo organization itself: administered by `admin`, as the section says.
    assert one("SELECT m.role FROM assistant_organizations_membership m JOIN auth_user u ON u.id = m.user_id "
               "JOIN assistant_organizations_organization o ON o.id = m.organization_id "
               "WHERE u.username = 'admin' AND o.slug = 'demo'") == ("admin",)
