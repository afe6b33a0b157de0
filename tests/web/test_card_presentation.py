"""Issue 22, points 1 and 8 in the browser's card: the shared presentation,
warnings first, the whole description before any Confirm; a card that
repeats a confirmed action says so and its button is "Confirm again"."""

import html
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from assistant.models import ActionCard
from assistant.proposals import TRIFECTA_WARNING
from tests.web.conftest import make_card, make_conversation

pytestmark = pytest.mark.django_db

LONG = "Send an email\nTo: x@evil.test\nSubject: All\n\n" + " ".join(f"line{n:04d}" for n in range(800))


def fragment(client, card) -> str:
    response = client.get(f"/cards/{card.id}/")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_the_warning_comes_before_the_title_and_the_whole_description_before_confirm(owner, owner_web):
    card = make_card(owner, make_conversation(owner), warning=True, description=LONG, tool_name="send_email",
                     tool_input={"to": "x@evil.test", "subject": "All", "body": "…"})
    page = fragment(owner_web, card)
    shown = LONG.removeprefix("Send an email\n")  # issue 34.6: the title is not said twice
    assert page.index(TRIFECTA_WARNING) < page.index('class="card__title"') < page.index(shown)
    assert page.index(shown) < page.index('data-card-action="confirm"')
    assert page.count("Send an email") == 1 and "data-card-repeat" not in page


def test_a_repeat_card_says_when_and_offers_confirm_again(owner, owner_web):
    card = make_card(owner, make_conversation(owner), description="Send an email\nTo: bob@example.com")
    ActionCard.objects.filter(id=card.id).update(identical_done_at=timezone.now() - timedelta(minutes=5))
    page = fragment(owner_web, card)
    assert "data-card-repeat" in page and ">Confirm again</button>" in page
    assert page.index("An identical action was already confirmed") < page.index('class="card__title"')


def test_a_decided_card_shows_no_warning_nor_buttons(owner, owner_web):
    card = make_card(owner, make_conversation(owner), warning=True, status=ActionCard.Status.CONFIRMED)
    page = fragment(owner_web, card)
    assert TRIFECTA_WARNING not in page and 'data-card-action="confirm"' not in page


@pytest.mark.parametrize("language", ["de", "fr", "it"])
def test_the_presentation_is_translated(owner, language):
    from assistant.card_presentation import present

    card = make_card(owner, make_conversation(owner), warning=True, tool_name="send_email")
    card.identical_done_at = timezone.now()
    with translation.override(language):
        shown = present(card)
    assert shown.notices[0].text != TRIFECTA_WARNING and "An identical" not in shown.notices[1].text
    assert shown.confirm_label != "Confirm again" and shown.title != "Send an email"
