"""The UI in German in real Chromium: from the browser's language, then chosen
in the header and kept across a login elsewhere; the script's own strings
(Stop, the live region, a card's outcome) in German too; axe-core on each state."""

import gettext

import pytest
from django.conf import settings
from django.utils import translation

from assistant_engine.organizations.models import PersonPreferences
from tests.web.accessibility import assert_accessible, open_account_menu
from tests.web.conftest import make_card, make_conversation
from tests.web.test_browser import wait_for_reply

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def de(text: str) -> str:
    with translation.override("de"):
        result = translation.gettext(text)
    assert result != text, f"{text!r} is not translated into German"
    return result


def de_js(text: str) -> str:
    """`text` in German from the browser script's catalog (djangojs)."""
    result = gettext.translation("djangojs", settings.LOCALE_PATHS[0], languages=["de"]).gettext(text)
    assert result != text, f"{text!r} is not translated into German (djangojs)"
    return result


def test_a_german_browser_gets_the_german_ui_and_its_script_speaks_german(browser, owner):
    page = browser.page(owner, locale="de-CH")
    page.goto("/")
    assert page.get_attribute("html", "lang") == "de"
    composer = page.get_by_label(de("Message to the assistant"))
    assert composer.get_attribute("placeholder") == de("Ask the assistant…")
    assert_accessible(page, "German, a new conversation")
    browser.shot(page, "german-new-conversation")
    composer.fill("hello")
    composer.press("Enter")
    # Strings of the script (static/web/*.js, the djangojs catalog) while the reply runs and after.
    page.get_by_role("button", name=de_js("Stop")).or_(page.get_by_role("button", name=de("Send"))).wait_for()
    wait_for_reply(page)
    assert page.locator("[data-send-label]").text_content() == de("Send")
    page.wait_for_function("(prefix) => document.querySelector('[data-announcer]').textContent.startsWith(prefix)",
                           arg=de_js("The assistant replied: %(sentence)s").split("%(")[0])
    page.locator(".msg--assistant [data-copy]").first.wait_for()
    assert page.locator(".msg--assistant [data-copy]").first.text_content() == de_js("Copy reply")
    assert_accessible(page, "German, after a reply")
    assert browser.errors == []


def test_the_choice_in_the_header_is_kept_and_follows_the_person(browser, owner):
    thread = make_conversation(owner)
    make_card(owner, thread)
    page = browser.page(owner, locale="en-US")
    page.goto(f"/c/{thread.id}/")
    assert page.get_attribute("html", "lang") == "en"
    open_account_menu(page)
    assert not page.get_by_role("button", name="Change language").is_visible()  # issue 34.6: no second button
    page.get_by_label("Language (applied when chosen)").select_option("de")
    page.wait_for_function("document.documentElement.lang === 'de'")
    page.wait_for_url(f"**/c/{thread.id}/")
    assert page.get_attribute("html", "lang") == "de"
    assert PersonPreferences.objects.get(user=owner.user).language == "de"
    card = page.locator("[data-card-id]")
    assert card.get_by_role("button", name=de("Confirm")).is_visible()
    card.get_by_role("button", name=de("Cancel")).click()
    page.wait_for_function("(text) => document.querySelector('[data-announcer]').textContent.includes(text)",
                           arg=de_js("Card cancelled."))
    assert_accessible(page, "German, a decided card")
    browser.shot(page, "german-conversation")

    # Another browser, English by default: the login puts the person's language back.
    elsewhere = browser.page(locale="en-US")
    elsewhere.goto("/login/")
    assert elsewhere.get_attribute("html", "lang") == "en"
    elsewhere.get_by_label("Username").fill("olivia")
    elsewhere.get_by_label("Password").fill("pw-olivia")
    elsewhere.get_by_role("button", name="Log in", exact=True).click()
    elsewhere.get_by_label(de("Message to the assistant")).wait_for()
    assert elsewhere.get_attribute("html", "lang") == "de"
    assert_accessible(elsewhere, "German after a login elsewhere")
