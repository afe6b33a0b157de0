"""Answers that carry a person's data send `Cache-Control: no-store` (issue 22.6):
a shared proxy or the browser's disk cache keeps none of it."""

import pytest
from django.test import Client

from tests.assistant.conftest import submit
from tests.conversations.factories import make_thread

pytestmark = pytest.mark.django_db


def no_store(response) -> bool:
    directives = {part.strip() for part in response.get("Cache-Control", "").split(",")}
    return {"no-store", "private"} <= directives


def test_every_page_of_a_signed_in_person_is_no_store(owner):
    thread = make_thread(owner, title="Mine", messages=2)
    browser = Client()
    browser.force_login(owner.user)
    for path in ("/", f"/c/{thread.id}/", f"/c/{thread.id}/messages", "/conversations/list", "/data/",
                 "/tokens/", "/organizations/", "/api/conversations"):
        response = browser.get(path)
        assert response.status_code == 200, path
        assert no_store(response), (path, response.get("Cache-Control"))


def test_every_api_answer_is_no_store_found_or_not(owner, outsider):
    thread = make_thread(owner, title="Mine", messages=2)
    turn = submit(owner, conversation_id=thread.id)
    answers = [owner.client.get(path) for path in (
        "/api/conversations", f"/api/conversations/{thread.id}", f"/api/turns/{turn.id}", "/api/me/export",
        "/ai/conversations", f"/ai/conversations/{thread.id}",
    )]
    assert [response.status_code for response in answers] == [200] * len(answers)
    answers += [outsider.client.get(f"/api/conversations/{thread.id}"), Client().get("/api/conversations")]
    for response in answers:
        assert no_store(response), (response.request["PATH_INFO"], response.get("Cache-Control"))
