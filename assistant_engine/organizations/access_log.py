"""The staff access log: every staff view of a person's data leaves one row.

Written by the admin pages that show a person's objects (a conversation, a
turn, a card, a note, an inbox message, a sent e-mail: opened, or listed —
one row per person a list page or an autocomplete shows, without an object
id), by the operators' exports (one row per person whose numbers the file
holds) and by the staff actions on a person (an export, the start of an erasure). Superusers read it in the
admin; the person sees their rows on the data page and in their export, as
"a staff member", never by name. The retention job deletes old rows.

Rows never carry what was seen, only its kind and id.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Membership, StaffAccess
from assistant_engine.organizations.purge import purge_in_batches

logger = logging.getLogger("assistant_engine.organizations.access_log")

Kind = StaffAccess.Kind

# Rows deleted per transaction by the retention job.
PURGE_BATCH = 1000
# Rows written per INSERT for the people a page or a file showed: a list page
# (at most a few hundred rows) stays one INSERT; an export's thousands of
# people are written in statements of bounded size.
LISTED_BATCH = 1000


def staff_access_record(
    *, staff, kind: str, person_id: int | None, organization_id: int | None, object_id: object = "", path: str
) -> StaffAccess:
    """One row: `staff` opened `kind` `object_id` of the person in the organization, on page `path`."""
    access = StaffAccess.objects.create(
        at=timezone.now(), staff=staff, staff_username=staff.get_username(), person_id=person_id,
        organization_id=organization_id, kind=kind, object_id=str(object_id or ""), path=path[:500],
    )
    logger.info("staff_access", extra={
        "staff_id": staff.pk, "kind": kind, "person_id": person_id, "organization_id": organization_id,
        "object_id": access.object_id,
    })
    return access


def staff_accesses_record_listed(*, staff, kind: str, owners: set[tuple[int | None, int | None]],
                                 path: str) -> int:
    """A list page (or a file) showed objects of these (person, organization)
    pairs: one row each, no object id, one INSERT per LISTED_BATCH rows.
    Returns the count."""
    now = timezone.now()
    rows = StaffAccess.objects.bulk_create([
        StaffAccess(at=now, staff=staff, staff_username=staff.get_username(), person_id=person_id,
                    organization_id=organization_id, kind=kind, object_id="", path=path[:500])
        for person_id, organization_id in sorted(owners, key=str)
    ], batch_size=LISTED_BATCH)
    if rows:
        logger.info("staff_access_listed", extra={"staff_id": staff.pk, "kind": kind, "people": len(rows)})
    return len(rows)


def staff_access_record_person(*, staff, kind: str, person, object_id: object = "", path: str) -> int:
    """A view of everything of the person (an export, an erasure): one row per
    organization they belong to, so each organization's data page shows it
    (one row without an organization when they belong to none). Returns the count."""
    organization_ids = list(
        Membership.objects.filter(user=person).order_by("organization_id").values_list("organization_id", flat=True)
    )
    for organization_id in organization_ids or [None]:
        staff_access_record(staff=staff, kind=kind, person_id=person.pk, organization_id=organization_id,
                            object_id=object_id, path=path)
    return len(organization_ids) or 1


def staff_accesses_of(member: Member):
    """The person's rows in the member's organization, most recent first."""
    return StaffAccess.objects.filter(person_id=member.user_id, organization_id=member.organization_id).order_by(
        "-at", "-id"
    )


def staff_access_json(access: StaffAccess) -> dict:
    """What the person is told: when, what, which object. Never who."""
    return {"at": access.at.isoformat(), "what": access.kind, "objectId": access.object_id or None}


def export_staff_accesses(member: Member) -> list[dict]:
    return [staff_access_json(access) for access in staff_accesses_of(member)]


def forget_person(user, batch_size: int) -> int:
    """The erasure's part, in batches: the person leaves the rows about their
    data, and, if they were staff, the rows of what they opened keep only
    their username (the trace of a staff access outlives the account, until
    the retention job deletes it). Without this, deleting the user row would
    update all those rows at once, beyond the batch."""
    done = 0
    for column in ("person", "staff"):
        rows = StaffAccess.objects.filter(**{column: user})
        ids = list(rows.order_by("pk").values_list("pk", flat=True)[: batch_size - done])
        if ids:
            done += StaffAccess.objects.filter(pk__in=ids).update(**{column: None})
        if done >= batch_size:
            break
    return done


def staff_accesses_purge(*, now: datetime | None = None, batch_size: int = PURGE_BATCH) -> int:
    """Delete the rows older than STAFF_ACCESS_RETENTION_DAYS, one transaction
    per batch (a long purge never holds the table). Returns how many.
    """
    cutoff = (now or timezone.now()) - timedelta(days=settings.STAFF_ACCESS_RETENTION_DAYS)
    return purge_in_batches(StaffAccess.objects.filter(at__lt=cutoff).order_by("at"), batch_size=batch_size,
                            job="purge_staff_accesses", logger=logger)


def register() -> None:
    from assistant_engine.organizations.personal_data import register_eraser, register_exporter

    register_exporter("staffAccesses", export_staff_accesses)
    # After the conversations and cards (their ids stay in the staff trace).
    register_eraser("staff_accesses", forget_person, order=80)
