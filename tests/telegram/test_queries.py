"""Pinned query counts: the webhook, the link page, and what the follow task
reads at every poll of a turn, whatever its length."""

import pytest
from django.test import Client

from assistant_engine.surfaces.telegram.replies import turn_view
from tests.assistant.conftest import play
from tests.fakes.scripted import ScriptedClient, call, say
from tests.telegram.conftest import OLIVIA_TG, message_update, post_update
from workspace.models import Note

pytestmark = pytest.mark.django_db

# Two savepoints opened and released (the transaction, get_or_create), the read, the insert.
EXPECTED_NEW_UPDATE = 6
EXPECTED_DUPLICATE = 3  # the transaction's savepoint opened and released, the read
EXPECTED_PAGE = 7  # session, user, memberships ×2, credits ×2, the link


def test_the_webhook_runs_a_fixed_number_of_queries(telegram_on, django_assert_num_queries):
    update = message_update(OLIVIA_TG, "hello")
    with django_assert_num_queries(EXPECTED_NEW_UPDATE):
        assert post_update(update).status_code == 200
    with django_assert_num_queries(EXPECTED_DUPLICATE):
        assert post_update(update).json()["duplicate"] is True


@pytest.mark.parametrize("steps", [1, 4])
def test_a_poll_of_the_turn_reads_four_queries_whatever_its_length(owner, steps, django_assert_num_queries):
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Groceries", body="milk")
    script = [call(("search_notes", {"query": "x"}))] * (steps - 1)
    script += [call(("delete_note", {"note_id": note.id})), say("Done **now**.")]
    turn = play(owner, ScriptedClient(*script))
    with django_assert_num_queries(4):
        view = turn_view(turn.id)
    assert view.ended and len(view.cards) == 1 and "<b>now</b>" in view.chunks[-1]


def test_the_link_page_runs_a_fixed_number_of_queries(owner, telegram_on, django_assert_num_queries):
    client = Client()
    client.force_login(owner.user)
    client.get("/telegram/link/")  # the session's organization is chosen on the first page
    with django_assert_num_queries(EXPECTED_PAGE):
        assert client.get("/telegram/link/").status_code == 200

