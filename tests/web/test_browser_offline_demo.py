"""The offline demo model in real Chromium with a real worker: a person who
chose German on their account gets its answers in German, a follow-up ("öffne
die zweite") opens the second note it listed, and "what can you render?" shows
a heading, a list, a table, coloured code and formulas typeset by KaTeX;
axe-core on the result."""

import pytest

from assistant_engine.organizations.services import preferred_language_set
from tests.web.accessibility import assert_accessible
from tests.web.test_browser import send, wait_for_reply
from workspace.models import Note

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_offline_demo_follows_an_exchange_in_german_and_shows_what_it_renders(browser, owner):
    Note.objects.create(organization=owner.organization, owner=owner.user, title="Budget 2026", body="Alt.")
    Note.objects.create(organization=owner.organization, owner=owner.user, title="Budget 2027", body="Neu.")
    preferred_language_set(user_id=owner.user.id, language="de")
    page = browser.page(owner)
    page.goto("/")
    last_reply = page.locator(".msg--assistant:not(.msg--previous)").last

    send(page, "durchsuche meine Notizen nach Budget")
    wait_for_reply(page)
    assert 'Ich habe 2 Notizen gefunden: "Budget 2027", "Budget 2026".' in last_reply.inner_text()
    send(page, "öffne die zweite")
    wait_for_reply(page)
    assert 'Die Notiz "Budget 2026" sagt: Alt.' in last_reply.inner_text()

    send(page, "Was kannst du darstellen?")
    wait_for_reply(page)
    page.wait_for_function("() => document.querySelectorAll('.msg--assistant .math .katex').length === 2")
    assert last_reply.get_by_role("heading", name="Was ich darstellen kann").count() == 1
    assert last_reply.locator("table tr").count() == 4 and last_reply.locator("li").count() >= 2
    assert last_reply.locator("pre .tok-k", has_text="def").count() == 1  # coloured code
    inline, display = last_reply.locator(".math .katex").all()
    assert inline.locator("annotation").text_content() == "E = mc^2"
    assert "\\int_0^1" in display.locator("annotation").text_content()
    assert_accessible(page, "the offline model's rendering showcase")
