"""Stop in Telegram: /stop cancels the reply being written in the chat's
conversation, and a cancelled turn is delivered (its text so far, the notice)
and no longer followed, whichever door stopped it."""

import pytest

from assistant.models import Turn
from assistant.turn.outcome import CANCELLED_NOTICE
from assistant.turns import turn_cancel
from assistant_engine.surfaces.telegram import handlers
from assistant_engine.surfaces.telegram.follow import follow_turn
from tests.assistant.conftest import PRICED_OPTION, Clock
from tests.fakes.scripted import ScriptedClient, say
from tests.telegram.conftest import COLIN_TG, OLIVIA_TG, message_update
from tests.telegram.test_linking import linked, send

pytestmark = pytest.mark.django_db


def test_stop_with_nothing_being_written_says_so(owner, telegram_on):
    linked(owner)
    assert send(OLIVIA_TG, "/stop") == [handlers.NOTHING_TO_STOP]


def test_stop_cancels_the_queued_turn_of_this_chat_only(owner, colleague, telegram_on):
    linked(owner)
    linked(colleague, COLIN_TG)
    turn_id = handlers.handle_update(message_update(OLIVIA_TG, "Hello")).follow_turn
    assert send(COLIN_TG, "/stop") == [handlers.NOTHING_TO_STOP]  # the colleague's chat has none
    assert Turn.objects.get(id=turn_id).status == Turn.Status.QUEUED
    assert send(OLIVIA_TG, "/stop") == [handlers.STOPPING]
    assert Turn.objects.get(id=turn_id).status == Turn.Status.CANCELLED


@pytest.mark.django_db(transaction=True)  # the Stop commits as the web request's would, mid-stream
def test_a_turn_stopped_in_the_browser_is_delivered_with_its_notice_and_followed_no_more(owner, telegram_on):
    """Before: only done and failed counted as ended, so a cancelled turn was
    followed again and again (the task enqueued itself) and its notice never sent."""
    from assistant.loop import run_turn

    linked(owner)
    turn_id = handlers.handle_update(message_update(OLIVIA_TG, "Hello")).follow_turn
    Turn.objects.filter(id=turn_id).update(model_option=PRICED_OPTION)

    def stopped(request):
        yield from say("So far ")[:-2]
        turn_cancel(owner.member, turn_id=turn_id)
        yield from say("and more.")

    run_turn(turn_id, client=ScriptedClient(stopped), clock=Clock())
    assert follow_turn(turn_id, slice_seconds=5, sleep=lambda s: None) is False
    texts = telegram_on.texts_to(OLIVIA_TG)
    assert any("So far and more." in text and CANCELLED_NOTICE in text for text in texts), texts
