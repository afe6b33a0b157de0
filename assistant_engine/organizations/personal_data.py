"""One person's data, exported or erased (GDPR, Swiss nLPD), across the apps.

Each app knows its own tables; none may import the apps above it. So each app
registers, from its AppConfig.ready(), an *exporter* (its part of a member's
export) and an *eraser* (deletes a batch of the person's rows), and this module
only calls them.

An eraser is `fn(user, batch_size) -> int`: it deletes at most `batch_size`
rows of the person and returns how many. Returning fewer than `batch_size`
means it has nothing left; returning exactly `batch_size` means it may have
more. It raises `ErasureBlocked` when what is left can't be deleted yet (a
reply is being written into a conversation): the erasure is tried again later.

The first batch closes the door (account deactivated, sessions and API tokens
deleted).
When every eraser is done, the memberships and then the user row itself go:
deleted, not anonymized. Rows that accounting needs point at the user with
SET_NULL (turns, ledger entries, month totals), so they stay with their costs
and without the person.
"""

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from assistant_engine.organizations.members import Member, member_from_membership
from assistant_engine.organizations.models import Membership, Organization, PersonSession
from assistant_engine.organizations.services import preferred_language
from assistant_engine.organizations.tokens import delete_tokens_of_user

EXPORT_FORMAT = "assistant-personal-data/1"

Exporter = Callable[[Member], Any]
Eraser = Callable[[Any, int], int]

# Sections of the export this module writes itself.
RESERVED_SECTIONS = frozenset({"format", "exportedAt", "person", "organization"})


class ErasureBlocked(Exception):
    """What is left of the person can't be deleted yet; try again later.
    `deleted`: the rows the eraser deleted before it found that out."""

    def __init__(self, deleted: int = 0):
        super().__init__(deleted)
        self.deleted = deleted


@dataclass(frozen=True)
class ErasureProgress:
    done: bool
    # Rows deleted (or anonymized) by this batch, by eraser name.
    counts: dict[str, int] = field(default_factory=dict)
    # The eraser that asked to wait, if any.
    blocked_by: str = ""


@dataclass(frozen=True)
class _Registered:
    order: int
    name: str
    fn: Eraser


_exporters: dict[str, Exporter] = {}
_erasers: dict[str, _Registered] = {}


def register_exporter(name: str, fn: Exporter) -> None:
    """The export gets `name: fn(member)` (JSON-able). Registering a name again
    replaces it, so a repeated ready() is harmless."""
    if name in RESERVED_SECTIONS:
        raise ValueError(f"{name!r} is a section of the export itself.")
    _exporters[name] = fn


def register_eraser(name: str, fn: Eraser, *, order: int = 100) -> None:
    """Erasers run by ascending `order` (then name): rows that point at others
    (cards → threads) go first, so a batch never cascades beyond its size."""
    _erasers[name] = _Registered(order, name, fn)


def registered_erasers() -> list[str]:
    return [entry.name for entry in _ordered_erasers()]


def _ordered_erasers() -> list[_Registered]:
    return sorted(_erasers.values(), key=lambda entry: (entry.order, entry.name))


# --- Export --------------------------------------------------------------------


def export_user(member: Member) -> dict:
    """Everything of the person in the member's organization, as one JSON-able document."""
    document = _export_head(member)
    for name, fn in _exporters.items():
        section = fn(member)
        document[name] = list(section) if isinstance(section, Iterator) else section
    return document


def export_user_stream(member: Member) -> Iterator[str]:
    """The same document as export_user, as JSON text written section by
    section: a section whose exporter returns an iterator (the conversations, a
    few at a time) is written item by item, so memory holds one batch, never
    the whole document."""
    head = _export_head(member)
    yield "{" + ", ".join(f"{json.dumps(key)}: {_json(value)}" for key, value in head.items())
    for name, fn in _exporters.items():
        section = fn(member)
        yield f", {json.dumps(name)}: "
        if not isinstance(section, Iterator):
            yield _json(section)
            continue
        yield "["
        for position, item in enumerate(section):
            yield ("" if position == 0 else ", ") + _json(item)
        yield "]"
    yield "}\n"


def _json(value) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False)


def _export_head(member: Member) -> dict[str, Any]:
    user = get_user_model().objects.get(pk=member.user_id)
    organization = Organization.objects.get(pk=member.organization_id)
    return {
        "format": EXPORT_FORMAT,
        "exportedAt": iso(timezone.now()),
        "person": person_json(user, member),
        "organization": {"id": organization.id, "slug": organization.slug, "name": organization.name,
                         "instructions": organization.instructions},
    }


def export_person(user) -> list[dict]:
    """One export per organization the person belongs to (the staff download)."""
    memberships = Membership.objects.filter(user=user).select_related("organization").order_by("organization__slug")
    return [export_user(member_from_membership(membership)) for membership in memberships]


def person_json(user, member: Member) -> dict:
    return {
        "id": user.pk,
        "username": user.get_username(),
        "email": getattr(user, "email", ""),
        "firstName": getattr(user, "first_name", ""),
        "lastName": getattr(user, "last_name", ""),
        "dateJoined": iso(getattr(user, "date_joined", None)),
        "lastLogin": iso(getattr(user, "last_login", None)),
        "role": member.role,
        "language": preferred_language(user_id=user.pk) or None,
        # The person's own instructions to the assistant in this organization.
        "instructions": Membership.objects.filter(organization_id=member.organization_id, user_id=user.pk)
        .values_list("instructions", flat=True).first() or "",
    }


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# --- Erasure -------------------------------------------------------------------


def erase_user(user, batch_size: int) -> ErasureProgress:
    """Delete one batch of the person's data; call again until `done`.

    The first call closes the door (the account is deactivated, its sessions
    and API tokens deleted, so no new turn can start). Each call runs the erasers in
    order within `batch_size` rows, in one transaction; once all are done, the
    memberships and the user row go too. Touches nothing of anyone else.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    counts: dict[str, int] = {}
    budget = batch_size
    with transaction.atomic():
        counts["tokens"] = close_access(user)
        for entry in _ordered_erasers():
            try:
                deleted = entry.fn(user, budget)
            except ErasureBlocked as blocked:
                counts[entry.name] = blocked.deleted
                return ErasureProgress(done=False, counts=counts, blocked_by=entry.name)
            counts[entry.name] = deleted
            budget -= deleted
            if budget <= 0:
                return ErasureProgress(done=False, counts=counts)
        counts["memberships"] = Membership.objects.filter(user=user).delete()[0]
        # Last: the row itself. SET_NULL keeps turns, ledger entries, month totals and
        # provider keys (their author removed); anything an app did not
        # register an eraser for goes with it by CASCADE.
        get_user_model().objects.filter(pk=user.pk).delete()
        counts["user"] = 1
    return ErasureProgress(done=True, counts=counts)


def delete_in_order(querysets: Iterable[QuerySet], batch_size: int) -> int:
    """An eraser's usual body: delete up to `batch_size` rows of the querysets,
    taking them in order (the rows that point at others first), and stop once
    the batch is full. Returns what Django deleted.

    Within a queryset the rows come in no particular order: an ORDER BY pk
    would walk the whole table's primary key (random UUIDs) checking each row's
    owner, where the person's own index (their threads, their user id) finds
    just theirs."""
    deleted = 0
    for rows in querysets:
        ids = list(rows.order_by().values_list("pk", flat=True)[: batch_size - deleted])
        if ids:
            deleted += rows.model.objects.filter(pk__in=ids).delete()[0]
        if deleted >= batch_size:
            break
    return deleted


def close_access(user) -> int:
    """Deactivate the account (passwords stop working), delete its browser
    sessions (a signed-in browser is signed out at its next request, and
    nothing of the person is left in the session table) and its API tokens.
    Returns the number of tokens deleted."""
    get_user_model().objects.filter(pk=user.pk, is_active=True).update(is_active=False)
    delete_sessions(user)
    return delete_tokens_of_user(user.pk)


def delete_sessions(user) -> int:
    return PersonSession.objects.filter(user_id=user.pk).delete()[0]
