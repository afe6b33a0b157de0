"""The /ai/ client's own ids, mapped onto the server's UUIDs.

An esm-ai-memory client chooses its ids (any 1–200 characters of letters,
digits, `-`, `_`, `:`, `.`), while the rest of the product (the /api/
contract, turns, cards) knows conversations and messages by UUID. A client id
that is already a UUID in canonical lower-case form is used as is, so a
conversation started in the browser and listed on /ai/ maps back to itself;
any other string names a UUID derived from it (UUIDv5), and the string is
kept beside it (`external_id`) to be shown back unchanged.
"""

import re
from uuid import UUID, uuid5

from organizations.members import Member

CLIENT_ID = re.compile(r"^[A-Za-z0-9_:.\-]{1,200}$")

# Fixed forever: changing it would orphan every stored /ai/ conversation.
NAMESPACE = UUID("6f1b1c55-8a7e-4c53-9a8e-3d7b2c1e0a41")


def is_client_id(value) -> bool:
    return isinstance(value, str) and CLIENT_ID.match(value) is not None


def _as_canonical_uuid(client_id: str) -> UUID | None:
    try:
        value = UUID(client_id)
    except ValueError:
        return None
    return value if str(value) == client_id else None


def conversation_uuid(member: Member, client_id: str) -> UUID:
    """Derived per person and organization: two people may both choose "chat-1"
    (a thread's UUID is its primary key, unique across everyone)."""
    return _as_canonical_uuid(client_id) or uuid5(
        NAMESPACE, f"conversation:{member.organization_id}:{member.user_id}:{client_id}"
    )


def message_uuid(client_id: str) -> UUID:
    """Message ids are unique within their conversation only, so no scope is needed."""
    return _as_canonical_uuid(client_id) or uuid5(NAMESPACE, f"message:{client_id}")


def external_id(client_id: str) -> str:
    """What to keep beside the UUID: nothing when the UUID is the client's id."""
    return "" if _as_canonical_uuid(client_id) else client_id
