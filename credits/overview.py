"""Staff's view across organizations (issue 35.5): this month's top spenders,
those past the first alert threshold, and a bar chart of the top, for the
credit accounts' admin page. Reads the month's accounts (one row each per
organization: their totals are kept by the ledger's write), never the ledger."""

from dataclasses import dataclass

from django.conf import settings
from django.db.models import F

from credits.alerts import used_percent
from credits.models import CreditAccount
from credits.money import credits_from_micros

TOP = 20


@dataclass(frozen=True)
class AccountSpend:
    account_id: int
    organization_id: int
    organization: str
    used_credits: int
    granted_credits: int
    percent: int
    # The bar's length in the chart, relative to the top spender (0–100).
    bar: float = 0.0


@dataclass(frozen=True)
class SpendOverview:
    month: str
    threshold: int
    top: list[AccountSpend]
    past_threshold: list[AccountSpend]


def spend_overview(month: str) -> SpendOverview:
    """Two queries: the top spenders, and the accounts past the first threshold."""
    threshold = min(settings.CREDIT_ALERT_PERCENTS, default=80)
    month_accounts = CreditAccount.objects.filter(month=month).select_related("organization")
    top = [_row(account) for account in month_accounts.filter(used_micros__gt=0).order_by("-used_micros", "id")[:TOP]]
    most = max((row.used_credits for row in top), default=0) or 1
    top = [AccountSpend(**{**row.__dict__, "bar": round(row.used_credits * 100 / most, 1)}) for row in top]
    # used × 100 ≥ threshold × granted, in integers (the database compares, no float).
    past = month_accounts.alias(hundredfold=F("used_micros") * 100).filter(
        hundredfold__gte=F("granted_micros") * threshold, used_micros__gt=0,
    ).order_by("-used_micros", "id")
    return SpendOverview(month=month, threshold=threshold, top=top, past_threshold=[_row(a) for a in past])


def _row(account: CreditAccount) -> AccountSpend:
    return AccountSpend(
        account_id=account.pk, organization_id=account.organization_id, organization=account.organization.name,
        used_credits=credits_from_micros(account.used_micros),
        granted_credits=credits_from_micros(account.granted_micros),
        percent=used_percent(account.used_micros, account.granted_micros),
    )
