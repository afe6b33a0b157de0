"""Staff look into turns, failed ones first of all, read-only."""

import uuid

import pytest
from django.urls import reverse

from assistant.models import Turn
from conversations.models import Thread
from tests.admin.conftest import logged_in, make_staff, queries_of
from tests.conversations.factories import make_thread

pytestmark = pytest.mark.django_db

TURNS = reverse("admin:assistant_turn_changelist")


def page(turn) -> str:
    return reverse("admin:assistant_turn_change", args=[turn.pk])


def make_turn(person, *, thread=None, status=Turn.Status.DONE, failure_kind="", option="offline-demo") -> Turn:
    thread = thread or make_thread(person, messages=2)
    return Turn.objects.create(
        thread=thread, organization=person.organization, user=person.user, model_option=option, status=status,
        failure_kind=failure_kind, steps=3, tool_calls=2, input_tokens=1200, output_tokens=340, credit_month="2026-11",
        reserved_micros=30_000, cost_micros=1_940,
    )


@pytest.fixture
def failed(owner) -> Turn:
    return make_turn(owner, status=Turn.Status.FAILED, failure_kind=Turn.FailureKind.API, option="infomaniak-qwen")


def test_a_failed_turn_shows_its_kind_steps_tokens_and_costs(root_client, failed):
    response = root_client.get(page(failed))

    assert response.status_code == 200
    body = response.content.decode()
    for shown in ("Model provider error", "1200", "340", "30000", "1940", "2026-11", "infomaniak-qwen"):
        assert shown in body
    assert reverse("admin:conversations_thread_change", args=[failed.thread_id]) in body


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"status__exact": "failed"}, {"failed"}),
        ({"failure_kind__exact": "api"}, {"failed"}),
        ({"model_option__exact": "offline-demo"}, {"done"}),
        ({"q": "turn-id"}, {"failed"}),
        ({"q": "thread-id"}, {"failed"}),
        ({"q": "acme"}, {"failed", "done"}),
        ({"q": str(uuid.uuid4())}, set()),
    ],
    ids=["status", "failure-kind", "model-option", "turn-id", "thread-id", "organization-slug", "unknown-id"],
)
def test_staff_filter_and_search_turns(root_client, owner, outsider, failed, query, expected):
    make_turn(owner)
    make_turn(outsider, status=Turn.Status.QUEUED, option="bedrock-claude-haiku-4-5")
    query = {"turn-id": {"q": str(failed.pk)}, "thread-id": {"q": f" {failed.thread_id} "}}.get(query.get("q"), query)

    response = root_client.get(TURNS, query)

    assert response.status_code == 200
    assert {turn.status for turn in response.context["cl"].result_list} == expected


def test_the_list_runs_as_many_queries_for_twenty_turns_as_for_one(root_client, owner, outsider,
                                                                   django_assert_num_queries):
    make_turn(owner)
    root_client.get(TURNS)
    one = queries_of(lambda: root_client.get(TURNS))
    for number in range(19):
        make_turn(owner if number % 2 else outsider, status=Turn.Status.FAILED, failure_kind="timeout")

    with django_assert_num_queries(one):
        response = root_client.get(TURNS)

    assert response.context["cl"].result_count == 20


def test_a_turn_whose_conversation_was_deleted_still_shows(root_client, failed):
    Thread.objects.filter(pk=failed.thread_id).delete()

    assert root_client.get(TURNS).status_code == 200
    assert root_client.get(page(failed)).status_code == 200


def test_turns_cannot_be_added_changed_or_deleted(root_client, failed):
    before = Turn.objects.values().get(pk=failed.pk)

    add = root_client.post(reverse("admin:assistant_turn_add"), {})
    change = root_client.post(page(failed), {"status": "done", "cost_micros": 0})
    delete = root_client.post(reverse("admin:assistant_turn_delete", args=[failed.pk]), {"post": "yes"})
    bulk = root_client.post(TURNS, {"action": "delete_selected", "_selected_action": [failed.pk], "post": "yes"})

    assert (add.status_code, change.status_code, delete.status_code) == (403, 403, 403)
    assert bulk.status_code in (200, 302)
    assert 'name="_save"' not in root_client.get(page(failed)).content.decode()
    assert Turn.objects.values().get(pk=failed.pk) == before


def test_staff_with_the_view_permission_look_into_turns(failed):
    support = logged_in(make_staff("support", "assistant.view_turn"))

    assert support.get(TURNS).status_code == 200
    assert support.get(page(failed)).status_code == 200
