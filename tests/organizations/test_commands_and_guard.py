import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from assistant_engine.organizations.members import (
    NoOrganization,
    OrganizationNotFound,
    OrganizationRequired,
    resolve_member,
)
from assistant_engine.organizations.models import Membership, Organization


def test_create_organization_command(db, capsys):
    call_command("create_organization", "initech", "--name", "Initech", "--monthly-credits", "250")
    organization = Organization.objects.get(slug="initech")
    assert organization.name == "Initech" and organization.monthly_credits == 250
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_organization", "initech", "--name", "Again", "--monthly-credits", "1")
    with pytest.raises(CommandError, match="zero or more"):
        call_command("create_organization", "other", "--name", "Other", "--monthly-credits", "-5")


def test_add_member_command_creates_the_user_and_sets_the_role(acme):
    call_command("add_member", "acme", "alice", "--role", "admin", "--create-user", "--password", "s3cret-pass")
    alice = get_user_model().objects.get(username="alice")
    assert alice.check_password("s3cret-pass")
    assert Membership.objects.get(user=alice, organization=acme).role == "admin"
    call_command("add_member", "acme", "alice")  # idempotent, and the role can change back
    assert Membership.objects.get(user=alice, organization=acme).role == "member"


def test_add_member_command_refuses_unknown_things(acme):
    with pytest.raises(CommandError, match="No organization"):
        call_command("add_member", "nope", "alice", "--create-user", "--password", "x")
    with pytest.raises(CommandError, match="No user named"):
        call_command("add_member", "acme", "ghost")
    with pytest.raises(CommandError, match="needs --password"):
        call_command("add_member", "acme", "bob", "--create-user")


def test_resolve_member_cases(owner, globex):
    member = resolve_member(owner.user, None)
    assert (member.organization_id, member.user_id, member.role) == (owner.organization.id, owner.user.id, "member")
    with pytest.raises(OrganizationNotFound):
        resolve_member(owner.user, "globex")
    Membership.objects.create(organization=globex, user=owner.user, role="admin")
    with pytest.raises(OrganizationRequired):
        resolve_member(owner.user, None)
    assert resolve_member(owner.user, "globex").is_admin
    Membership.objects.filter(user=owner.user).delete()
    with pytest.raises(NoOrganization):
        resolve_member(owner.user, None)


def run_settings(env: dict) -> subprocess.CompletedProcess:
    code = "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup(); print('ok')"
    clean = {k: v for k, v in __import__("os").environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    return subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True,
                          timeout=60)


def test_production_settings_refuse_to_start_without_a_secret():
    result = run_settings({"DEBUG": "0"})
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr
    assert run_settings({"DEBUG": "0", "SECRET_KEY": "x" * 50}).stdout.strip() == "ok"
    assert run_settings({"DEBUG": "1"}).stdout.strip() == "ok"


def test_a_malformed_setting_fails_loudly():
    result = run_settings({"DEBUG": "perhaps"})
    assert result.returncode != 0 and "DEBUG must be a boolean" in result.stderr


def test_database_url_selects_postgres():
    code = ("import os; os.environ.update(SECRET_KEY='x', DATABASE_URL='postgres://u:p@db.example:6543/app');"
            "from config import settings as s; d=s.DATABASES['default'];"
            "print(d['ENGINE'], d['HOST'], d['PORT'], d['NAME'])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["django.db.backends.postgresql", "db.example", "6543", "app"]


def test_the_openapi_schema_documents_the_api(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in ("/api/conversations", "/api/conversations/{conversation_id}", "/api/chat", "/api/credits",
                 "/api/turns/{turn_id}", "/api/turns/{turn_id}/events"):
        assert path in paths, path
    assert client.get("/api/docs/").status_code == 200
