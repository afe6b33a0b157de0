"""Sealing an organization's own provider key (AES-GCM, key derived by HKDF).

The sealing key is derived from the deployment secret (SECRET_KEY) with
HKDF-SHA256; the organization id is the associated data, so a key sealed for
one organization cannot be opened for another (nor moved to its row). Each
seal uses a fresh random 96-bit nonce. Only a hint (the last 4 characters) is
ever shown again.

Sealed form: "v1." + URL-safe base64 of nonce (12 bytes) + ciphertext and tag.
"""

import base64
import binascii
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

VERSION = "v1."
NONCE_BYTES = 12
_INFO = b"assistant provider key sealing v1"
_SALT = b"assistant.secrets"
HINT_CHARS = 4


class SecretError(ValueError):
    """A sealed secret could not be opened: altered, malformed, or sealed for another organization."""


def _sealing_key() -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO).derive(settings.SECRET_KEY.encode())


def _associated_data(organization_id: int) -> bytes:
    return f"organization:{int(organization_id)}".encode()


def seal_secret(plaintext: str, organization_id: int) -> str:
    if not plaintext:
        raise ValueError("Nothing to seal.")
    nonce = os.urandom(NONCE_BYTES)
    sealed = AESGCM(_sealing_key()).encrypt(nonce, plaintext.encode(), _associated_data(organization_id))
    return VERSION + base64.urlsafe_b64encode(nonce + sealed).decode()


def open_secret(sealed: str, organization_id: int) -> str:
    """The plaintext; raises SecretError for anything else (never says which)."""
    if not sealed.startswith(VERSION):
        raise SecretError("Unknown sealed-secret format.")
    try:
        raw = base64.urlsafe_b64decode(sealed[len(VERSION) :].encode())
    except (binascii.Error, ValueError):
        raise SecretError("Malformed sealed secret.") from None
    nonce, body = raw[:NONCE_BYTES], raw[NONCE_BYTES:]
    if len(nonce) != NONCE_BYTES or not body:
        raise SecretError("Malformed sealed secret.")
    try:
        return AESGCM(_sealing_key()).decrypt(nonce, body, _associated_data(organization_id)).decode()
    except InvalidTag:
        raise SecretError("The sealed secret does not open for this organization.") from None


def key_hint(plaintext: str) -> str:
    """What may be shown again: the last 4 characters, and only of a key long
    enough that they give little away."""
    plaintext = plaintext.strip()
    if len(plaintext) < 3 * HINT_CHARS:
        return "…"
    return "…" + plaintext[-HINT_CHARS:]
