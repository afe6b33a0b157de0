"""The trifecta guard over the esm-ai-memory contract: text the client stores
in a role only the engine writes (`tool`, `event`, an assistant reply no turn
of ours wrote) counts as private and untrusted, as through `PUT /api/`."""

import pytest

from conversations.models import Thread
from tests.assistant.test_trifecta_context import MODES, SEND, UPLOADED_TEXT, expected, send_outcome, turn_of
from tests.fakes.scripted import call, say
from tests.surfaces.test_ai_memory_contract import EPOCH_MS, client_document, url


def uploaded(role: str) -> dict:
    """The seed client's document, with third-party text stored in `role` and no tool call."""
    document = client_document("conv-taint")
    user = document["messages"][0]
    document["messages"] = [user, {"id": "msg-2", "role": role, "content": UPLOADED_TEXT[role],
                                   "createdAt": EPOCH_MS + 1000}]
    return document


@pytest.mark.parametrize("role", list(UPLOADED_TEXT))
@pytest.mark.parametrize("mode", MODES)
def test_a_send_after_uploaded_text_is_warned_or_refused(owner, settings, mode, role):
    settings.ASSISTANT_TRIFECTA = mode
    response = owner.client.put(url("conv-taint"), uploaded(role), format="json")
    assert response.status_code in (200, 201), response.content
    thread = Thread.objects.get()

    turn = turn_of(owner, call(SEND), say("Card."), message="email it", conversation_id=thread.id)

    assert send_outcome(turn) == expected(mode)


def test_the_same_conversation_with_the_persons_text_only_sends_plainly(owner, settings):
    settings.ASSISTANT_TRIFECTA = "block"
    document = client_document("conv-taint")
    document["messages"] = document["messages"][:1]
    assert owner.client.put(url("conv-taint"), document, format="json").status_code in (200, 201)

    turn = turn_of(owner, call(SEND), say("Card."), message="email it", conversation_id=Thread.objects.get().id)

    assert send_outcome(turn) == "plain"
