"""Sealing an organization's own provider key (AES-GCM, key derived by HKDF).

The sealing key is derived with HKDF-SHA256 from a dedicated secret,
ASSISTANT_KEYS_SECRET — not SECRET_KEY, so rotating Django's secret (sessions,
signatures) never makes the keys unreadable. The organization id *and* the
provider are the associated data: a key sealed for one organization or one
provider cannot be opened for another (nor moved to another row). Each seal
uses a fresh random 96-bit nonce. Only a hint (the last 4 characters) is ever
shown again.

Rotation, as with SECRET_KEY_FALLBACKS: set the new secret, list the old one in
ASSISTANT_KEYS_SECRET_FALLBACKS (keys still open), run `manage.py
reseal_provider_keys` (every key sealed again under the new secret), then drop
the fallback.

Sealed form: "v2." + URL-safe base64 of nonce (12 bytes) + ciphertext and tag.
"v1." is the legacy form (key derived from SECRET_KEY, organization only as
associated data): it is only ever opened to be sealed again as v2 (migration
assistant/0004 and `reseal_provider_keys`).
"""

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

VERSION = "v2."
LEGACY_VERSION = "v1."
NONCE_BYTES = 12
_INFO = {VERSION: b"assistant provider key sealing v2", LEGACY_VERSION: b"assistant provider key sealing v1"}
# Persisted: every stored key was sealed with it. It keeps its first module's name and must
# never follow a rename (tests/providers/test_secrets.py opens a key sealed before the move).
_SALT = b"assistant.secrets"
HINT_CHARS = 4


class SecretError(ValueError):
    """A sealed secret could not be opened: altered, malformed, or sealed for another organization or provider."""


def _derive(secret: str, version: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO[version]).derive(secret.encode())


def _current_secrets() -> list[str]:
    """The secret that seals, then the fallbacks that still open (rotation)."""
    return [settings.ASSISTANT_KEYS_SECRET, *settings.ASSISTANT_KEYS_SECRET_FALLBACKS]


def _legacy_secrets() -> list[str]:
    return [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]


def _associated_data(organization_id: int, provider: str) -> bytes:
    return f"organization:{int(organization_id)};provider:{provider}".encode()


def _legacy_associated_data(organization_id: int) -> bytes:
    return f"organization:{int(organization_id)}".encode()


def seal_secret(plaintext: str, organization_id: int, provider: str) -> str:
    if not plaintext:
        raise ValueError("Nothing to seal.")
    if not provider:
        raise ValueError("A sealed key is bound to a provider.")
    nonce = os.urandom(NONCE_BYTES)
    key = _derive(settings.ASSISTANT_KEYS_SECRET, VERSION)
    sealed = AESGCM(key).encrypt(nonce, plaintext.encode(), _associated_data(organization_id, provider))
    return VERSION + base64.urlsafe_b64encode(nonce + sealed).decode()


def _split(sealed: str, version: str) -> tuple[bytes, bytes]:
    if not sealed.startswith(version):
        raise SecretError("Unknown sealed-secret format.")
    try:
        raw = base64.urlsafe_b64decode(sealed[len(version) :].encode())
    except (binascii.Error, ValueError):
        raise SecretError("Malformed sealed secret.") from None
    nonce, body = raw[:NONCE_BYTES], raw[NONCE_BYTES:]
    if len(nonce) != NONCE_BYTES or not body:
        raise SecretError("Malformed sealed secret.")
    return nonce, body


def _open_with(secrets: list[str], version: str, sealed: str, associated_data: bytes) -> str:
    nonce, body = _split(sealed, version)
    for secret in secrets:
        try:
            return AESGCM(_derive(secret, version)).decrypt(nonce, body, associated_data).decode()
        except InvalidTag:
            continue
    raise SecretError("The sealed secret does not open for this organization and provider.")


def open_secret(sealed: str, organization_id: int, provider: str) -> str:
    """The plaintext; raises SecretError for anything else (never says which)."""
    return _open_with(_current_secrets(), VERSION, sealed, _associated_data(organization_id, provider))


def reseal(sealed: str, organization_id: int, provider: str) -> str | None:
    """The key sealed again under the current secret, or None when it already is.

    Opens v2 under the current secret or a fallback, and legacy v1 under
    SECRET_KEY or SECRET_KEY_FALLBACKS. Raises SecretError when nothing opens it.
    """
    if sealed.startswith(LEGACY_VERSION):
        plaintext = _open_with(_legacy_secrets(), LEGACY_VERSION, sealed, _legacy_associated_data(organization_id))
        return seal_secret(plaintext, organization_id, provider)
    associated_data = _associated_data(organization_id, provider)
    try:
        _open_with(_current_secrets()[:1], VERSION, sealed, associated_data)
        return None
    except SecretError:
        plaintext = _open_with(_current_secrets(), VERSION, sealed, associated_data)
        return seal_secret(plaintext, organization_id, provider)


def reseal_all(provider_key_model) -> tuple[int, list[int]]:
    """Seal every provider key again under the current secret; one row at a time.

    Takes the model class so the data migration can pass its historical model.
    Returns (how many were sealed again, ids of rows nothing opens — left as they
    are: the organization must enter that key again).
    """
    resealed, unreadable = 0, []
    for key in provider_key_model.objects.order_by("pk").only("pk", "organization_id", "provider", "sealed"):
        try:
            fresh = reseal(key.sealed, key.organization_id, key.provider)
        except SecretError:
            unreadable.append(key.pk)
            continue
        if fresh is not None:
            # Conditional: a key replaced meanwhile is not overwritten.
            resealed += provider_key_model.objects.filter(pk=key.pk, sealed=key.sealed).update(sealed=fresh)
    return resealed, unreadable


def key_hint(plaintext: str) -> str:
    """What may be shown again: the last 4 characters, and only of a key long
    enough that they give little away."""
    plaintext = plaintext.strip()
    if len(plaintext) < 3 * HINT_CHARS:
        return "…"
    return "…" + plaintext[-HINT_CHARS:]
