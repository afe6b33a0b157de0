"""Property: whatever the sequence of starts, holds, settlements, stuck turns,
releases and grants, every account keeps used + reserved <= granted, and its
totals are the sums of its ledger."""

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Organization
from credits.models import CreditAccount
from credits.money import micros_from_credits
from credits.selectors import credits_audit_mismatches
from credits.services import (
    CreditsExhausted,
    credits_grant,
    credits_keep_on_stuck,
    credits_release,
    credits_reserve,
    credits_reserve_more,
    credits_settle,
)
from tests.credits.support import MID_MARCH

pytestmark = pytest.mark.django_db

MICROS = st.integers(min_value=1, max_value=micros_from_credits(8))
OPERATIONS = st.one_of(
    st.tuples(st.just("start")),
    st.tuples(st.just("hold"), st.integers(min_value=0, max_value=9), MICROS),
    st.tuples(st.just("settle"), st.integers(min_value=0, max_value=9), st.integers(0, micros_from_credits(12))),
    st.tuples(st.just("stuck"), st.integers(min_value=0, max_value=9)),
    st.tuples(st.just("release"), st.integers(min_value=0, max_value=9)),
    st.tuples(st.just("grant"), st.integers(min_value=1, max_value=5)),
)


def apply(operation, *, member, organization, staff, open_turns):
    kind, *args = operation
    if kind == "start":
        turn_id = uuid.uuid4()
        credits_reserve(member, turn_id=turn_id, now=MID_MARCH)
        open_turns.append(turn_id)
    elif kind == "grant":
        credits_grant(organization=organization, credits=args[0], staff_user=staff, reason="p", now=MID_MARCH)
    elif open_turns:
        turn_id = open_turns[args[0] % len(open_turns)]
        if kind == "hold":
            credits_reserve_more(turn_id=turn_id, micros=args[1])
            return
        open_turns.remove(turn_id)
        if kind == "settle":
            credits_settle(turn_id=turn_id, cost_micros=args[1])
        elif kind == "stuck":
            credits_keep_on_stuck(turn_id=turn_id)
        else:
            credits_release(turn_id=turn_id, reason="p")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(monthly=st.integers(min_value=0, max_value=20), operations=st.lists(OPERATIONS, max_size=25))
def test_used_plus_reserved_never_exceeds_granted(owner, staff, monthly, operations):
    organization = Organization.objects.create(slug=f"p-{uuid.uuid4().hex[:12]}", name="P", monthly_credits=monthly)
    member = Member(organization.id, owner.user.id, "member")
    open_turns: list[uuid.UUID] = []
    for operation in operations:
        try:
            apply(operation, member=member, organization=organization, staff=staff, open_turns=open_turns)
        except CreditsExhausted:
            pass
        for account in CreditAccount.objects.filter(organization=organization):
            assert account.used_micros + account.reserved_micros <= account.granted_micros
            assert min(account.used_micros, account.reserved_micros) >= 0
    assert credits_audit_mismatches() == []
