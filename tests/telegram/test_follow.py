"""The follow task against the fake Bot API, in this process: what was sent
is recorded after each call, so a retry goes on from there."""

import pytest
from telegram.error import RetryAfter

from assistant.models import ActionCard
from assistant_engine.surfaces.telegram.follow import follow_turn
from assistant_engine.surfaces.telegram.formatting import MESSAGE_LIMIT
from assistant_engine.surfaces.telegram.models import StreamedReply
from assistant_engine.surfaces.telegram.tasks import follow_turn_task
from conversations.models import Message
from tests.assistant.conftest import play
from tests.fakes.scripted import ScriptedClient, call, say
from tests.fakes.telegram_api import too_many_requests
from tests.telegram.conftest import OLIVIA_TG
from workspace.models import Note

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_edits(settings):
    settings.TELEGRAM_EDIT_INTERVAL_MS = 100


def finished_turn(owner, *steps):
    turn = play(owner, ScriptedClient(*steps))
    StreamedReply.objects.create(turn_id=turn.id, chat_id=OLIVIA_TG)
    return turn


def test_a_429_in_the_middle_of_a_long_reply_sends_the_rest_only(owner, telegram_on):
    api = telegram_on
    paragraph = " ".join(["paragraph"] * 300)
    turn = finished_turn(owner, say("\n\n".join([paragraph] * 3)))  # about 9,000 characters: three messages
    api.fail_next("sendMessage", *too_many_requests(retry_after=3), after=1)
    with pytest.raises(RetryAfter):
        follow_turn(turn.id, slice_seconds=5, sleep=lambda s: None)
    assert len(StreamedReply.objects.get().message_ids) == 1  # the first one is recorded as sent
    assert follow_turn(turn.id, slice_seconds=5, sleep=lambda s: None) is False
    sent = api.of("sendMessage")
    assert len(sent) == 3 and len(api.of("sendMessage", ok_only=False)) == 4
    assert all(len(call.params["text"]) <= MESSAGE_LIMIT for call in sent)
    assert api.of("editMessageText") == []  # nothing was sent twice, nothing needed editing
    assert "".join(call.params["text"] for call in sent).count("paragraph") == 900
    assert not StreamedReply.objects.exists()


def test_a_card_arrives_once_as_its_own_message_with_buttons(owner, telegram_on):
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Groceries", body="milk")
    turn = finished_turn(owner, call(("delete_note", {"note_id": note.id})), say("It awaits your click."))
    assert follow_turn(turn.id, slice_seconds=5, sleep=lambda s: None) is False
    card = ActionCard.objects.get()
    with_buttons = [c for c in telegram_on.of("sendMessage") if c.params.get("reply_markup")]
    assert len(with_buttons) == 1 and card.description in with_buttons[0].params["text"]


def test_a_chat_that_refuses_the_reply_stops_the_follow_without_retrying(owner, telegram_on):
    turn = finished_turn(owner, say("Hello"))
    telegram_on.fail_next("sendMessage", 403, {"ok": False, "error_code": 403,
                                               "description": "Forbidden: bot was blocked by the user"})
    follow_turn_task.apply(args=[str(turn.id)])
    assert len(telegram_on.of("sendMessage", ok_only=False)) == 1
    assert not StreamedReply.objects.exists()
    assert Message.objects.filter(turn_id=turn.id, role="assistant").get().content == "Hello"
