"""Issue 22, point 5: lookalike and hidden characters. A non-ASCII domain is
shown on the card in the ASCII (punycode) form the mail goes to, with a note;
format characters (RLO, zero-width…) are refused when the tool is called,
never at send."""

import pytest
from django.core import mail

from assistant.models import ActionCard
from conversations.models import ToolCall
from tests.assistant.conftest import play
from tests.fakes.scripted import ScriptedClient, call, say

pytestmark = pytest.mark.django_db

LOOKALIKE = "alice@\u0430pple.com"  # a Cyrillic "а"


def send(owner, **fields):
    tool_input = {"to": "bob@example.com", "subject": "Hi", "body": "Hello.", **fields}
    turn = play(owner, ScriptedClient(call(("send_email", tool_input)), say("Card.")))
    return turn, ToolCall.objects.get(message__turn_id=turn.id)


@pytest.mark.parametrize(("field", "value", "code"), [
    ("to", "bob@\u202emoc.elpmaxe", "U+202E"),  # right-to-left override: shows as "example.com"
    ("to", "bob@exam\u200bple.com", "U+200B"),  # zero-width space
    ("subject", "Invoice \u202egpj.exe", "U+202E"),
    ("body", "Pay to account 12\u200d34", "U+200D"),
    ("body", "soft\u00adhyphen", "U+00AD"),
])
def test_a_format_character_is_a_tool_error_at_the_call_and_no_card(owner, field, value, code):
    turn, tool_call = send(owner, **{field: value})
    assert tool_call.is_error and code in tool_call.result["error"] and field in tool_call.result["error"]
    assert not ActionCard.objects.filter(turn=turn).exists()


def test_emoji_joined_by_zero_width_joiners_are_kept_in_a_body(owner):
    _, tool_call = send(owner, body="The family 👨\u200d👩\u200d👧 says hi")
    assert not tool_call.is_error and ActionCard.objects.get().status == "pending"


def test_a_non_ascii_domain_is_shown_in_its_ascii_form_with_a_note_and_the_mail_goes_there(owner):
    send(owner, to=LOOKALIKE)
    card = ActionCard.objects.get()
    assert "To: alice@xn--pple-43d.com\n" in card.description
    assert "non-ASCII" in card.description and "\u0430pple.com" in card.description
    response = owner.client.post(f"/api/cards/{card.id}/confirm", {"hash": card.snapshot_hash}, format="json")
    assert response.status_code == 200, response.content
    assert mail.outbox[0].to == [LOOKALIKE]  # what the backend encodes as the ASCII form shown
    assert mail.outbox[0].message()["To"] == "alice@xn--pple-43d.com"


def test_an_ascii_address_has_no_note(owner):
    send(owner)
    assert "non-ASCII" not in ActionCard.objects.get().description
