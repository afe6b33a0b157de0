from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from assistant_engine.foundation.people import by_login, login_field
from assistant_engine.organizations.alert_percents import parse_percents, stored
from assistant_engine.organizations.models import Membership, Organization, OrganizationChange, PersonPreferences


def organization_create(*, slug: str, name: str, monthly_credits: int) -> Organization:
    return Organization.objects.create(slug=slug, name=name, monthly_credits=monthly_credits)


@transaction.atomic
def member_add(
    *,
    organization: Organization,
    username: str,
    role: str = Membership.Role.MEMBER,
    create_user: bool = False,
    password: str | None = None,
) -> Membership:
    User = get_user_model()
    user = User.objects.filter(**by_login(username)).first()
    if user is None:
        if not create_user:
            raise User.DoesNotExist(f"No user named {username!r}; pass --create-user to create one.")
        user = User.objects.create_user(**by_login(username), password=password)
    membership, created = Membership.objects.get_or_create(
        organization=organization, user=user, defaults={"role": role}
    )
    if not created and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


# --- Changes to an organization: recorded (who, what, when) --------------------


def change_record(*, organization_id: int, actor_id: int | None, action: str, detail: str = "") -> OrganizationChange:
    """Append one change to the organization's log. `actor_id` None: an operator's command."""
    username = ""
    if actor_id is not None:
        username = get_user_model().objects.filter(pk=actor_id).values_list(login_field(), flat=True).first() or ""
    return OrganizationChange.objects.create(
        organization_id=organization_id, at=timezone.now(), actor_id=actor_id, actor_username=username,
        action=action, detail=detail[:300],
    )


def membership_get(*, organization_id: int, user_id: int) -> Membership:
    """The membership, or Membership.DoesNotExist (a person of another organization is not found)."""
    return Membership.objects.get(organization_id=organization_id, user_id=user_id)


@transaction.atomic
def member_cap_set(*, membership: Membership, credits: int | None, actor_id: int | None) -> None:
    """Set (or with None lift) the person's monthly cap in credits."""
    membership.monthly_cap_credits = credits
    membership.save(update_fields=["monthly_cap_credits"])
    change_record(
        organization_id=membership.organization_id, actor_id=actor_id, action=OrganizationChange.Kind.MEMBER_CAP,
        detail=f"{membership.user.get_username()}: {'no cap' if credits is None else f'{credits} credits'}",
    )


@transaction.atomic
def default_cap_set(*, organization_id: int, credits: int | None, actor_id: int | None) -> None:
    """Set (or lift) the cap of every member without a cap of their own."""
    Organization.objects.filter(pk=organization_id).update(default_member_cap_credits=credits)
    change_record(organization_id=organization_id, actor_id=actor_id, action=OrganizationChange.Kind.DEFAULT_CAP,
                  detail="no cap" if credits is None else f"{credits} credits")


@transaction.atomic
def membership_suspend(*, membership: Membership, reason: str, actor_id: int | None) -> None:
    """Suspend: the person's requests in this organization get 403
    membership_suspended and no turn of theirs starts; a running turn finishes.
    Their data stays."""
    reason = reason.strip()
    if not reason:
        raise ValueError("A suspension needs a reason.")
    membership.suspended_at = timezone.now()
    membership.suspended_reason = reason[:300]
    membership.save(update_fields=["suspended_at", "suspended_reason"])
    change_record(organization_id=membership.organization_id, actor_id=actor_id,
                  action=OrganizationChange.Kind.MEMBER_SUSPENDED, detail=f"{membership.user.get_username()}: {reason}")


@transaction.atomic
def membership_lift(*, membership: Membership, actor_id: int | None) -> None:
    membership.suspended_at = None
    membership.suspended_reason = ""
    membership.save(update_fields=["suspended_at", "suspended_reason"])
    change_record(organization_id=membership.organization_id, actor_id=actor_id,
                  action=OrganizationChange.Kind.MEMBER_RESTORED, detail=membership.user.get_username())


class CannotSuspendSelf(ValueError):
    """An organization admin does not suspend their own membership (nobody could lift it from the page)."""


def membership_for_admin(member, *, user_id: int) -> Membership:
    """A membership of the admin's organization; Membership.DoesNotExist for a
    person of another organization (not found, as for anything not theirs) or
    when `member` is not an admin."""
    if not member.is_admin:
        raise Membership.DoesNotExist
    return Membership.objects.select_related("user").get(organization_id=member.organization_id, user_id=user_id)


def member_suspend(member, *, user_id: int, reason: str) -> Membership:
    """An organization admin suspends a member of their organization."""
    membership = membership_for_admin(member, user_id=user_id)
    if membership.user_id == member.user_id:
        raise CannotSuspendSelf
    membership_suspend(membership=membership, reason=reason, actor_id=member.user_id)
    return membership


def member_restore(member, *, user_id: int) -> Membership:
    membership = membership_for_admin(member, user_id=user_id)
    membership_lift(membership=membership, actor_id=member.user_id)
    return membership


def member_cap_set_by_admin(member, *, user_id: int, credits: int | None) -> Membership:
    """An organization admin sets (or lifts) a member's monthly cap."""
    membership = membership_for_admin(member, user_id=user_id)
    member_cap_set(membership=membership, credits=credits, actor_id=member.user_id)
    return membership


def default_cap_set_by_admin(member, *, credits: int | None) -> None:
    if not member.is_admin:
        raise Membership.DoesNotExist
    default_cap_set(organization_id=member.organization_id, credits=credits, actor_id=member.user_id)


def history_mode_set(member, *, mode: str) -> None:
    """An organization admin chooses what the model is sent of long conversations (Organization.HistoryMode)."""
    _choice_set(member, field="history_mode", value=mode, kind=OrganizationChange.Kind.HISTORY_MODE)


def untrusted_writes_set(member, *, mode: str) -> None:
    """An organization admin chooses what a write does after third-party content (Organization.UntrustedWrites)."""
    _choice_set(member, field="untrusted_writes", value=mode, kind=OrganizationChange.Kind.UNTRUSTED_WRITES)


def credit_alert_percents_set(member, *, text: str) -> tuple[int, ...]:
    """An organization admin chooses the credit alerts' thresholds ("" for the
    deployment's), logged; InvalidThresholds for what is not a list of them."""
    if not member.is_admin:
        raise Membership.DoesNotExist
    percents = parse_percents(text)
    with transaction.atomic():
        Organization.objects.filter(pk=member.organization_id).update(credit_alert_percents=stored(percents))
        change_record(organization_id=member.organization_id, actor_id=member.user_id,
                      action=OrganizationChange.Kind.CREDIT_ALERTS, detail=stored(percents) or "the deployment's")
    return percents


def _choice_set(member, *, field: str, value: str, kind: str) -> None:
    """One of the organization's choices (a field with choices) set by its admin, and logged."""
    if not member.is_admin:
        raise Membership.DoesNotExist
    if value not in dict(Organization._meta.get_field(field).choices):
        raise ValueError(f"Unknown {field} {value!r}.")
    with transaction.atomic():
        Organization.objects.filter(pk=member.organization_id).update(**{field: value})
        change_record(organization_id=member.organization_id, actor_id=member.user_id, action=kind, detail=value)


def preferred_language_set(*, user_id: int, language: str) -> None:
    """Keep the person's language on their account ('' forgets it). The caller
    has checked `language` against settings.LANGUAGES."""
    PersonPreferences.objects.update_or_create(user_id=user_id, defaults={"language": language})


def preferred_language(*, user_id: int) -> str:
    """The person's chosen language, or '' when they chose none."""
    return PersonPreferences.objects.filter(user_id=user_id).values_list("language", flat=True).first() or ""
