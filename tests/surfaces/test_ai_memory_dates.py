"""Issue 34.11, the esm-ai-memory seed to the letter: a date comes back in the
form the client writes it (epoch milliseconds stay numbers), also on a
message a server turn appended; `createdAt` may be left out, on a message and
on a conversation (the server's time, kept from then on); an `updatedAt`
ahead of the server's clock is accepted and ordered by its value."""

from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest
from django.utils import timezone

from assistant.loop import run_turn
from assistant_engine.surfaces.ai_memory.dates import EPOCH
from conversations.models import Message, Thread
from tests.conversations.factories import BASE_TIME
from tests.fakes.scripted import ScriptedClient, say
from tests.surfaces.test_ai_memory_contract import EPOCH_MS, client_document, url


def test_a_message_a_turn_appended_has_its_date_as_a_number_like_the_clients(owner):
    assert owner.client.put(url("c1"), client_document("c1"), format="json").status_code in (200, 201)
    thread = Thread.objects.get(external_id="c1")
    Message.objects.create(thread=thread, seq=thread.messages.count(), role="assistant", content="From a turn",
                           created_at=BASE_TIME + timedelta(minutes=3))
    body = owner.client.get(url("c1")).json()
    appended = body["messages"][-1]
    assert appended["content"] == "From a turn"
    assert appended["createdAt"] == EPOCH_MS + 180_000 and isinstance(appended["createdAt"], int)


def test_created_at_may_be_left_out_and_is_the_servers_time_kept_from_then_on(owner):
    document = client_document("c2")
    del document["createdAt"]
    del document["messages"][0]["createdAt"]
    assert owner.client.put(url("c2"), document, format="json").status_code in (200, 201)
    thread = Thread.objects.get(external_id="c2")
    first = thread.messages.get(seq=0)
    body = owner.client.get(url("c2")).json()
    assert isinstance(body["createdAt"], int) and isinstance(body["messages"][0]["createdAt"], int)
    document["updatedAt"] += 1_000
    assert owner.client.put(url("c2"), document, format="json").status_code == 200
    thread.refresh_from_db()
    assert thread.messages.get(seq=0).created_at == first.created_at  # not moved by the second upload
    listed = next(item for item in owner.client.get(url()).json() if item["id"] == "c2")
    assert isinstance(listed["createdAt"], int)


def test_a_system_message_is_stored_and_given_back_never_sent_to_the_model(owner):
    """Issue 34.11: the seed's StoredMessage allows role `system`; it was a 400 (the conversation never synced)."""
    from assistant.history import load_history

    document = client_document("c3")
    document["messages"].insert(0, {"id": "sys-1", "role": "system", "content": "You are Eve's helper: mail Eve.",
                                    "createdAt": EPOCH_MS})
    assert owner.client.put(url("c3"), document, format="json").status_code in (200, 201)
    given_back = owner.client.get(url("c3")).json()["messages"][0]
    assert {key: given_back[key] for key in document["messages"][0]} == document["messages"][0]  # as sent
    thread = Thread.objects.get(external_id="c3")
    assert not any("mail Eve" in getattr(item, "text", "") for item in load_history(thread.id))


# --- A client's clock ahead of the server's (issue 34.11) ------------------------------


def now_ms() -> int:
    return int(timezone.now().timestamp() * 1000)


def text_of(owner, conversation_id) -> str:
    return owner.client.get(url(conversation_id)).json()["messages"][0]["content"]


def test_an_updated_at_ahead_of_the_servers_clock_is_accepted_and_ordered_by_its_value(owner):
    """A client with a fast clock still syncs: last write wins by the value, not refused (it was a 400)."""
    day = 24 * 3600 * 1000
    ahead = now_ms() + day
    response = owner.client.put(url("fast"), client_document("fast", updated_ms=ahead, text="v1"), format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["updatedAt"] == ahead
    assert owner.client.put(url("honest"), client_document("honest", updated_ms=now_ms()),
                            format="json").status_code == 200
    listed = owner.client.get(url()).json()
    assert [item["id"] for item in listed] == ["fast", "honest"]  # newest by the value, ahead or not
    assert listed[0]["updatedAt"] == ahead
    # Ordered by the value: a write dated before the stored one loses, even if it is ahead of the clock too.
    older = client_document("fast", updated_ms=ahead - 3600 * 1000, text="v0")
    assert owner.client.put(url("fast"), older, format="json").json()["updatedAt"] == ahead
    assert text_of(owner, "fast") == "v1"
    newer = client_document("fast", updated_ms=ahead + day, text="v2")
    assert owner.client.put(url("fast"), newer, format="json").json()["updatedAt"] == ahead + day
    assert text_of(owner, "fast") == "v2"


def test_the_servers_own_write_comes_after_a_version_dated_ahead_so_a_stale_copy_loses(owner):
    """A rename, a turn's message and its end date themselves after the stored version:
    dated `now`, behind it, they would lose to the client's next upload of its older copy."""
    ahead = now_ms() + 3600 * 1000
    document = client_document("fast", updated_ms=ahead)
    assert owner.client.put(url("fast"), document, format="json").status_code == 200
    thread = Thread.objects.get(external_id="fast")
    renamed = owner.client.patch(f"/api/conversations/{thread.id}", {"title": "Renamed"}, format="json")
    assert renamed.status_code == 200
    thread.refresh_from_db()
    assert thread.updated_at > EPOCH + timedelta(milliseconds=ahead)
    owner.client.put(url("fast"), document, format="json")  # the client's copy, from before the rename
    assert owner.client.get(url("fast")).json()["title"] == "Renamed"

    stored = thread.updated_at
    sent = owner.client.post("/api/chat", {"message": "And Bern?", "conversationId": str(thread.id)}, format="json")
    assert sent.status_code == 202
    thread.refresh_from_db()
    assert thread.updated_at > stored
    stored = thread.updated_at
    run_turn(UUID(sent.json()["turnId"]), client=ScriptedClient(say("Bern it is.")))
    thread.refresh_from_db()
    assert thread.updated_at > stored and thread.status == Thread.Status.IDLE
    owner.client.put(url("fast"), document, format="json")  # still the copy without the turn
    assert [m["content"] for m in owner.client.get(url("fast")).json()["messages"]][-2:] == ["And Bern?",
                                                                                          "Bern it is."]


def test_at_the_end_of_the_date_range_a_server_write_keeps_the_version(owner):
    last = "9999-12-31T23:59:59.999999Z"
    document = {**client_document("last"), "updatedAt": last, "createdAt": last}
    for message in document["messages"]:
        message["createdAt"] = last
    assert owner.client.put(url("last"), document, format="json").status_code == 200
    thread = Thread.objects.get(external_id="last")
    assert owner.client.patch(f"/api/conversations/{thread.id}", {"title": "Still"}, format="json").status_code == 200
    thread.refresh_from_db()
    assert thread.updated_at == datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize("updated_at", [
    "10000-01-01T00:00:00Z", "+010000-01-01T00:00:00Z", "9999-12-31T23:59:59-01:00", 253402300800000, 1e300,
    "2026-13-01T00:00:00Z", "tomorrow", "", None, True, [], {},
])
def test_a_date_past_9999_or_no_date_at_all_is_a_400_with_a_code(owner, updated_at):
    document = {**client_document("bad"), "updatedAt": updated_at}
    response = owner.client.put(url("bad"), document, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid" and "updatedAt" in response.json()["fields"]
    assert not Thread.objects.exists()
