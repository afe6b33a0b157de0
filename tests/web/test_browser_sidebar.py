"""Rename and search in the sidebar, in real Chromium; the open conversation
is always listed and highlighted; axe-core on each state."""

from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.models import Thread
from tests.web.accessibility import assert_accessible
from tests.web.conftest import make_conversation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_rename_inline_enter_saves_and_escape_cancels(browser, owner):
    thread = make_conversation(owner, title="hello there")
    page = browser.page(owner)
    page.goto(f"/c/{thread.id}/")
    page.get_by_role("button", name="Rename “hello there”").click()
    field = page.get_by_label("New title (Enter to save, Escape to cancel)")
    assert page.evaluate("document.activeElement.classList.contains('conv__rename')")
    field.fill("Something else")
    assert_accessible(page, "renaming a conversation")
    browser.shot(page, "sidebar-rename")
    field.press("Escape")
    assert field.count() == 0
    thread.refresh_from_db()
    assert thread.title == "hello there"

    page.get_by_role("button", name="Rename “hello there”").click()
    page.get_by_label("New title (Enter to save, Escape to cancel)").fill("Trip to Zurich, day two")
    page.keyboard.press("Enter")
    page.locator(".conv.is-current .conv__title", has_text="Trip to Zurich, day two").wait_for()
    thread.refresh_from_db()
    assert thread.title == "Trip to Zurich, day two"
    assert page.locator(".chat__title").inner_text() == "Trip to Zurich, day two"
    page.reload()
    assert page.locator(".conv.is-current .conv__title").inner_text() == "Trip to Zurich, day two"


def test_search_filters_the_sidebar_and_marks_the_words(browser, owner, colleague):
    make_conversation(owner, title="Trip to Zurich")
    make_conversation(owner, title="Numbers", content="What is the budget for Zurich?")
    make_conversation(owner, title="Groceries", content="milk")
    make_conversation(colleague, title="Zurich of a colleague")
    page = browser.page(owner)
    page.goto("/")
    search = page.get_by_role("searchbox", name="Search your conversations")
    search.fill("zurich")
    page.wait_for_function("() => document.querySelectorAll('[data-conversation-item]').length === 2")
    titles = page.locator("[data-conversation-item] .conv__title").all_inner_texts()
    assert sorted(titles) == ["Numbers", "Trip to Zurich"]  # the colleague's is never there
    assert page.locator(".conv__title mark").all_inner_texts() == ["Zurich"]
    # Where a message matched, a snippet says it (issue 34.5); a matching title needs none.
    snippets = page.locator("[data-conversation-snippet]")
    assert snippets.all_inner_texts() == ["… What is the budget for Zurich? …"]
    assert snippets.locator("mark").all_inner_texts() == ["Zurich"]
    assert_accessible(page, "a search in the sidebar")
    browser.shot(page, "sidebar-search")
    search.fill("nothing like it")
    page.get_by_text("No conversation matches “nothing like it”.").wait_for()
    search.fill("")
    page.wait_for_function("() => document.querySelectorAll('[data-conversation-item]').length === 3")


def test_the_open_conversation_is_listed_and_highlighted_even_past_the_first_page(browser, owner):
    now = timezone.now()
    old = make_conversation(owner, title="The oldest one", moment=now - timedelta(days=90))
    for number in range(55):
        make_conversation(owner, title=f"Conversation {number}", moment=now - timedelta(minutes=number))
    page = browser.page(owner)
    page.goto(f"/c/{old.id}/")
    current = page.locator(".conv.is-current")
    assert current.count() == 1 and current.inner_text().startswith("The oldest one")
    assert current.locator("[aria-current='page']").count() == 1
    assert Thread.objects.filter(user=owner.user).count() == 56
