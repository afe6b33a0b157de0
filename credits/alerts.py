"""Alerts before the credits run out (issue 35.3): when an organization's use
of its month's credits crosses one of its thresholds (its admins' choice, else
settings.CREDIT_ALERT_PERCENTS: organizations/alert_percents.py), or a
person's spending crosses settings.CREDIT_ALERT_CAP_PERCENT of their cap, the
organization's admins get an e-mail in their language, once per threshold and
month (and person).

Cheap on the hot path: the ledger's one write (credits/ledger.py `record`)
calls `after_movement` with what the account's UPDATE returned; only a movement that
moves the used share past a whole percent schedules anything, after the commit.
A person's cap is checked where the cap check already read their spending
(`credits.services.check_member_cap`, from what the person's totals upsert
returned, under that row's lock): no query more.
Once, even when several turns cross it at the same moment: a CreditAlert row
per (account, threshold[, person]), its unique constraint deciding who sends.
"""

import logging
from functools import partial

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation

from assistant_engine.organizations.alert_percents import alert_percents
from assistant_engine.organizations.models import Membership, PersonPreferences
from credits.models import CreditAccount, CreditAlert
from credits.money import credits_from_micros

logger = logging.getLogger(__name__)


def used_percent(used_micros: int, granted_micros: int) -> int:
    """The used share of the grant in whole percent (floored); 100 for a grant of nothing."""
    if granted_micros <= 0:
        return 100
    return used_micros * 100 // granted_micros


def after_movement(account_id: int, used_before: int, used_after: int, granted: int) -> None:
    """In the ledger's transaction, from what the account's UPDATE returned:
    schedule the alerts a movement may have crossed. Each organization has its
    own thresholds (whole percentages): only a movement that takes the used
    share past a whole percent may cross one, at most a hundred a month; the
    organization's are read after the commit. The UPDATEs of one account are
    one after another on its row, so `used_before` is exactly the total this
    movement started from."""
    if used_after <= used_before:
        return
    if used_percent(used_before, granted) < used_percent(used_after, granted):
        transaction.on_commit(partial(alerts_raise, account_id))


def after_person_hold(account_id: int, user_id: int, spent_before: int, spent_after: int, cap: int) -> None:
    """In the cap check's transaction: schedule the person's alert if this hold crosses it."""
    percent = settings.CREDIT_ALERT_CAP_PERCENT
    if percent and used_percent(spent_before, cap) < percent <= used_percent(spent_after, cap):
        transaction.on_commit(partial(person_alert_raise, account_id, user_id, cap))


def alerts_raise(account_id: int) -> list[int]:
    """After the commit: a row, and the admins' e-mail, for each threshold the
    account has reached and not yet told. Returns the thresholds told now."""
    account = CreditAccount.objects.select_related("organization").get(pk=account_id)
    reached = used_percent(account.used_micros, account.granted_micros)
    due = [percent for percent in alert_percents(account.organization.credit_alert_percents) if percent <= reached]
    if not due:
        return []
    told = set(CreditAlert.objects.filter(account=account, user=None, percent__in=due)
               .values_list("percent", flat=True))
    return [percent for percent in due if percent not in told and _tell_once(account, percent, person=None)]


def person_alert_raise(account_id: int, user_id: int, cap_micros: int) -> bool:
    """After the commit: the admins told once that this person reached the cap's threshold."""
    account = CreditAccount.objects.select_related("organization").get(pk=account_id)
    person = get_user_model().objects.filter(pk=user_id).first()
    return person is not None and _tell_once(account, settings.CREDIT_ALERT_CAP_PERCENT, person=person,
                                             cap_micros=cap_micros)


def _tell_once(account: CreditAccount, percent: int, *, person, cap_micros: int = 0) -> bool:
    try:
        with transaction.atomic():
            alert = CreditAlert.objects.create(account=account, user=person, percent=percent,
                                               created_at=timezone.now())
    except IntegrityError:  # told already, by this turn's twin or an earlier one
        return False
    alert.emailed = _email_admins(account, percent, person=person, cap_micros=cap_micros)
    alert.save(update_fields=["emailed"])
    logger.info("credit_alert", extra={"account_id": account.pk, "percent": percent, "emailed": alert.emailed,
                                       "person_id": person.pk if person else None})
    return True


def _email_admins(account: CreditAccount, percent: int, *, person=None, cap_micros: int = 0) -> int:
    """One e-mail per admin with an address, each in their chosen language."""
    admins = list(
        Membership.objects.filter(organization_id=account.organization_id, role=Membership.Role.ADMIN,
                                  suspended_at__isnull=True)
        .exclude(user__email="").values_list("user_id", "user__email")
    )
    languages = dict(PersonPreferences.objects.filter(user_id__in=[user_id for user_id, _ in admins])
                     .values_list("user_id", "language"))
    context = _email_context(account, percent, person, cap_micros)
    messages = [_alert_email(context, address, languages.get(user_id) or settings.LANGUAGE_CODE)
                for user_id, address in admins]
    if messages:
        get_connection().send_messages(messages)
    return len(messages)


def _email_context(account: CreditAccount, percent: int, person, cap_micros: int) -> dict:
    return {
        "organization": account.organization.name, "percent": percent, "month": account.month,
        "remaining_credits": credits_from_micros(account.granted_micros - account.used_micros
                                                 - account.reserved_micros),
        "person": person.get_username() if person else "", "cap_credits": credits_from_micros(cap_micros),
    }


def _alert_email(context: dict, address: str, language: str) -> EmailMessage:
    with translation.override(language):
        subject = render_to_string("credits/email/alert_subject.txt", context).strip()
        body = render_to_string("credits/email/alert_body.txt", context)
    return EmailMessage(subject=subject, body=body, from_email=settings.DEFAULT_FROM_EMAIL, to=[address])
