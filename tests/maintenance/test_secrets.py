"""Sealed provider keys: AES-GCM under an HKDF key of the deployment secret,
bound to the organization; only a hint is ever shown again."""

import pytest

from assistant.models import ProviderKey
from assistant.secrets import SecretError, key_hint, open_secret, seal_secret
from tests.fakes.wire_servers import WireServer, json_reply, openai_completion

KEY = "sk-live-0123456789abcdefWXYZ"


def test_a_sealed_key_opens_for_its_organization():
    sealed = seal_secret(KEY, 7)
    assert KEY not in sealed and sealed.startswith("v1.")
    assert open_secret(sealed, 7) == KEY


def test_each_seal_uses_a_fresh_nonce():
    assert seal_secret(KEY, 7) != seal_secret(KEY, 7)


def test_a_key_sealed_for_one_organization_does_not_open_for_another():
    with pytest.raises(SecretError):
        open_secret(seal_secret(KEY, 7), 8)


@pytest.mark.parametrize("position", [3, 10, 20, -1])
def test_a_tampered_key_does_not_open(position):
    sealed = seal_secret(KEY, 7)
    flipped = "A" if sealed[position] != "A" else "B"
    with pytest.raises(SecretError):
        open_secret(sealed[:position] + flipped + sealed[position + 1 :], 7)


@pytest.mark.parametrize("sealed", ["", "v1.", "v1.%%%", "v2.AAAA", "v1.AAAA"])
def test_a_malformed_key_does_not_open(sealed):
    with pytest.raises(SecretError):
        open_secret(sealed, 7)


def test_another_deployment_secret_does_not_open_it(settings):
    sealed = seal_secret(KEY, 7)
    settings.SECRET_KEY = "another-deployment"
    with pytest.raises(SecretError):
        open_secret(sealed, 7)


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
    response = admin_client.post("/admin/assistant/providerkey/add/", {
        "organization": acme.pk, "provider": "infomaniak", "key": KEY,
    })
    assert response.status_code == 302
    assert infomaniak.requests[0].headers["authorization"] == f"Bearer {KEY}"
    key = ProviderKey.objects.get()
    assert key.hint == "…WXYZ" and key.created_by.username == "admin"
    assert open_secret(key.sealed, acme.pk) == KEY
    for page in ("/admin/assistant/providerkey/", f"/admin/assistant/providerkey/{key.pk}/change/"):
        html = admin_client.get(page).content.decode()
        assert "…WXYZ" in html and KEY not in html and key.sealed not in html


def test_a_key_the_provider_refuses_in_the_admin_is_not_saved(admin_client, acme, infomaniak):
    infomaniak.reply(json_reply(401, {"error": {"message": "RAW-PROVIDER-TEXT", "type": "invalid_request_error"}}))

    response = admin_client.post("/admin/assistant/providerkey/add/", {
        "organization": acme.pk, "provider": "infomaniak", "key": KEY,
    })

    html = response.content.decode()
    assert response.status_code == 200 and "The provider refused this key (auth)" in html
    assert "RAW-PROVIDER-TEXT" not in html and KEY not in html
    assert not ProviderKey.objects.exists()
