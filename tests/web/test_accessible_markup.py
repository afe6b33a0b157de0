"""Issue 34.10, in the markup every state of the chat renders: a way past the
sidebar straight to the message box, headings that don't jump a level in tool
rows (h2 message, h3 "Input"/"Result"), and cards of one tool told apart by
their names. (axe runs on the rendered states in the Chromium tests.)"""

import re

from tests.web.conftest import make_card, make_conversation


def test_the_chat_page_has_a_skip_link_to_the_message_box(owner_web):
    page = owner_web.get("/").content.decode()
    assert '<a class="skip-link" href="#composer-input" data-skip-to-composer>' in page
    assert 'id="composer-input"' in page


def test_tool_rows_have_h3_labels_under_the_messages_h2(owner, owner_web):
    thread = make_conversation(owner)
    page = owner_web.get(f"/c/{thread.id}/").content.decode()
    assert 'class="tool__label"' in page and "<h4" not in page
    assert re.search(r'<h3 class="tool__label">Input</h3>', page)


def test_two_cards_of_one_tool_have_different_names(owner, owner_web):
    thread = make_conversation(owner)
    first = make_card(owner, thread, description="Delete the note “Budget”")
    second = make_card(owner, thread, description="Delete the note “Trip”")
    names = []
    for card in (first, second):
        page = owner_web.get(f"/cards/{card.id}/").content.decode()
        labelled = re.search(rf'id="card-{card.id}"[^>]*aria-labelledby="([^"]+)"', page).group(1).split()
        names.append(" ".join(re.search(rf'id="{ident}">([^<]*)<', page).group(1) for ident in labelled))
    assert names[0] != names[1] and "Budget" in names[0] and "Trip" in names[1]
