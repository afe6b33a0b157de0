"""Alerts before the credits run out (issue 35.3): when an organization's use
of its month's credits crosses one of settings.CREDIT_ALERT_PERCENTS, its admins
get an e-mail in their language, once per threshold and month.

Cheap on the hot path: the ledger's one write (credits/ledger.py `record`)
calls `after_movement` with the account it already holds; only a movement that
moves the used share across a threshold schedules anything, after the commit.
Once, even when several turns cross it at the same moment: a CreditAlert row
per (account, threshold), its unique constraint deciding who sends.
"""

import logging
from functools import partial

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone, translation

from assistant_engine.organizations.models import Membership, PersonPreferences
from credits.models import CreditAccount, CreditAlert
from credits.money import credits_from_micros

logger = logging.getLogger(__name__)


def used_percent(used_micros: int, granted_micros: int) -> int:
    """The used share of the grant in whole percent (floored); 100 for a grant of nothing."""
    if granted_micros <= 0:
        return 100
    return used_micros * 100 // granted_micros


def after_movement(account: CreditAccount, used_before: int) -> None:
    """In the ledger's transaction: schedule the alerts a movement may have crossed."""
    if account.used_micros <= used_before:
        return
    before = used_percent(used_before, account.granted_micros)
    after = used_percent(account.used_micros, account.granted_micros)
    if any(before < percent <= after for percent in settings.CREDIT_ALERT_PERCENTS):
        transaction.on_commit(partial(alerts_raise, account.pk))


def alerts_raise(account_id: int) -> list[int]:
    """After the commit: a row, and the admins' e-mail, for each threshold the
    account has reached and not yet told. Returns the thresholds told now."""
    account = CreditAccount.objects.select_related("organization").get(pk=account_id)
    reached = used_percent(account.used_micros, account.granted_micros)
    told = []
    for percent in (p for p in settings.CREDIT_ALERT_PERCENTS if p <= reached):
        try:
            with transaction.atomic():
                alert = CreditAlert.objects.create(account=account, percent=percent, created_at=timezone.now())
        except IntegrityError:  # told already, by this turn's twin or an earlier one
            continue
        alert.emailed = _email_admins(account, percent)
        alert.save(update_fields=["emailed"])
        told.append(percent)
        logger.info("credit_alert", extra={"account_id": account.pk, "percent": percent, "emailed": alert.emailed})
    return told


def _email_admins(account: CreditAccount, percent: int) -> int:
    """One e-mail per admin with an address, each in their chosen language."""
    admins = list(
        Membership.objects.filter(organization_id=account.organization_id, role=Membership.Role.ADMIN,
                                  suspended_at__isnull=True)
        .exclude(user__email="").values_list("user_id", "user__email")
    )
    languages = dict(PersonPreferences.objects.filter(user_id__in=[user_id for user_id, _ in admins])
                     .values_list("user_id", "language"))
    messages = [_alert_email(account, percent, address, languages.get(user_id) or settings.LANGUAGE_CODE)
                for user_id, address in admins]
    if messages:
        get_connection().send_messages(messages)
    return len(messages)


def _alert_email(account: CreditAccount, percent: int, address: str, language: str) -> EmailMessage:
    context = {"organization": account.organization.name, "percent": percent, "month": account.month,
               "remaining_credits": credits_from_micros(
                   account.granted_micros - account.used_micros - account.reserved_micros)}
    with translation.override(language):
        subject = render_to_string("credits/email/alert_subject.txt", context).strip()
        body = render_to_string("credits/email/alert_body.txt", context)
    return EmailMessage(subject=subject, body=body, from_email=settings.DEFAULT_FROM_EMAIL, to=[address])
