"""Sealed provider keys: AES-GCM under an HKDF key of ASSISTANT_KEYS_SECRET (not
SECRET_KEY), bound to the organization and the provider; rotation through
fallbacks; legacy v1 rows sealed again; only a hint is ever shown again."""

import base64
import os

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.core.management import call_command

from assistant_engine.providers import sealing
from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.sealing import SecretError, key_hint, open_secret, reseal_all, seal_secret
from tests.fakes.wire_servers import WireServer, json_reply, openai_completion

KEY = "sk-live-0123456789abcdefWXYZ"


def test_a_sealed_key_opens_for_its_organization():
    sealed = seal_secret(KEY, 7, "bedrock")
    assert KEY not in sealed and sealed.startswith("v2.")
    assert open_secret(sealed, 7, "bedrock") == KEY


# Sealed at 64744c0 (assistant/secrets.py, before the providers app) with the secret below.
SEALED_BEFORE_THE_MOVE = "v2.6I9wZkYkzaq6az9Rba0goxjG-JbrUzxuMxZs9Gs9WctCMnRAY5qNwIdQrt8RxAbeV795FEqR9QSV"


def test_a_key_sealed_by_an_earlier_release_still_opens(settings):
    """The derivation's salt and info are persisted constants: a key stored
    before a refactor must open after it (a rename once changed the salt)."""
    settings.ASSISTANT_KEYS_SECRET = "a-fixed-secret-for-the-sealed-sample"
    settings.ASSISTANT_KEYS_SECRET_FALLBACKS = []
    assert open_secret(SEALED_BEFORE_THE_MOVE, 42, "anthropic") == "sk-ant-sealed-before-the-move"


def test_each_seal_uses_a_fresh_nonce():
    assert seal_secret(KEY, 7, "bedrock") != seal_secret(KEY, 7, "bedrock")


def test_a_key_sealed_for_one_organization_does_not_open_for_another():
    with pytest.raises(SecretError):
        open_secret(seal_secret(KEY, 7, "bedrock"), 8, "bedrock")


@pytest.mark.parametrize("position", [3, 10, 20, -1])
def test_a_tampered_key_does_not_open(position):
    sealed = seal_secret(KEY, 7, "bedrock")
    flipped = "A" if sealed[position] != "A" else "B"
    with pytest.raises(SecretError):
        open_secret(sealed[:position] + flipped + sealed[position + 1 :], 7, "bedrock")


@pytest.mark.parametrize("sealed", ["", "v2.", "v2.%%%", "v3.AAAA", "v2.AAAA", "v1.AAAA"])
def test_a_malformed_key_does_not_open(sealed):
    with pytest.raises(SecretError):
        open_secret(sealed, 7, "bedrock")


def test_a_key_sealed_for_one_provider_does_not_open_for_another():
    with pytest.raises(SecretError):
        open_secret(seal_secret(KEY, 7, "bedrock"), 7, "anthropic")


def test_another_keys_secret_does_not_open_it(settings):
    sealed = seal_secret(KEY, 7, "bedrock")
    settings.ASSISTANT_KEYS_SECRET = "another-deployment"
    with pytest.raises(SecretError):
        open_secret(sealed, 7, "bedrock")


def test_rotating_secret_key_leaves_the_keys_readable(settings):
    sealed = seal_secret(KEY, 7, "bedrock")
    settings.SECRET_KEY = "a-rotated-django-secret"
    assert open_secret(sealed, 7, "bedrock") == KEY


def test_a_rotated_keys_secret_opens_through_its_fallback_until_resealed(settings, acme):
    key = ProviderKey.objects.create(organization=acme, provider="bedrock", sealed=seal_secret(KEY, acme.pk,
                                     "bedrock"), hint=key_hint(KEY))
    old_secret = settings.ASSISTANT_KEYS_SECRET
    settings.ASSISTANT_KEYS_SECRET = "the-new-keys-secret"
    settings.ASSISTANT_KEYS_SECRET_FALLBACKS = [old_secret]
    assert open_secret(key.sealed, acme.pk, "bedrock") == KEY

    call_command("reseal_provider_keys", stdout=open(os.devnull, "w"))  # noqa: SIM115
    key.refresh_from_db()
    settings.ASSISTANT_KEYS_SECRET_FALLBACKS = []
    assert open_secret(key.sealed, acme.pk, "bedrock") == KEY


def legacy_v1_seal(plaintext: str, organization_id: int, django_secret: str) -> str:
    """What the application stored before ASSISTANT_KEYS_SECRET (written out here on purpose)."""
    nonce = os.urandom(12)
    body = AESGCM(sealing._derive(django_secret, "v1.")).encrypt(
        nonce, plaintext.encode(), f"organization:{organization_id}".encode()
    )
    return "v1." + base64.urlsafe_b64encode(nonce + body).decode()


def test_legacy_v1_keys_are_sealed_again_as_v2_and_unreadable_ones_reported(settings, acme, globex):
    readable = ProviderKey.objects.create(organization=acme, provider="infomaniak", hint="…WXYZ",
                                          sealed=legacy_v1_seal(KEY, acme.pk, settings.SECRET_KEY))
    lost = ProviderKey.objects.create(organization=globex, provider="infomaniak", hint="…WXYZ",
                                      sealed=legacy_v1_seal(KEY, globex.pk, "a-secret-nobody-has-any-more"))
    with pytest.raises(SecretError):
        open_secret(readable.sealed, acme.pk, "infomaniak")  # v1 is never used as it is

    assert reseal_all(ProviderKey) == (1, [lost.pk])
    readable.refresh_from_db()
    lost.refresh_from_db()
    assert readable.sealed.startswith("v2.") and open_secret(readable.sealed, acme.pk, "infomaniak") == KEY
    assert lost.sealed.startswith("v1.")
    assert reseal_all(ProviderKey) == (0, [lost.pk])  # already current: nothing written


def test_the_hint_is_the_last_four_characters_of_a_long_enough_key():
    assert key_hint(KEY) == "…WXYZ"
    assert key_hint("short-key") == "…"


@pytest.fixture
def infomaniak(settings):
    """A local server speaking the provider's wire protocol: the key is verified when saved."""
    with WireServer() as wire:
        settings.INFOMANIAK_AI_PRODUCT_ID = "4242"
        settings.INFOMANIAK_AI_BASE_URL = wire.url + "/v1"
        yield wire


def test_staff_add_a_key_in_the_admin_and_see_only_its_hint(admin_client, acme, infomaniak):
    infomaniak.reply(openai_completion())
    response = admin_client.post("/admin/assistant_providers/providerkey/add/", {
        "organization": acme.pk, "provider": "infomaniak", "key": KEY,
    })
    assert response.status_code == 302
    assert infomaniak.requests[0].headers["authorization"] == f"Bearer {KEY}"
    key = ProviderKey.objects.get()
    assert key.hint == "…WXYZ" and key.created_by.username == "admin"
    assert open_secret(key.sealed, acme.pk, "infomaniak") == KEY
    for page in ("/admin/assistant_providers/providerkey/", f"/admin/assistant_providers/providerkey/{key.pk}/change/"):
        html = admin_client.get(page).content.decode()
        assert "…WXYZ" in html and KEY not in html and key.sealed not in html


def test_a_key_the_provider_refuses_in_the_admin_is_not_saved(admin_client, acme, infomaniak):
    infomaniak.reply(json_reply(401, {"error": {"message": "RAW-PROVIDER-TEXT", "type": "invalid_request_error"}}))

    response = admin_client.post("/admin/assistant_providers/providerkey/add/", {
        "organization": acme.pk, "provider": "infomaniak", "key": KEY,
    })

    html = response.content.decode()
    assert response.status_code == 200 and "The provider refused this key (auth)" in html
    assert "RAW-PROVIDER-TEXT" not in html and KEY not in html
    assert not ProviderKey.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_migration_seals_existing_v1_keys_again(settings):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("assistant", "0003_erasure_permissions_drop_turn_assistant_message")]
    after = [("assistant", "0004_reseal_provider_keys_under_keys_secret")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old_apps = executor.loader.project_state(before).apps
    organization = old_apps.get_model("assistant_organizations", "Organization").objects.create(slug="old", name="Old")
    old_apps.get_model("assistant", "ProviderKey").objects.create(
        organization=organization, provider="bedrock", hint="…WXYZ",
        sealed=legacy_v1_seal(KEY, organization.pk, settings.SECRET_KEY),
    )
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        executor.loader.build_graph()
        sealed = executor.loader.project_state(after).apps.get_model("assistant", "ProviderKey").objects.get().sealed
        assert sealed.startswith("v2.") and open_secret(sealed, organization.pk, "bedrock") == KEY
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
