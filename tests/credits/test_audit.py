"""`manage.py credits_audit`: account totals re-derived from the ledger."""

import io
from datetime import date

import pytest
from django.core.management import ManagementUtility, call_command
from django.core.management.base import CommandError
from django.db.models import F

from credits.models import CreditAccount, DayUsage, MemberMonthUsage
from credits.services import credits_grant, credits_reserve, credits_settle
from tests.credits.support import FEBRUARY_FIRST_MINUTE, JANUARY_LAST_MINUTE, new_turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def activity(owner, outsider, staff):
    """Two organizations, two months, every kind of movement."""
    january_turn = new_turn()
    credits_reserve(owner.member, turn_id=january_turn, now=JANUARY_LAST_MINUTE)
    credits_reserve(owner.member, turn_id=new_turn(), now=FEBRUARY_FIRST_MINUTE)
    credits_reserve(outsider.member, turn_id=new_turn(), now=FEBRUARY_FIRST_MINUTE)
    credits_settle(turn_id=january_turn, cost_micros=77_777)
    credits_grant(
        organization=owner.organization, credits=5, staff_user=staff, reason="r", now=FEBRUARY_FIRST_MINUTE
    )


def audit() -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("credits_audit", stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_audit_is_clean_after_every_kind_of_movement(activity):
    out, err = audit()

    assert "match" in out and err == ""


def test_audit_names_the_tampered_account_and_field(activity, acme):
    tampered = CreditAccount.objects.get(organization=acme, month="2026-02")
    CreditAccount.objects.filter(pk=tampered.pk).update(reserved_micros=F("reserved_micros") + 1)
    err = io.StringIO()

    with pytest.raises(CommandError) as failed:
        call_command("credits_audit", stderr=err)

    assert failed.value.returncode == 1
    assert err.getvalue().strip() == (
        f"account {tampered.pk} (acme 2026-02): reserved_micros is 30001 but its ledger gives 30000"
    )


def test_audit_reports_every_mismatch(activity, acme):
    CreditAccount.objects.filter(organization=acme).update(used_micros=F("used_micros") + 5)
    err = io.StringIO()

    with pytest.raises(CommandError, match="2 credit account"):
        call_command("credits_audit", stderr=err)

    assert err.getvalue().count("used_micros") == 2


def test_audit_exits_non_zero_from_the_command_line(activity, acme, capsys):
    CreditAccount.objects.filter(organization=acme, month="2026-01").update(granted_micros=F("granted_micros") + 1)

    with pytest.raises(SystemExit) as exited:
        ManagementUtility(["manage.py", "credits_audit"]).execute()

    assert exited.value.code != 0
    assert "(acme 2026-01): granted_micros is 10000001" in capsys.readouterr().err


def test_audit_of_an_empty_database_is_clean(db):
    out, _ = audit()

    assert "match" in out


def test_audit_names_a_ledger_that_overdrew_an_account_at_some_moment(activity, acme):
    from credits.models import LedgerEntry

    january = CreditAccount.objects.get(organization=acme, month="2026-01")
    # A forged history: the whole allowance used before a later grant put it right.
    LedgerEntry.objects.create(account=january, kind="settle", turn_id=new_turn(), used_delta=10_000_000,
                               created_at=JANUARY_LAST_MINUTE)
    LedgerEntry.objects.create(account=january, kind="grant", granted_delta=10_000_000,
                               created_at=JANUARY_LAST_MINUTE)
    CreditAccount.objects.filter(pk=january.pk).update(
        used_micros=F("used_micros") + 10_000_000, granted_micros=F("granted_micros") + 10_000_000
    )
    # The forged turn has no start reservation: its cost counts under no one (and on its day).
    MemberMonthUsage.objects.create(account=january, user=None, used_micros=10_000_000)
    DayUsage.objects.filter(account=january, day=date(2026, 1, 31)).update(turns=F("turns") + 1,
                                                                             used_micros=F("used_micros") + 10_000_000)
    err = io.StringIO()

    with pytest.raises(CommandError, match="1 credit account"):
        call_command("credits_audit", stderr=err)

    assert err.getvalue().strip().startswith(f"account {january.pk} (acme 2026-01): overdrawn by ")


def test_audit_names_a_persons_tampered_month_totals(activity, acme, owner):
    """The month totals the organization page and the usage export read are
    checked against the ledger too."""
    february = CreditAccount.objects.get(organization=acme, month="2026-02")
    MemberMonthUsage.objects.filter(account=february, user=owner.user).update(used_micros=F("used_micros") + 3,
                                                                             turns=F("turns") + 1)
    err = io.StringIO()

    with pytest.raises(CommandError, match="2 credit account"):
        call_command("credits_audit", stderr=err)

    assert err.getvalue().splitlines() == [
        f"account {february.pk} (acme 2026-02): turns of user {owner.user.pk} is 2 but its ledger gives 1",
        f"account {february.pk} (acme 2026-02): used_micros of user {owner.user.pk} is 3 but its ledger gives 0",
    ]


def test_drifted_month_totals_are_rebuilt_from_the_ledger_and_nothing_else_moves(activity, acme, owner):
    """Totals that missed turns (a worker of the release before them settling
    while the migration filled them) or gained some are rebuilt on request."""
    february = CreditAccount.objects.get(organization=acme, month="2026-02")
    january_rows = list(MemberMonthUsage.objects.exclude(account=february).values_list(
        "pk", "turns", "used_micros", "reserved_micros"))
    accounts = list(CreditAccount.objects.values_list("pk", "granted_micros", "used_micros", "reserved_micros"))
    MemberMonthUsage.objects.filter(account=february).delete()
    MemberMonthUsage.objects.create(account=february, user=None, turns=9, used_micros=9, reserved_micros=9)
    out = io.StringIO()

    call_command("credits_audit", "--rebuild-totals", stdout=out)

    assert "rebuilt for 1 account(s)" in out.getvalue() and "match" in out.getvalue()
    assert list(MemberMonthUsage.objects.filter(account=february).values_list("user", "turns")) == [
        (owner.user.pk, 1)]
    assert list(MemberMonthUsage.objects.exclude(account=february).values_list(
        "pk", "turns", "used_micros", "reserved_micros")) == january_rows  # what matched is left alone
    assert list(CreditAccount.objects.values_list("pk", "granted_micros", "used_micros", "reserved_micros")) == accounts


def test_the_month_totals_match_the_ledger_after_every_kind_of_movement(activity, acme, owner):
    january = CreditAccount.objects.get(organization=acme, month="2026-01")
    usage = MemberMonthUsage.objects.get(account=january)

    assert (usage.user, usage.turns, usage.used_micros, usage.reserved_micros) == (owner.user, 1, 77_777, 0)


def test_an_erased_persons_totals_still_match_their_ledger(activity, acme, owner):
    """Erasing a person sets their ledger rows' actor and their totals' person
    to no one alike; a turn of theirs settled later moves the totals of no one."""
    running = new_turn()
    credits_reserve(owner.member, turn_id=running, now=FEBRUARY_FIRST_MINUTE)
    owner.user.delete()
    credits_settle(turn_id=running, cost_micros=5)

    out, err = audit()

    assert "match" in out and err == ""
    february = CreditAccount.objects.get(organization=acme, month="2026-02")
    assert MemberMonthUsage.objects.get(account=february).user is None


def test_audit_names_tampered_day_totals_and_rebuilds_them(activity, acme):
    """The day totals the spend charts read are checked against the ledger's
    closes too (the January turn settled after its month: on January 31)."""
    january = CreditAccount.objects.get(organization=acme, month="2026-01")
    day = DayUsage.objects.get(account=january)
    assert (day.day, day.turns, day.used_micros) == (date(2026, 1, 31), 1, 77_777)
    DayUsage.objects.filter(pk=day.pk).update(used_micros=F("used_micros") + 1)
    err = io.StringIO()

    with pytest.raises(CommandError, match="1 credit account"):
        call_command("credits_audit", stderr=err)
    assert err.getvalue().strip() == (
        f"account {january.pk} (acme 2026-01): day 2026-01-31 - - used_micros is 77778 but its ledger gives 77777")

    out = io.StringIO()
    call_command("credits_audit", "--rebuild-totals", stdout=out)
    assert "Day totals rebuilt for 1 account(s)." in out.getvalue() and "match" in out.getvalue()
    assert DayUsage.objects.get(account=january).used_micros == 77_777
