"""Cards as inline buttons: callback_data within Telegram's 64 bytes, and a
click checked exactly like the browser's (assistant.cards)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.models import ActionCard
from assistant_engine.surfaces.telegram import handlers
from assistant_engine.surfaces.telegram.services import callback_data, card_buttons, parse_click
from tests.assistant.conftest import play
from tests.fakes.scripted import ScriptedClient, call, say
from tests.telegram.conftest import COLIN_TG, OLIVIA_TG, click_update
from tests.telegram.test_linking import linked
from workspace.models import Note

pytestmark = pytest.mark.django_db


@pytest.fixture
def card(owner, telegram_on) -> ActionCard:
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Groceries", body="milk")
    play(owner, ScriptedClient(call(("delete_note", {"note_id": note.id})), say("Proposed.")))
    return ActionCard.objects.get()


def click(telegram_id, data):
    outcome = handlers.handle_update(click_update(telegram_id, data, message_id=55))
    answers = [kwargs["text"] for name, kwargs in outcome.calls if name == "answer_callback"]
    edits = [kwargs for name, kwargs in outcome.calls if name == "edit_html"]
    return answers[0], edits


def test_callback_data_fits_in_64_bytes_and_round_trips(card):
    for confirm in (True, False):
        data = callback_data(card, confirm=confirm)
        assert len(data.encode()) <= 64
        parsed = parse_click(data)
        assert (parsed.confirm, parsed.card_id) == (confirm, card.id)
        assert card.snapshot_hash.startswith(parsed.hash_prefix)
    assert [label for label, _ in card_buttons(card)] == ["Confirm", "Cancel"]


@pytest.mark.parametrize("data", ["", "c", "c" + "z" * 56, "q" + "0" * 56, "c" + "0" * 100])
def test_a_button_that_is_not_ours_does_nothing(owner, card, data):
    linked(owner)
    answer, edits = click(OLIVIA_TG, data)
    assert "not valid" in answer and edits == []
    card.refresh_from_db()
    assert card.status == "pending"


def test_a_wrong_hash_prefix_is_stale_and_leaves_the_card_pending(owner, card):
    linked(owner)
    forged = callback_data(card, confirm=True)[:-4] + "0000"
    answer, edits = click(OLIVIA_TG, forged)
    assert "changed since it was shown" in answer
    card.refresh_from_db()
    assert card.status == "pending" and Note.objects.exists()
    assert edits[0]["buttons"] is not None  # still pending: the buttons stay


def test_an_expired_card_is_refused(owner, card):
    linked(owner)
    ActionCard.objects.filter(id=card.id).update(expires_at=timezone.now() - timedelta(seconds=1))
    answer, edits = click(OLIVIA_TG, callback_data(card, confirm=True))
    assert "expired" in answer and "Expired" in edits[0]["text"] and edits[0]["buttons"] is None
    assert Note.objects.exists()


def test_a_decided_card_is_refused_and_a_double_click_performs_once(owner, card):
    linked(owner)
    first, _ = click(OLIVIA_TG, callback_data(card, confirm=True))
    second, edits = click(OLIVIA_TG, callback_data(card, confirm=True))
    assert first == "Done." and "already decided" in second
    assert not Note.objects.exists() and ActionCard.objects.get().status == "confirmed"
    assert "Confirmed" in edits[0]["text"]


def test_cancel_by_button(owner, card):
    linked(owner)
    answer, edits = click(OLIVIA_TG, callback_data(card, confirm=False))
    assert answer == "Cancelled." and "Cancelled" in edits[0]["text"]
    assert Note.objects.exists() and ActionCard.objects.get().status == "cancelled"


def test_another_persons_card_is_not_found_and_unlinked_clicks_do_nothing(owner, colleague, card):
    linked(colleague, COLIN_TG)
    answer, edits = click(COLIN_TG, callback_data(card, confirm=True))
    assert "not yours" in answer and edits == []
    answer, _ = click(OLIVIA_TG, callback_data(card, confirm=True))  # the owner has not linked Telegram
    assert "Link your account" in answer
    assert ActionCard.objects.get().status == "pending" and Note.objects.exists()


def test_a_card_message_carries_the_full_description_and_the_trifecta_warning_first(card):
    from assistant.proposals import TRIFECTA_WARNING
    from assistant_engine.surfaces.telegram.formatting import escape
    from assistant_engine.surfaces.telegram.replies import card_messages

    [text] = card_messages(card)
    assert escape(card.description) in text and "⚠️" not in text
    card.trifecta_warning = True
    [text] = card_messages(card)
    assert text.index(escape(TRIFECTA_WARNING)) < text.index(escape(card.description))
