"""The credits race through the real endpoint: many people press Send at once."""

import pytest
from rest_framework.test import APIClient

from assistant.models import Turn
from assistant_engine.organizations.models import Organization
from conversations.models import Message, Thread
from credits.models import CreditAccount, LedgerEntry
from credits.selectors import credits_audit_mismatches
from tests.conftest import make_person
from tests.races import race

RACERS, ADMITTED = 32, 10


@pytest.mark.django_db(transaction=True)
def test_concurrent_chats_admit_exactly_what_the_balance_covers(acme, settings):
    Organization.objects.filter(id=acme.id).update(monthly_credits=ADMITTED * settings.CREDITS_RESERVATION + 2)
    people = [make_person(f"racer{index}", acme) for index in range(RACERS)]
    tokens = [person.token for person in people]

    def press_send(index: int) -> int:
        client = APIClient()  # one client per thread
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens[index]}")
        return client.post("/api/chat", {"message": f"hello from {index}"}, format="json").status_code

    statuses = race(RACERS, press_send)
    assert sorted(statuses) == [202] * ADMITTED + [402] * (RACERS - ADMITTED), statuses
    assert Turn.objects.count() == Thread.objects.count() == Message.objects.count() == ADMITTED
    account = CreditAccount.objects.get(organization=acme)
    assert account.reserved_micros == ADMITTED * settings.CREDITS_RESERVATION * 10_000
    assert LedgerEntry.objects.filter(kind="reserve").count() == ADMITTED
    assert credits_audit_mismatches() == []
