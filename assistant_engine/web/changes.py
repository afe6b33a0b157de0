"""The organization's change log in words: each OrganizationChange kind said as
a sentence in the reader's language ("ada set colin's monthly cap to 20
credits"), read back from the `detail` its service wrote (the formats are
beside the kinds, organizations/models.py). A kind without a sentence, or a
detail of another shape, is still shown: the kind's meaning and the detail."""

import re
from collections.abc import Callable

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from assistant_engine.organizations.models import OrganizationChange
from assistant_engine.providers.models import ProviderKey

Kind = OrganizationChange.Kind
CREDITS = re.compile(r"(\d+) credits")
CHARACTERS = re.compile(r"(\d+) characters")
PERCENTS = re.compile(r"\d{1,3}(,\d{1,3}){0,4}")


def _person_and_rest(detail: str) -> tuple[str, str]:
    # A username has no ": " (letters, digits and @.+-_ only): the first one ends it.
    person, _sep, rest = detail.partition(": ")
    return person, rest


def _provider(value: str) -> str:
    return ProviderKey.Provider(value).label if value in ProviderKey.Provider.values else value


def _cap(actor: str, detail: str, labels: dict) -> str | None:
    person, rest = _person_and_rest(detail)
    if rest == "no cap":
        return _("%(actor)s lifted %(person)s's monthly cap") % {"actor": actor, "person": person}
    if match := CREDITS.fullmatch(rest):
        return _("%(actor)s set %(person)s's monthly cap to %(credits)s credits") % {
            "actor": actor, "person": person, "credits": match[1]}
    return None


def _default_cap(actor: str, detail: str, labels: dict) -> str | None:
    if detail == "no cap":
        return _("%(actor)s lifted the default monthly cap") % {"actor": actor}
    if match := CREDITS.fullmatch(detail):
        return _("%(actor)s set the default monthly cap to %(credits)s credits") % {"actor": actor, "credits": match[1]}
    return None


def _suspended(actor: str, detail: str, labels: dict) -> str | None:
    person, reason = _person_and_rest(detail)
    return _("%(actor)s suspended %(person)s (reason: %(reason)s)") % {
        "actor": actor, "person": person, "reason": reason}


def _restored(actor: str, detail: str, labels: dict) -> str | None:
    return _("%(actor)s lifted the suspension of %(person)s") % {"actor": actor, "person": detail}


def _model(actor: str, detail: str, labels: dict) -> str | None:
    if detail == "the deployment's model":
        return _("%(actor)s went back to the deployment's model") % {"actor": actor}
    return _("%(actor)s chose the model %(model)s") % {"actor": actor, "model": labels.get(detail, detail)}


def _member_models(actor: str, detail: str, labels: dict) -> str | None:
    rules = {"organization": _("the organization's model only"),
             "location": _("any model processed where the organization's is"),
             "any": _("any model this deployment allows")}
    if detail not in rules:
        return None
    return _("%(actor)s let members choose %(rule)s") % {"actor": actor, "rule": rules[detail]}


def _history_mode(actor: str, detail: str, labels: dict) -> str | None:
    modes = {"summarize": _("the older messages of long conversations summarized"),
             "window": _("only the most recent messages of long conversations"),
             "full": _("every message, until a conversation is full"),
             "last": ngettext("only the last message of each conversation",
                              "only the last %(count)d messages of each conversation",
                              settings.HISTORY_WINDOW) % {"count": settings.HISTORY_WINDOW}}
    if detail not in modes:
        return None
    return _("%(actor)s chose to send the assistant %(mode)s") % {"actor": actor, "mode": modes[detail]}


def _untrusted_writes(actor: str, detail: str, labels: dict) -> str | None:
    if detail == "confirm":
        return _("%(actor)s chose that changes after reading outside content wait for a confirmation") % {
            "actor": actor}
    if detail == "run":
        return _("%(actor)s chose that changes after reading outside content are made at once") % {"actor": actor}
    return None


def _key_saved(actor: str, detail: str, labels: dict) -> str | None:
    provider, _sep, hint = detail.partition(" ")
    return _("%(actor)s saved a key for %(provider)s (%(hint)s)") % {
        "actor": actor, "provider": _provider(provider), "hint": hint}


def _key_removed(actor: str, detail: str, labels: dict) -> str | None:
    return _("%(actor)s removed the key for %(provider)s") % {"actor": actor, "provider": _provider(detail)}


def _instructions(actor: str, detail: str, labels: dict) -> str | None:
    if detail == "cleared":
        return _("%(actor)s cleared the organization's instructions") % {"actor": actor}
    if match := CHARACTERS.fullmatch(detail):
        return _("%(actor)s changed the organization's instructions (%(count)s characters)") % {
            "actor": actor, "count": match[1]}
    return None


def _credit_alerts(actor: str, detail: str, labels: dict) -> str | None:
    if detail == "the deployment's":
        return _("%(actor)s went back to the deployment's credit alerts") % {"actor": actor}
    if not PERCENTS.fullmatch(detail):
        return None
    return _("%(actor)s set the credit alerts at %(percents)s of the month's credits") % {
        "actor": actor, "percents": ", ".join(f"{percent}\u00a0%" for percent in detail.split(","))}


def _credits_granted(actor: str, detail: str, labels: dict) -> str | None:
    amount, _sep, reason = detail.partition(": ")
    if not (match := CREDITS.fullmatch(amount)):
        return None
    return _("%(actor)s (staff) granted %(credits)s credits this month (reason: %(reason)s)") % {
        "actor": actor, "credits": match[1], "reason": reason}


SENTENCES: dict[str, Callable[[str, str, dict], str | None]] = {
    Kind.MODEL: _model,
    Kind.MEMBER_MODELS: _member_models,
    Kind.HISTORY_MODE: _history_mode,
    Kind.UNTRUSTED_WRITES: _untrusted_writes,
    Kind.PROVIDER_KEY_SAVED: _key_saved,
    Kind.PROVIDER_KEY_REMOVED: _key_removed,
    Kind.MEMBER_CAP: _cap,
    Kind.DEFAULT_CAP: _default_cap,
    Kind.MEMBER_SUSPENDED: _suspended,
    Kind.MEMBER_RESTORED: _restored,
    Kind.INSTRUCTIONS: _instructions,
    Kind.CREDIT_ALERTS: _credit_alerts,
    Kind.CREDITS_GRANTED: _credits_granted,
}


def change_sentence(change: OrganizationChange, model_labels: dict[str, str] | None = None) -> str:
    """The change as one sentence; `model_labels`: option id → its name."""
    actor = change.actor_username or _("An operator")
    say = SENTENCES.get(change.action)
    sentence = say(actor, change.detail, model_labels or {}) if say else None
    if sentence:
        return sentence
    meaning = Kind(change.action).label if change.action in Kind.values else change.action
    return f"{actor}: {meaning}" + (f" ({change.detail})" if change.detail else "")
