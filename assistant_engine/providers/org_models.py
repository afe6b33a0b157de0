"""What an organization runs on: its model option and whose key pays.

An organization chooses its model among the options the deployment allows
(`ASSISTANT_MODEL_OPTIONS`, or every usable one) and that respect the residency
rules; with its own key for that option's provider, turns run on that key
(opened in the worker, at the call, never logged), otherwise on the
deployment's. Model clients built here carry an organization's key: they are
never cached across organizations (see `turn_key`).
"""

import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Organization, OrganizationChange
from assistant_engine.organizations.services import change_record
from assistant_engine.providers.catalog import (
    CATALOG,
    ModelOption,
    client_for,
    model_option,
    selected_option,
    unusable_reason,
)
from assistant_engine.providers.clients.base import ProviderError
from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.sealing import key_hint, open_secret, seal_secret

logger = logging.getLogger("assistant_engine.providers.org_models")

DEPLOYMENT = "deployment"


class ModelNotAllowed(ValueError):
    """The option is not among those the deployment allows, or breaks the residency rules here."""


class KeyRefused(Exception):
    """The provider refused the key when it was verified; `kind` is safe to show (never its text)."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class ProviderNotConfigured(KeyRefused):
    """The provider was never asked: this server lacks what it needs to call it
    (an Infomaniak product id, a Bedrock region…), whatever the key."""

    def __init__(self):
        super().__init__("not_configured")


class NotOrganizationAdmin(PermissionError):
    """Only a member with role `admin` changes the organization's settings."""


@dataclass(frozen=True)
class TurnKey:
    """The key a call uses: `api_key` empty means the deployment's own.
    `source` is what the turn records ("deployment" or the key's hint)."""

    api_key: str
    source: str


# --- Reading: which option, which key -------------------------------------------


def allowed_options(organization_id: int | None = None) -> list[ModelOption]:
    """The options an organization may choose: allowed by the deployment and
    usable now (with the organization's own key standing in for a missing
    deployment key; the residency rules apply either way)."""
    allowed = set(settings.ASSISTANT_MODEL_OPTIONS)
    own = set(_own_key_providers(organization_id)) if organization_id else set()
    # The rules only ask whether some key is there: a stand-in for the sealed
    # one, which is opened in the worker only.
    return [
        option for option in CATALOG
        if (not allowed or option.id in allowed)
        and unusable_reason(option, api_key="organization-key" if option.provider in own else "") is None
    ]


def choosable_option_ids() -> list[str]:
    """Every option some organization here may choose (allowed by the
    deployment, usable with its keys or with an organization's own): what the
    API documents as a conversation's `model` values ("" is the organization's)."""
    allowed = settings.ASSISTANT_MODEL_OPTIONS
    return ["", *(option.id for option in CATALOG if (not allowed or option.id in allowed)
                  and unusable_reason(option, api_key="organization-key") is None)]


# The organization's model option and its rule for its members' picks, as read
# with the membership (MemberTerms), or None: read it now.
Rule = tuple[str, str] | None


def rule_of(member: Member) -> Rule:
    return (member.terms.model_choice, member.terms.member_models) if member.terms else None


def _rule(organization_id: int, rule: Rule) -> tuple[str, str]:
    return rule or Organization.objects.values_list("model_option", "member_models").get(pk=organization_id)


def member_options(organization_id: int, rule: Rule = None) -> list[ModelOption]:
    """The options a member may give a conversation: those the organization
    may choose (allowed_options), narrowed by its rule (Organization.member_models)."""
    chosen, member_models = _rule(organization_id, rule)
    return [option for option in allowed_options(organization_id) if _rule_allows(member_models, chosen, option)]


def _rule_allows(rule: str, chosen: str, option: ModelOption) -> bool:
    """Whether the organization's rule lets a member pick `option` (its own choice: `chosen`)."""
    if rule == Organization.MemberModels.ANY:
        return True
    try:
        own = model_option(chosen) if chosen else selected_option()
    except (ImproperlyConfigured, KeyError):  # no model of its own to compare with: only "" is left
        return False
    if rule == Organization.MemberModels.LOCATION:
        return option.location == own.location
    return option.id == own.id


def option_allowed(organization_id: int, option_id: str, rule: Rule = None) -> bool:
    """Whether a member may run a conversation on `option_id`: among
    member_options(organization_id), without a query when the caller has
    the organization's rule and the deployment's own settings make the
    option usable (the common case: a turn's check in the worker)."""
    allowed = settings.ASSISTANT_MODEL_OPTIONS
    option = next((option for option in CATALOG if option.id == option_id), None)
    if option is None or (allowed and option_id not in allowed):
        return False
    chosen, member_models = _rule(organization_id, rule)
    if not _rule_allows(member_models, chosen, option):
        return False
    if unusable_reason(option) is None:
        return True
    return (option.provider in _own_key_providers(organization_id)
            and unusable_reason(option, api_key="organization-key") is None)


def option_for_conversation(member: Member, chosen: str) -> ModelOption:
    """The option a turn of a conversation runs on: the one chosen for it
    (ModelNotAllowed when the organization no longer allows it), else the
    organization's (option_for_member)."""
    if not chosen:
        return option_for_member(member)
    if not option_allowed(member.organization_id, chosen, rule_of(member)):
        raise ModelNotAllowed(chosen)
    return model_option(chosen)


def _own_key_providers(organization_id: int) -> list[str]:
    return list(ProviderKey.objects.filter(organization_id=organization_id).values_list("provider", flat=True))


def option_for_organization(organization_id: int) -> ModelOption:
    """The organization's chosen option, or the deployment's (ASSISTANT_MODEL).

    A chosen option that is no longer allowed or usable is a configuration
    error (ImproperlyConfigured), never a silent fallback: that could move the
    organization's data somewhere it did not choose.
    """
    chosen = Organization.objects.values_list("model_option", flat=True).get(pk=organization_id)
    return option_for_choice(organization_id, chosen)


def option_for_member(member: Member) -> ModelOption:
    """As option_for_organization, for the request's organization: on the
    choice the guard read with the membership (no query), or, for a Member
    made without it, read now. The worker re-checks the option's residency
    rules when it opens the turn's client (providers.client_for)."""
    if member.terms is None:
        return option_for_organization(member.organization_id)
    return option_for_choice(member.organization_id, member.terms.model_choice)


def option_for_choice(organization_id: int, chosen: str) -> ModelOption:
    """As option_for_organization, for a caller that has read the organization's choice."""
    if not chosen:
        return selected_option()
    if chosen not in {option.id for option in allowed_options(organization_id)}:
        raise ImproperlyConfigured(f"organization {organization_id}'s model option {chosen!r} is not usable here")
    return model_option(chosen)


def key_for(organization_id: int, provider: str) -> TurnKey:
    """The organization's own key for `provider`, opened, or the deployment's."""
    row = ProviderKey.objects.filter(organization_id=organization_id, provider=provider).values_list(
        "sealed", "hint").first()
    if row is None:
        return TurnKey("", DEPLOYMENT)
    sealed, hint = row
    return TurnKey(open_secret(sealed, organization_id, provider), hint)


def turn_key(option: ModelOption, organization_id: int) -> TurnKey:
    """The key a turn on `option` runs with: the organization's own for the
    option's provider, else the deployment's. A client built with an
    organization's key is made for that turn only, never shared (assistant.loop)."""
    if option.provider == "offline":
        return TurnKey("", DEPLOYMENT)
    return key_for(organization_id, option.provider)


# --- Writing: the organization admin's (or an operator's) changes -----------------


def check_admin(member: Member) -> None:
    if not member.is_admin:
        raise NotOrganizationAdmin


def model_choose(member: Member, *, option_id: str, actor=None) -> None:
    """Set the organization's model option ("" returns to the deployment's)."""
    check_admin(member)
    if option_id and option_id not in {option.id for option in allowed_options(member.organization_id)}:
        raise ModelNotAllowed(option_id)
    with transaction.atomic():
        Organization.objects.filter(pk=member.organization_id).update(model_option=option_id)
        change_record(organization_id=member.organization_id, actor_id=member.user_id,
                      action=OrganizationChange.Kind.MODEL, detail=option_id or "the deployment's model")


def member_models_set(member: Member, *, rule: str) -> None:
    """Which options the organization's members may pick (Organization.MemberModels)."""
    check_admin(member)
    if rule not in Organization.MemberModels.values:
        raise ValueError(f"Unknown rule {rule!r}.")
    with transaction.atomic():
        Organization.objects.filter(pk=member.organization_id).update(member_models=rule)
        change_record(organization_id=member.organization_id, actor_id=member.user_id,
                      action=OrganizationChange.Kind.MEMBER_MODELS, detail=rule)


def provider_key_save(member: Member | None, *, provider: str, plaintext: str, organization_id: int | None = None,
                      actor_id: int | None = None, verified: bool = False) -> ProviderKey:
    """Verify the key with one cheap call to the provider, then seal and store
    it (replacing the organization's key for that provider). A refused key is
    not saved: KeyRefused names the provider's error kind. `member` is None for
    an operator's command or the staff admin; `verified` says the caller
    already verified this very key (the admin form does, to show the refusal)."""
    if member is not None:
        check_admin(member)
        organization_id, actor_id = member.organization_id, member.user_id
    plaintext = plaintext.strip()
    if provider not in ProviderKey.Provider.values or not plaintext:
        raise ValueError("A provider key needs a known provider and a non-empty key.")
    if not verified:
        verify_key(provider, plaintext)
    with transaction.atomic():
        ProviderKey.objects.filter(organization_id=organization_id, provider=provider).delete()
        key = ProviderKey.objects.create(
            organization_id=organization_id, provider=provider, hint=key_hint(plaintext), created_by_id=actor_id,
            sealed=seal_secret(plaintext, organization_id, provider),
        )
        change_record(organization_id=organization_id, actor_id=actor_id,
                      action=OrganizationChange.Kind.PROVIDER_KEY_SAVED, detail=f"{provider} {key.hint}")
    return key


def provider_key_remove(member: Member, *, provider: str) -> bool:
    check_admin(member)
    with transaction.atomic():
        removed, _ = ProviderKey.objects.filter(organization_id=member.organization_id, provider=provider).delete()
        if removed:
            change_record(organization_id=member.organization_id, actor_id=member.user_id,
                          action=OrganizationChange.Kind.PROVIDER_KEY_REMOVED, detail=provider)
    return bool(removed)


def verify_key(provider: str, plaintext: str) -> None:
    """One one-token call with the key, on the first catalog option of that
    provider; raises KeyRefused with the error kind (`auth`, `refused`, ...),
    or ProviderNotConfigured when this server can't call that provider at all."""
    option = next(option for option in CATALOG if option.provider == provider)
    if unusable_reason(option, api_key=plaintext):
        logger.info("provider_key_not_checked", extra={"provider": provider})
        raise ProviderNotConfigured
    try:
        client = client_for(option, api_key=plaintext, max_retries=0)
        client.verify()
    except ProviderError as error:
        logger.info("provider_key_refused", extra={"provider": provider, "provider_error": error.kind})
        raise KeyRefused(error.kind) from None
