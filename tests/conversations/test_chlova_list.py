"""Issue 34.12: GET /api/conversations in CHLOVA's list form (its
docs/conversations.md: "liste (id, titre, dates) de l'acteur, par récence") when
the deployment serves CHLOVA's client (ASSISTANT_CONVERSATIONS_LIST=chlova);
the pages otherwise, and for any request that asks for a page or a search."""

from datetime import timedelta
from types import SimpleNamespace

import pytest

from assistant_engine.organizations.models import Membership
from tests.conftest import token_just_used
from tests.conversations.factories import BASE_TIME, iso, make_thread

LIST_URL = "/api/conversations"


@pytest.fixture
def chlova(settings):
    settings.ASSISTANT_CONVERSATIONS_LIST = "chlova"


def test_the_owner_gets_a_bare_array_of_id_title_and_dates_most_recent_first(chlova, owner):
    older = make_thread(owner, title="Older", updated_at=BASE_TIME)
    newer = make_thread(owner, title="Newer", updated_at=BASE_TIME + timedelta(days=1))
    response = owner.client.get(LIST_URL)
    assert response.status_code == 200
    assert response.json() == [
        {"id": str(newer.id), "title": "Newer", "createdAt": iso(BASE_TIME + timedelta(days=1)),
         "updatedAt": iso(BASE_TIME + timedelta(days=1))},
        {"id": str(older.id), "title": "Older", "createdAt": iso(BASE_TIME), "updatedAt": iso(BASE_TIME)},
    ]


def test_the_colleague_and_the_outsider_list_only_their_own(chlova, owner, colleague, outsider):
    make_thread(owner, title="The owner's")
    mine = {person.user.username: make_thread(person, title=f"{person.user.username}'s")
            for person in (colleague, outsider)}
    for person in (colleague, outsider):
        response = person.client.get(LIST_URL)
        assert response.status_code == 200
        assert [item["id"] for item in response.json()] == [str(mine[person.user.username].id)]


def test_a_person_in_two_organizations_lists_only_the_active_ones(chlova, owner, globex):
    make_thread(owner, title="In Acme")
    Membership.objects.create(organization=globex, user=owner.user)
    make_thread(SimpleNamespace(organization=globex, user=owner.user), title="In Globex")
    assert [item["title"] for item in owner.client.get(LIST_URL).json()] == ["In Acme"]


def test_anonymous_gets_401(chlova, anonymous):
    response = anonymous.get(LIST_URL)
    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"


def test_a_request_for_a_page_or_a_search_still_gets_pages(chlova, owner):
    make_thread(owner, title="Zurich trip")
    for query in ({"page": "1"}, {"pageSize": "5"}, {"q": "Zurich"}):
        body = owner.client.get(LIST_URL, query).json()
        assert [item["title"] for item in body["results"]] == ["Zurich trip"], query


def test_the_array_holds_at_most_the_200_most_recent(chlova, owner):
    for day in range(203):
        make_thread(owner, title=f"day {day}", updated_at=BASE_TIME + timedelta(minutes=day))
    listed = owner.client.get(LIST_URL).json()
    assert len(listed) == 200 and listed[0]["title"] == "day 202" and listed[-1]["title"] == "day 3"


def test_the_default_form_is_unchanged(owner):
    make_thread(owner)
    body = owner.client.get(LIST_URL).json()
    assert body["count"] == 1 and set(body) == {"count", "next", "previous", "results"}
    assert set(body["results"][0]) == {"id", "title", "createdAt", "updatedAt", "status", "model"}


def test_the_array_reads_a_fixed_number_of_queries(chlova, owner, django_assert_num_queries):
    token_just_used(owner)
    for count in (1, 30):
        for day in range(count):
            make_thread(owner, updated_at=BASE_TIME + timedelta(days=day), messages=2, calls=1)
        # token auth (1), membership (1), the list (1): no count, no page
        with django_assert_num_queries(3):
            assert owner.client.get(LIST_URL).status_code == 200
