"""The /ai/ client's own ids, mapped onto the server's UUIDs.

An esm-ai-memory client chooses its ids (any 1–200 characters of letters,
digits, `-`, `_`, `:`, `.`), while the rest of the product (the /api/
contract, turns, cards) knows conversations and messages by UUID.

A conversation's client id is the person's own: it is kept in
`Thread.external_id` (unique per person and organization) beside a primary
key the server draws at random, and it is only ever looked up within the
person's own conversations (conversations.selectors.thread_by_client_id).
Two people may choose the same id; no one can learn or occupy another's.

A message's id is unique within its conversation only, so it may name a UUID
derived from it (UUIDv5) without any scope: that UUID is never a primary key.
"""

import re
from uuid import UUID, uuid5

from conversations.selectors import canonical_uuid

CLIENT_ID = re.compile(r"^[A-Za-z0-9_:.\-]{1,200}$")

# Fixed forever: changing it would re-key every stored /ai/ message.
NAMESPACE = UUID("6f1b1c55-8a7e-4c53-9a8e-3d7b2c1e0a41")


def is_client_id(value) -> bool:
    return isinstance(value, str) and CLIENT_ID.match(value) is not None


def message_uuid(client_id: str) -> UUID:
    """Message ids are unique within their conversation only, so no scope is needed."""
    return canonical_uuid(client_id) or uuid5(NAMESPACE, f"message:{client_id}")


def external_id(client_id: str) -> str:
    """What to keep beside the UUID: nothing when the UUID is the client's id."""
    return "" if canonical_uuid(client_id) else client_id
