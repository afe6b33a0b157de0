"""Deciding confirmation cards: the services (assistant.cards) and the expiry task.

Cards are proposed through the real proposals.propose, as the loop does, and
decided with the real workspace tools (delete_note, send_email).
"""

import logging
from datetime import timedelta
from smtplib import SMTPException

import pytest
from django.core import mail
from django.core.mail.backends.locmem import EmailBackend
from django.utils import timezone

from assistant import cards, proposals
from assistant.card_tasks import expire_cards_task
from assistant.fingerprint import snapshot_hash
from assistant.models import ActionCard, Turn
from assistant_engine.tools import framework
from assistant_engine.tools.registry import get_tool
from tests.conversations.factories import make_thread
from tests.races import race
from workspace.models import Note

EMAIL = {"to": "bob@example.com", "subject": "Lunch", "body": "See you at noon."}


# --- Helpers (the API and events tests use them too) ------------------------------


def propose_card(person, tool_name, tool_input, *, thread=None) -> ActionCard:
    """A pending card exactly as the loop leaves it (through proposals.propose)."""
    thread = thread or make_thread(person)
    turn = Turn.objects.create(
        thread=thread, organization=person.organization, user=person.user, model_option="offline"
    )
    tool = get_tool(tool_name)
    parsed = framework.parse_input(tool, tool_input)
    proposals.propose(person.member, turn=turn, tool=tool, tool_input=parsed, tool_call=None, warning=False)
    return ActionCard.objects.get(turn=turn)


def delete_card(person, note, **kwargs) -> ActionCard:
    return propose_card(person, "delete_note", {"note_id": note.id}, **kwargs)


def confirm(person, card, shown_hash=None, **kwargs) -> ActionCard:
    return cards.card_confirm(
        person.member, card_id=card.id, shown_hash=shown_hash or card.snapshot_hash, **kwargs
    )


# --- Confirm ---------------------------------------------------------------------


def test_confirm_performs_the_action_and_records_the_result(owner, notes):
    card = delete_card(owner, notes["zurich"])
    decided = confirm(owner, card)
    assert not Note.objects.filter(id=notes["zurich"].id).exists()
    assert decided.status == "confirmed" and decided.decided_at is not None and decided.error == ""
    assert decided.result == {"id": notes["zurich"].id, "title": "Zurich trip", "deleted": True}
    assert decided.event_delivered_at is None  # an event, waiting for the next turn


def test_a_confirmed_send_sends_one_mail(owner):
    card = propose_card(owner, "send_email", EMAIL)
    assert mail.outbox == []  # proposing sends nothing
    confirm(owner, card)
    [sent] = mail.outbox
    assert sent.to == ["bob@example.com"] and sent.subject == "Lunch"


def test_a_changed_input_is_stale_fails_the_card_and_performs_nothing(owner, notes):
    card = delete_card(owner, notes["zurich"])
    # The stored input now points at another of the person's notes.
    ActionCard.objects.filter(id=card.id).update(tool_input={"note_id": notes["budget"].id})
    with pytest.raises(cards.CardStale) as refused:
        confirm(owner, card)
    assert refused.value.changed is True
    assert Note.objects.filter(id__in=[notes["zurich"].id, notes["budget"].id]).count() == 2
    card.refresh_from_db()
    assert card.status == "failed" and card.error == cards.STALE_ERROR and card.result is None


def test_a_hash_shown_for_another_input_is_stale_and_the_card_stays_pending(owner, notes):
    card = delete_card(owner, notes["zurich"])
    other = notes["budget"]
    snapshot = framework.describe(get_tool("delete_note"), owner.member, {"note_id": other.id}).snapshot
    with pytest.raises(cards.CardStale) as refused:
        confirm(owner, card, shown_hash=snapshot_hash("delete_note", {"note_id": other.id}, snapshot))
    assert refused.value.changed is False
    card.refresh_from_db()
    assert card.status == "pending" and card.decided_at is None
    assert Note.objects.filter(id__in=[notes["zurich"].id, other.id]).count() == 2
    # The card itself still holds: confirming what it shows works.
    assert confirm(owner, card).status == "confirmed"


def test_a_note_edited_between_proposal_and_click_is_stale_and_asking_again_works(owner, notes):
    note = notes["zurich"]
    card = delete_card(owner, note)
    note.body = "Train at 10 now, and the hotel changed."
    note.save()
    with pytest.raises(cards.CardStale):
        confirm(owner, card)
    assert Note.objects.filter(id=note.id).exists()
    card.refresh_from_db()
    assert card.status == "failed" and card.decided_at is not None
    # A new proposal describes the note as it now is, and that one is confirmed.
    again = delete_card(owner, note, thread=card.thread)
    assert again.snapshot_hash != card.snapshot_hash
    confirm(owner, again)
    assert not Note.objects.filter(id=note.id).exists()


def test_a_note_deleted_meanwhile_is_stale(owner, notes):
    card = delete_card(owner, notes["zurich"])
    notes["zurich"].delete()
    with pytest.raises(cards.CardStale):
        confirm(owner, card)
    card.refresh_from_db()
    assert card.status == "failed"


def test_a_tool_gone_from_the_deployment_is_stale(owner, notes, settings):
    card = delete_card(owner, notes["zurich"])
    settings.ASSISTANT_TOOLSETS = []
    with pytest.raises(cards.CardStale):
        confirm(owner, card)
    assert Note.objects.filter(id=notes["zurich"].id).exists()


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_another_persons_card_is_not_found_and_untouched(owner, colleague, outsider, notes, who):
    card = delete_card(owner, notes["zurich"])
    person = {"colleague": colleague, "outsider": outsider}[who]
    with pytest.raises(cards.CardNotFound):
        confirm(person, card)
    with pytest.raises(cards.CardNotFound):
        cards.card_cancel(person.member, card_id=card.id)
    card.refresh_from_db()
    assert card.status == "pending" and Note.objects.filter(id=notes["zurich"].id).exists()


def test_an_expired_card_is_marked_expired_and_nothing_happens(owner, notes):
    card = delete_card(owner, notes["zurich"])
    with pytest.raises(cards.CardExpired):
        confirm(owner, card, now=card.expires_at)
    assert Note.objects.filter(id=notes["zurich"].id).exists()
    card.refresh_from_db()
    assert card.status == "expired" and card.decided_at == card.expires_at
    assert card.event_delivered_at is None


def test_a_card_is_confirmable_until_its_last_second(owner, notes):
    card = delete_card(owner, notes["zurich"])
    assert confirm(owner, card, now=card.expires_at - timedelta(seconds=1)).status == "confirmed"


def test_the_lifetime_is_the_setting(owner, notes, settings):
    settings.ASSISTANT_CARD_LIFETIME_SECONDS = 3600
    before = timezone.now()
    card = delete_card(owner, notes["zurich"])
    assert before + timedelta(hours=1) <= card.expires_at <= timezone.now() + timedelta(hours=1)


@pytest.mark.parametrize("first", ["confirm", "cancel"])
@pytest.mark.parametrize("then", ["confirm", "cancel"])
def test_a_decided_card_is_refused_and_performs_nothing_more(owner, first, then):
    card = propose_card(owner, "send_email", EMAIL)
    decide = {
        "confirm": lambda: confirm(owner, card),
        "cancel": lambda: cards.card_cancel(owner.member, card_id=card.id),
    }
    decide[first]()
    decided_at = ActionCard.objects.get(id=card.id).decided_at
    with pytest.raises(cards.CardDecided):
        decide[then]()
    assert len(mail.outbox) == (1 if first == "confirm" else 0)
    after = ActionCard.objects.get(id=card.id)
    assert after.status == ("confirmed" if first == "confirm" else "cancelled") and after.decided_at == decided_at


# --- Cancel ----------------------------------------------------------------------


def test_cancel_decides_the_card_and_performs_nothing(owner, notes):
    card = delete_card(owner, notes["zurich"])
    cancelled = cards.card_cancel(owner.member, card_id=card.id)
    assert cancelled.status == "cancelled" and cancelled.decided_at is not None
    assert Note.objects.filter(id=notes["zurich"].id).exists()


def test_cancelling_an_expired_card_expires_it(owner, notes):
    card = delete_card(owner, notes["zurich"])
    with pytest.raises(cards.CardExpired):
        cards.card_cancel(owner.member, card_id=card.id, now=card.expires_at + timedelta(hours=1))
    card.refresh_from_db()
    assert card.status == "expired"


# --- Perform failing -------------------------------------------------------------


def test_a_tool_error_while_performing_fails_the_card_with_its_message(owner, monkeypatch):
    def refuse(self, messages):
        raise SMTPException("550 mailbox of bob unavailable at smtp.internal:25")

    monkeypatch.setattr(EmailBackend, "send_messages", refuse)
    card = propose_card(owner, "send_email", EMAIL)
    decided = confirm(owner, card)
    assert decided.status == "failed" and decided.decided_at is not None
    assert decided.error == "The email could not be sent; nothing was sent."


def test_an_unexpected_error_while_performing_is_generic_and_logged_by_kind_only(owner, monkeypatch, caplog):
    def crash(self, messages):
        raise RuntimeError("Lunch with bob@example.com")

    monkeypatch.setattr(EmailBackend, "send_messages", crash)
    card = propose_card(owner, "send_email", EMAIL)
    with caplog.at_level(logging.INFO, logger="assistant.cards"):
        decided = confirm(owner, card)
    assert decided.status == "failed" and decided.error == cards.PERFORM_CRASHED
    [record] = [r for r in caplog.records if r.name == "assistant.cards"]
    assert record.getMessage() == "card_perform_crashed" and record.error_type == "RuntimeError"
    assert record.exc_info is None and "bob@example.com" not in caplog.text


# --- Expiry sweep ------------------------------------------------------------------


def test_the_sweep_expires_pending_cards_past_their_time_each_once(owner, notes):
    late = delete_card(owner, notes["zurich"])
    fresh = delete_card(owner, notes["budget"])
    decided = propose_card(owner, "send_email", EMAIL)
    confirm(owner, decided)
    now = late.expires_at + timedelta(seconds=1)
    ActionCard.objects.filter(id=decided.id).update(expires_at=late.expires_at)
    ActionCard.objects.filter(id=fresh.id).update(expires_at=now + timedelta(minutes=1))

    assert cards.cards_expire(now=now) == 1
    assert cards.cards_expire(now=now) == 0
    statuses = dict(ActionCard.objects.values_list("id", "status"))
    assert statuses == {late.id: "expired", fresh.id: "pending", decided.id: "confirmed"}
    late.refresh_from_db()
    assert late.decided_at == now and late.event_delivered_at is None


def test_the_expiry_task_runs_the_sweep(owner, notes):
    card = delete_card(owner, notes["zurich"])
    ActionCard.objects.filter(id=card.id).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert expire_cards_task.name == "assistant.expire_cards"
    assert expire_cards_task() == 1
    assert ActionCard.objects.get(id=card.id).status == "expired"


# --- Races (threads, each on its own connection) -------------------------------------

RACERS = 8


@pytest.mark.django_db(transaction=True)
def test_concurrent_confirms_of_a_send_send_one_mail(owner):
    card = propose_card(owner, "send_email", EMAIL)
    outcomes = race(RACERS, lambda _: confirm(owner, card))
    confirmed = [o for o in outcomes if isinstance(o, ActionCard)]
    refused = [o for o in outcomes if isinstance(o, cards.CardDecided)]
    assert (len(confirmed), len(refused)) == (1, RACERS - 1), outcomes
    assert len(mail.outbox) == 1
    assert ActionCard.objects.get(id=card.id).status == "confirmed"


@pytest.mark.django_db(transaction=True)
def test_concurrent_confirms_of_a_delete_delete_once(owner, notes):
    card = delete_card(owner, notes["zurich"])
    outcomes = race(RACERS, lambda _: confirm(owner, card))
    assert [type(o).__name__ for o in outcomes].count("ActionCard") == 1, outcomes
    assert all(isinstance(o, ActionCard | cards.CardDecided) for o in outcomes), outcomes
    card.refresh_from_db()
    assert card.status == "confirmed" and card.result["deleted"] is True
    assert not Note.objects.filter(id=notes["zurich"].id).exists()


@pytest.mark.django_db(transaction=True)
def test_a_confirm_racing_a_cancel_decides_once(owner, notes):
    card = delete_card(owner, notes["zurich"])

    def click(index):
        return confirm(owner, card) if index % 2 else cards.card_cancel(owner.member, card_id=card.id)

    outcomes = race(RACERS, click)
    [winner] = [o for o in outcomes if isinstance(o, ActionCard)]
    assert all(isinstance(o, ActionCard | cards.CardDecided) for o in outcomes), outcomes
    assert Note.objects.filter(id=notes["zurich"].id).exists() is (winner.status == "cancelled")


@pytest.mark.django_db(transaction=True)
def test_concurrent_sweeps_expire_each_card_once(owner, notes):
    expiring = [delete_card(owner, notes["zurich"]) for _ in range(5)]
    now = max(card.expires_at for card in expiring)
    counts = race(4, lambda _: cards.cards_expire(now=now))
    assert all(isinstance(count, int) for count in counts), counts
    assert sum(counts) == 5
    assert set(ActionCard.objects.values_list("status", flat=True)) == {"expired"}


TWIN_ROUNDS = 10


@pytest.mark.django_db(transaction=True)
def test_twin_cards_confirmed_at_once_send_one_mail_and_refuse_the_other_as_a_repeat(owner):
    """Two pending cards with one fingerprint (the model proposed the same mail
    twice), each clicked at the same moment (two tabs): one sends, the other
    is refused as a repeat (no effect twice without an acknowledgement), and
    neither click fails."""
    thread = make_thread(owner)
    for _ in range(TWIN_ROUNDS):
        twins = [propose_card(owner, "send_email", EMAIL, thread=thread) for _ in range(2)]
        sent_before = len(mail.outbox)
        outcomes = race(2, lambda index, twins=twins: confirm(owner, twins[index]))
        assert sorted(type(o).__name__ for o in outcomes) == ["ActionCard", "CardRepeat"], outcomes
        assert len(mail.outbox) == sent_before + 1
        # Cleared for the next round, whose twins must not repeat this one's mail.
        ActionCard.objects.filter(thread=thread).update(status="cancelled", identical_done_at=None)



def test_a_card_is_described_in_the_persons_language_whoever_proposes_it(owner, notes):
    """Issue 34.6: the words the person confirms are theirs, also from a worker whose language is English."""
    from assistant_engine.organizations.services import preferred_language_set

    preferred_language_set(user_id=owner.user.pk, language="de")
    assert delete_card(owner, notes["zurich"]).description == "Notiz „Zurich trip“ löschen"
    email = propose_card(owner, "send_email", EMAIL).description
    assert email == "E-Mail senden\nAn: bob@example.com\nBetreff: Lunch\n\nSee you at noon."
    preferred_language_set(user_id=owner.user.pk, language="")
    assert delete_card(owner, notes["zurich"]).description == "Delete the note “Zurich trip”"
