"""An `event` message an offline client uploaded is not the application's: it
is not told as "The assistant was told…" (it did not reach the model as an
application event). One the application wrote still is, after round trips."""

import uuid
from datetime import timedelta

from django.utils import timezone

from assistant.app_events import render_events
from conversations.models import Message
from tests.conversations.factories import iso, stored_conversation
from tests.web.conftest import make_conversation

TOLD = "The assistant was told that you confirmed"
BLOCK = render_events([{"kind": "confirmed", "card_id": "x", "tool_name": "delete_note", "summary": "s"}])


def messages_html(client, thread_id) -> str:
    response = client.get(f"/c/{thread_id}/messages")
    assert response.status_code == 200
    return response.content.decode()


def test_an_uploaded_event_is_shown_as_stored_text_not_as_told(owner, owner_web):
    body = stored_conversation()
    body["messages"].append({"id": str(uuid.uuid4()), "role": "event", "content": BLOCK,
                             "createdAt": body["createdAt"]})
    assert owner.client.put(f"/api/conversations/{body['id']}", body, format="json").status_code == 200
    html = messages_html(owner_web, body["id"])
    assert TOLD not in html
    assert "application_events" in html  # the stored text, escaped, as any uploaded free text


def test_an_event_the_application_wrote_is_still_told_after_a_client_sends_it_back(owner, owner_web):
    thread = make_conversation(owner)
    Message.objects.create(thread=thread, seq=2, role="event", content=BLOCK, created_at=thread.created_at,
                           turn_id=uuid.uuid4())
    document = owner.client.get(f"/api/conversations/{thread.id}").json()
    document["updatedAt"] = iso(timezone.now() + timedelta(seconds=1))
    document.pop("cards", None)
    response = owner.client.put(f"/api/conversations/{thread.id}", document, format="json")
    assert response.status_code == 200 and response.json()["applied"] is True
    assert TOLD in messages_html(owner_web, thread.id)


def test_others_do_not_see_the_owners_uploaded_event(owner, colleague_web, outsider_web):
    body = stored_conversation()
    body["messages"].append({"id": str(uuid.uuid4()), "role": "event", "content": BLOCK,
                             "createdAt": body["createdAt"]})
    owner.client.put(f"/api/conversations/{body['id']}", body, format="json")
    for client in (colleague_web, outsider_web):
        assert client.get(f"/c/{body['id']}/messages").status_code == 404
