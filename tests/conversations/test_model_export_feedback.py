"""A model per conversation, one conversation's export, feedback on a reply
(issue 25.3 and 25.4), each tried by the owner, a colleague, an outsider and
an anonymous client."""

import json

import pytest

from assistant.chat import chat_submit
from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.organizations.models import Organization, StaffAccess
from conversations.models import Message, MessageFeedback, Thread
from tests.assistant.conftest import Clock
from tests.fakes.scripted import ScriptedClient, call, say
from tests.web.conftest import web_client

ALLOWED = "bedrock-claude-haiku-4-5"


@pytest.fixture
def deployment(settings, acme):
    """Offline and Bedrock (EU) usable; Anthropic (US) not. The organization
    lets its members pick any of them (tests/organizations/test_member_models.py)."""
    Organization.objects.filter(pk=acme.pk).update(member_models=Organization.MemberModels.ANY)
    settings.BEDROCK_API_KEY, settings.BEDROCK_REGION = "br", "eu-central-2"
    settings.ASSISTANT_MODEL_OPTIONS = ["offline", ALLOWED, "anthropic-claude-haiku-4-5"]
    settings.ASSISTANT_ALLOW_US_PROCESSING = False
    settings.DEBUG = False
    return settings


def answered(person, client, message="Hello", **kwargs) -> Turn:
    submitted = chat_submit(person.member, message=message, conversation_id=None, **kwargs)
    run_turn(submitted.turn_id, client=client, clock=Clock())
    return Turn.objects.select_related("thread").get(id=submitted.turn_id)


def reply_of(turn) -> Message:
    return Message.objects.filter(turn_id=turn.id, role="assistant").order_by("seq").last()


# --- Model choice ---------------------------------------------------------------


def test_the_models_a_conversation_may_be_given(owner, deployment):
    ids = [option["id"] for option in owner.client.get("/api/me/models").json()]
    assert ids == ["offline", ALLOWED]


def test_the_owner_chooses_a_conversations_model_and_its_turns_use_it(owner, deployment):
    turn = answered(owner, ScriptedClient(say("Hi.")))
    url = f"/api/conversations/{turn.thread_id}"
    assert owner.client.get(url).json()["model"] == ""
    response = owner.client.patch(url, {"model": ALLOWED}, format="json")
    assert response.status_code == 200 and response.json()["model"] == ALLOWED
    assert owner.client.get(url).json()["model"] == ALLOWED
    next_turn = chat_submit(owner.member, message="Again", conversation_id=turn.thread_id)
    assert Turn.objects.get(id=next_turn.turn_id).model_option == ALLOWED
    assert owner.client.patch(url, {"model": ""}, format="json").json()["model"] == ""


def test_a_model_the_deployment_does_not_offer_is_a_400_and_nothing_changes(owner, deployment):
    """Not in the document's enum (US processing refused, not among the options, no such model): a 400
    naming the field, as the enum says. An option of the enum the organization refuses is a 422
    `model_not_allowed` (tests/organizations/test_member_models.py)."""
    turn = answered(owner, ScriptedClient(say("Hi.")))
    url = f"/api/conversations/{turn.thread_id}"
    for model in ("anthropic-claude-haiku-4-5", "no-such-model", "bedrock-claude-sonnet-4-6"):
        response = owner.client.patch(url, {"model": model, "title": "New"}, format="json")
        assert response.status_code == 400 and response.json()["code"] == "invalid", model
        assert "model" in response.json()["fields"]
    thread = Thread.objects.get(id=turn.thread_id)
    assert thread.model_option == "" and thread.title != "New"


def test_a_colleague_an_outsider_and_anonymous_cant_set_the_model(owner, colleague, outsider, anonymous,
                                                                   deployment):
    turn = answered(owner, ScriptedClient(say("Hi.")))
    url = f"/api/conversations/{turn.thread_id}"
    for client in (colleague.client, outsider.client):
        assert client.patch(url, {"model": ALLOWED}, format="json").status_code == 404
    assert anonymous.patch(url, {"model": ALLOWED}, format="json").status_code == 401
    assert Thread.objects.get(id=turn.thread_id).model_option == ""


def test_chat_takes_a_model_for_a_new_conversation(owner, deployment, django_capture_on_commit_callbacks):
    response = owner.client.post("/api/chat", {"message": "Hi", "model": ALLOWED}, format="json")
    assert response.status_code == 202
    assert Thread.objects.get(id=response.json()["conversationId"]).model_option == ALLOWED
    assert Turn.objects.get(id=response.json()["turnId"]).model_option == ALLOWED

    refused = owner.client.post("/api/chat", {"message": "Hi", "model": "anthropic-claude-haiku-4-5"},
                                format="json")
    assert refused.status_code == 400 and "model" in refused.json()["fields"]  # not an option here
    assert Thread.objects.count() == 1 and Message.objects.count() == 1  # nothing written


def test_the_worker_stops_a_turn_whose_model_is_no_longer_allowed(owner, deployment):
    submitted = chat_submit(owner.member, message="Hi", conversation_id=None, model=ALLOWED)
    deployment.ASSISTANT_MODEL_OPTIONS = ["offline"]  # an operator narrowed the options meanwhile
    client = ScriptedClient()
    run_turn(submitted.turn_id, client=client, clock=Clock())
    turn = Turn.objects.get(id=submitted.turn_id)
    assert turn.status == Turn.Status.FAILED and turn.failure_kind == Turn.FailureKind.MODEL
    assert client.requests == []  # the model was never called
    # And the next message is refused up front, until another model is chosen.
    response = owner.client.post("/api/chat", {"message": "Again", "conversationId": str(turn.thread_id)},
                                 format="json")
    assert response.status_code == 422 and response.json()["code"] == "model_not_allowed"


# --- Export of one conversation -------------------------------------------------


def test_the_owner_downloads_a_conversation_as_markdown_and_json(owner):
    turn = answered(owner, ScriptedClient(call(("search_notes", {"query": "Zurich"})), say("**None** found.")),
                    message="Any Zurich notes?")
    url = f"/api/conversations/{turn.thread_id}/export"
    markdown = owner.client.get(url, {"format": "md"})
    assert markdown.status_code == 200 and markdown["Content-Type"] == "text/markdown; charset=utf-8"
    assert markdown["Content-Disposition"].startswith('attachment; filename="any-zurich-notes-')
    text = markdown.content.decode()
    assert text.startswith("# Any Zurich notes?\n")
    assert "## You\n\nAny Zurich notes?" in text and "## Assistant\n\n**None** found." in text
    assert "- tool `search_notes`" in text

    document = json.loads(owner.client.get(url, {"format": "json"}).content)
    assert document == owner.client.get(f"/api/conversations/{turn.thread_id}").json()


def test_an_export_in_another_format_is_400(owner):
    turn = answered(owner, ScriptedClient(say("Hi.")))
    response = owner.client.get(f"/api/conversations/{turn.thread_id}/export", {"format": "pdf"})
    assert response.status_code == 400 and response.json()["code"] == "invalid_format"


def test_others_cant_export_the_conversation(owner, colleague, outsider, anonymous):
    turn = answered(owner, ScriptedClient(say("Hi.")))
    url = f"/api/conversations/{turn.thread_id}/export?format=json"
    assert colleague.client.get(url).status_code == 404
    assert outsider.client.get(url).status_code == 404
    assert anonymous.get(url).status_code == 401


# --- Feedback -------------------------------------------------------------------


def test_the_owner_gives_feedback_and_changes_it(owner):
    reply = reply_of(answered(owner, ScriptedClient(say("Hi."))))
    url = f"/api/messages/{reply.id}/feedback"
    response = owner.client.post(url, {"rating": "down", "comment": " too short "}, format="json")
    assert response.status_code == 200
    assert response.json()["rating"] == "down" and response.json()["comment"] == "too short"
    again = owner.client.post(url, {"rating": "up"}, format="json")
    assert again.status_code == 200 and again.json()["rating"] == "up" and again.json()["comment"] == ""
    assert MessageFeedback.objects.get().rating == "up"  # one row, updated


def test_feedback_only_on_the_assistants_replies_of_ones_own_conversations(owner, colleague, outsider, anonymous):
    turn = answered(owner, ScriptedClient(say("Hi.")))
    reply = reply_of(turn)
    url = f"/api/messages/{reply.id}/feedback"
    for client in (colleague.client, outsider.client):
        assert client.post(url, {"rating": "up"}, format="json").status_code == 404
    assert anonymous.post(url, {"rating": "up"}, format="json").status_code == 401
    own_message = Message.objects.get(turn_id=turn.id, role="user")
    assert owner.client.post(f"/api/messages/{own_message.id}/feedback", {"rating": "up"},
                             format="json").status_code == 404
    assert MessageFeedback.objects.count() == 0


def test_feedback_is_bounded(owner):
    reply = reply_of(answered(owner, ScriptedClient(say("Hi."))))
    url = f"/api/messages/{reply.id}/feedback"
    assert owner.client.post(url, {"rating": "meh"}, format="json").status_code == 400
    assert owner.client.post(url, {"rating": "up", "comment": "x" * 501}, format="json").status_code == 400
    assert MessageFeedback.objects.count() == 0


def test_feedback_is_in_the_export_and_erased_with_the_person(owner):
    from assistant_engine.organizations.personal_data import erase_user

    reply = reply_of(answered(owner, ScriptedClient(say("Hi."))))
    owner.client.post(f"/api/messages/{reply.id}/feedback", {"rating": "up", "comment": "spot on"}, format="json")
    response = owner.client.get("/api/me/export")
    [exported] = json.loads(b"".join(response.streaming_content))["feedback"]
    assert exported["rating"] == "up" and exported["comment"] == "spot on"
    assert exported["messageId"] == str(reply.id) and exported["conversationId"] == str(reply.thread_id)
    while not erase_user(owner.user, 100).done:
        pass
    assert MessageFeedback.objects.count() == 0


def test_staff_read_feedback_and_opening_one_is_recorded(owner, admin_client):
    reply = reply_of(answered(owner, ScriptedClient(say("Hi."))))
    owner.client.post(f"/api/messages/{reply.id}/feedback", {"rating": "down", "comment": "wrong city"},
                      format="json")
    feedback = MessageFeedback.objects.get()
    listing = admin_client.get("/admin/conversations/messagefeedback/")
    assert listing.status_code == 200 and b"wrong city" not in listing.content
    # The list showed whose feedback it is: one row for the person, no object opened.
    listed = StaffAccess.objects.get()
    assert (listed.kind, listed.person_id, listed.object_id) == ("feedback", owner.user.pk, "")
    page = admin_client.get(f"/admin/conversations/messagefeedback/{feedback.pk}/change/")
    assert page.status_code == 200 and b"wrong city" in page.content
    access = StaffAccess.objects.exclude(pk=listed.pk).get()
    assert access.kind == "feedback" and access.person_id == owner.user.pk and access.object_id == str(feedback.pk)
    # The person is told on their data page, in words.
    assert "a staff member read your feedback on a reply" in web_client(owner).get("/data/").content.decode()


def test_an_empty_patch_changes_nothing(owner):
    turn = answered(owner, ScriptedClient(say("Hi.")))
    thread = Thread.objects.get(id=turn.thread_id)
    response = owner.client.patch(f"/api/conversations/{thread.id}", {}, format="json")
    assert response.status_code == 200 and response.json()["title"] == thread.title
    assert Thread.objects.get(id=thread.id).updated_at == thread.updated_at
