"""An organization's own provider key: verified when saved, used by its turns
(the fake provider receives it on the wire, through the real `openai` SDK),
the deployment's key for an organization without one, and which key paid
recorded on the turn and in the ledger."""

import io
import logging
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from assistant.chat import chat_submit
from assistant.loop import run_turn
from assistant.models import Turn
from assistant.turn.outcome import OWN_KEY_REFUSED_NOTICE
from assistant_engine.organizations.models import OrganizationChange
from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.org_models import (
    DEPLOYMENT,
    KeyRefused,
    NotOrganizationAdmin,
    provider_key_remove,
    provider_key_save,
)
from conversations.models import Message
from credits.models import LedgerEntry
from tests.conftest import make_person
from tests.fakes.wire_servers import (
    WireServer,
    json_reply,
    openai_chunk,
    openai_completion,
    openai_sse,
    openai_usage_chunk,
)

ORG_KEY = "ik-organization-key-7f3a"
DEPLOYMENT_KEY = "ik-deployment-token-0000"
# qwen3: USD 0.50 in / 1.50 out per million tokens → 1000 in + 200 out = 800 micros.
COST_MICROS = 800


@pytest.fixture
def provider(settings):
    with WireServer() as wire:
        settings.ASSISTANT_MODEL = "infomaniak-qwen3"
        settings.INFOMANIAK_AI_TOKEN = DEPLOYMENT_KEY
        settings.INFOMANIAK_AI_PRODUCT_ID = "4242"
        settings.INFOMANIAK_AI_BASE_URL = wire.url + "/v1"
        yield wire


@pytest.fixture
def admin(acme):
    return make_person("ada", acme, role="admin")


def verification_ok():
    return openai_completion()


def answer():
    return openai_sse([
        openai_chunk({"role": "assistant", "content": "Grüezi"}), openai_chunk({}, finish_reason="stop"),
        openai_usage_chunk(1000, 200),
    ])


def refused():
    return json_reply(401, {"error": {"message": "RAW-PROVIDER-TEXT invalid key", "type": "invalid_request_error"}})


def run(person, message="Hello") -> Turn:
    submitted = chat_submit(person.member, message=message, conversation_id=None)
    run_turn(submitted.turn_id)
    return Turn.objects.get(id=submitted.turn_id)


def save_key(admin, provider, key=ORG_KEY):
    provider.reply(verification_ok())
    return provider_key_save(admin.member, provider="infomaniak", plaintext=key)


def settle_entry(turn) -> LedgerEntry:
    return LedgerEntry.objects.get(turn_id=turn.id, kind=LedgerEntry.Kind.SETTLE)


def test_a_turn_of_an_organization_with_its_own_key_sends_that_key(provider, admin, owner, caplog):
    caplog.set_level(logging.DEBUG)
    key = save_key(admin, provider)
    provider.reply(answer())

    turn = run(owner)

    verify, call = provider.requests
    assert verify.headers["authorization"] == f"Bearer {ORG_KEY}" and verify.json()["max_tokens"] == 1
    assert call.headers["authorization"] == f"Bearer {ORG_KEY}"
    assert turn.status == Turn.Status.DONE and turn.key_source == key.hint == "…7f3a"
    assert ORG_KEY not in caplog.text


def test_an_organization_without_a_key_runs_on_the_deployments(provider, admin, outsider):
    save_key(admin, provider)  # Acme's key: never Globex's
    provider.reply(answer())

    turn = run(outsider)

    assert provider.requests[-1].headers["authorization"] == f"Bearer {DEPLOYMENT_KEY}"
    assert turn.key_source == DEPLOYMENT
    assert turn.cost_micros == COST_MICROS and settle_entry(turn).used_delta == COST_MICROS
    assert settle_entry(turn).reason.startswith("turn cost:")  # not the own key's wording


def test_an_own_key_turn_records_its_cost_and_charges_nothing_by_default(provider, admin, owner):
    save_key(admin, provider)
    provider.reply(answer())

    turn = run(owner)

    entry = settle_entry(turn)
    assert turn.cost_micros == COST_MICROS
    assert entry.used_delta == 0 and f"provider cost {COST_MICROS} micros" in entry.reason
    assert entry.reserved_delta == -turn.reserved_micros


def test_an_own_key_turn_charges_the_configured_share(provider, admin, owner, settings):
    settings.CREDITS_OWN_KEY_RATE = Decimal("0.25")
    save_key(admin, provider)
    provider.reply(answer())

    turn = run(owner)

    assert settle_entry(turn).used_delta == COST_MICROS // 4


def test_a_key_the_provider_refuses_is_not_saved(provider, admin):
    provider.reply(refused())

    with pytest.raises(KeyRefused) as refusal:
        provider_key_save(admin.member, provider="infomaniak", plaintext=ORG_KEY)

    assert refusal.value.kind == "auth" and "RAW-PROVIDER-TEXT" not in str(refusal.value)
    assert not ProviderKey.objects.exists() and not OrganizationChange.objects.exists()


def test_a_key_refused_during_a_turn_fails_it_with_a_notice_for_the_admins(provider, admin, owner):
    save_key(admin, provider)
    provider.reply(refused())

    turn = run(owner)

    reply = Message.objects.get(turn_id=turn.id, role=Message.Role.ASSISTANT)
    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.API
    assert reply.notice == OWN_KEY_REFUSED_NOTICE


def test_replacing_and_removing_a_key_are_recorded_with_the_hint_only(provider, admin):
    save_key(admin, provider)
    save_key(admin, provider, key="ik-second-organization-key-9b9b")
    assert ProviderKey.objects.get().hint == "…9b9b"

    assert provider_key_remove(admin.member, provider="infomaniak") is True

    changes = list(OrganizationChange.objects.order_by("id").values_list("action", "detail", "actor_username"))
    assert changes == [
        ("provider_key_saved", "infomaniak …7f3a", "ada"),
        ("provider_key_saved", "infomaniak …9b9b", "ada"),
        ("provider_key_removed", "infomaniak", "ada"),
    ]


def test_a_member_without_the_admin_role_cannot_change_keys(provider, owner):
    with pytest.raises(NotOrganizationAdmin):
        provider_key_save(owner.member, provider="infomaniak", plaintext=ORG_KEY)
    with pytest.raises(NotOrganizationAdmin):
        provider_key_remove(owner.member, provider="infomaniak")
    assert provider.requests == []


def test_set_provider_key_reads_the_key_from_standard_input(provider, acme):
    provider.reply(verification_ok())
    out = io.StringIO()

    call_command("set_provider_key", "acme", "infomaniak", stdin=io.StringIO(ORG_KEY + "\n"), stdout=out)

    assert ProviderKey.objects.get(organization=acme).hint == "…7f3a"
    assert provider.requests[0].headers["authorization"] == f"Bearer {ORG_KEY}"
    assert ORG_KEY not in out.getvalue()
    change = OrganizationChange.objects.get()
    assert (change.action, change.actor_username) == ("provider_key_saved", "")


def test_set_provider_key_refuses_a_refused_key_an_empty_input_and_an_unknown_organization(provider, acme):
    provider.reply(refused())
    with pytest.raises(CommandError, match=r"refused the key \(auth\)"):
        call_command("set_provider_key", "acme", "infomaniak", stdin=io.StringIO(ORG_KEY))
    with pytest.raises(CommandError, match="No key on standard input"):
        call_command("set_provider_key", "acme", "infomaniak", stdin=io.StringIO(""))
    with pytest.raises(CommandError, match="No organization"):
        call_command("set_provider_key", "nope", "infomaniak", stdin=io.StringIO(ORG_KEY))
    assert not ProviderKey.objects.exists()
