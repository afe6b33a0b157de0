"""The UI's languages: the browser's Accept-Language, the person's choice kept on
their account and in the language cookie (and put back at login), the script's
catalog, the engine's notices shown translated; each door tried by the owner, a
colleague, an outsider and an anonymous visitor."""

import gettext as gettext_module
import json

import pytest
from django.conf import settings
from django.test import Client
from django.utils import translation

from assistant.turn.outcome import CANCELLED_NOTICE
from assistant_engine.organizations.models import PersonPreferences
from conversations.models import Message
from tests.streamed import streamed_json
from tests.web.conftest import make_conversation, web_client

pytestmark = pytest.mark.django_db
COOKIE = settings.LANGUAGE_COOKIE_NAME


def translated(text: str, language: str) -> str:
    """`text` in `language` from the committed catalog; fails if it isn't translated."""
    with translation.override(language):
        result = translation.gettext(text)
    assert result != text, f"{text!r} has no {language} translation"
    return result


def choose(client: Client, language: str, next_url: str = "/data/"):
    return client.post("/language", {"language": language, "next": next_url})


def test_the_browsers_language_is_used_until_the_person_chooses(owner_web):
    html = owner_web.get("/", HTTP_ACCEPT_LANGUAGE="de-CH,de;q=0.9,en;q=0.5").content.decode()
    assert '<html lang="de">' in html and translated("New conversation", "de") in html
    assert '<script src="/jsi18n/" defer></script>' in html
    english = owner_web.get("/", HTTP_ACCEPT_LANGUAGE="pt-BR").content.decode()
    assert '<html lang="en">' in english and "New conversation" in english


def test_the_choice_is_kept_on_the_account_and_in_the_cookie(owner, owner_web):
    response = choose(owner_web, "fr")
    assert response.status_code == 302 and response["Location"] == "/data/"
    cookie = response.cookies[COOKIE]
    assert cookie.value == "fr" and cookie["httponly"] and cookie["samesite"] == "Lax"
    assert cookie["max-age"] == settings.LANGUAGE_COOKIE_AGE
    assert PersonPreferences.objects.get(user=owner.user).language == "fr"
    # The cookie wins over the browser's language.
    html = owner_web.get("/data/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="fr">' in html and translated("What is stored", "fr") in html
    assert '<option value="fr" lang="fr" selected>Français</option>' in html


def test_login_puts_back_the_language_chosen_elsewhere(owner):
    choose(web_client(owner), "it")
    other_browser = Client()
    response = other_browser.post("/login/", {"username": "olivia", "password": "pw-olivia"})
    assert response.status_code == 302 and response.cookies[COOKIE].value == "it"
    html = other_browser.get("/").content.decode()
    assert '<html lang="it">' in html and translated("How can I help?", "it") in html


def test_a_person_without_a_choice_logs_in_without_a_language_cookie(owner):
    response = Client().post("/login/", {"username": "olivia", "password": "pw-olivia"})
    assert response.status_code == 302 and COOKIE not in response.cookies


def test_one_persons_choice_is_not_another_persons(owner_web, colleague, outsider):
    choose(owner_web, "de")
    for person in (colleague, outsider):
        html = web_client(person).get("/").content.decode()
        assert '<html lang="en">' in html
        assert not PersonPreferences.objects.filter(user=person.user).exists()


def test_an_anonymous_visitor_chooses_for_this_browser_only():
    visitor = Client()
    response = choose(visitor, "de", "/login/")
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert response.cookies[COOKIE].value == "de" and not PersonPreferences.objects.exists()
    html = visitor.get("/login/").content.decode()
    assert '<html lang="de">' in html and translated("Log in to Assistant", "de") in html


def test_an_unknown_language_is_refused_and_nothing_kept(owner, owner_web):
    for language in ("xx", "", "de-CH; drop table", "EN"):
        response = choose(owner_web, language)
        assert response.status_code == 400 and COOKIE not in response.cookies
    assert not PersonPreferences.objects.filter(user=owner.user).exists()
    assert owner_web.get("/language").status_code == 405


def test_next_must_stay_on_this_site(owner_web):
    for outside in ("https://evil.example/", "//evil.example/x", "javascript:alert(1)"):
        response = choose(owner_web, "de", outside)
        assert response.status_code == 302 and response["Location"] == "/"


def test_another_site_cannot_switch_the_language(owner):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner.user)
    assert choose(client, "de").status_code == 403
    assert not PersonPreferences.objects.filter(user=owner.user).exists()


def test_the_script_catalog_follows_the_language(owner_web):
    choose(owner_web, "de")
    catalog = owner_web.get("/jsi18n/")
    assert catalog.status_code == 200 and catalog["Content-Type"].startswith("text/javascript")
    strings = script_catalog(catalog.content.decode())
    assert strings["Stop"] == translated_js("Stop", "de")
    assert strings["Stopping the reply…"] and strings["Stopping the reply…"] != "Stopping the reply…"
    assert script_catalog(Client().get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="en").content.decode()) == {}


def script_catalog(script: str) -> dict:
    """The catalog Django's JavaScriptCatalog embeds in its script ({} when none)."""
    if "const newcatalog = " not in script:
        return {}
    start = script.index("const newcatalog = ") + len("const newcatalog = ")
    return json.loads(script[start:script.index(";\n", start)])


def translated_js(text: str, language: str) -> str:
    catalog = gettext_module.translation("djangojs", settings.LOCALE_PATHS[0], languages=[language])
    result = catalog.gettext(text)
    assert result != text
    return result


def test_the_engines_notices_are_shown_in_the_persons_language(owner, owner_web):
    thread = make_conversation(owner)
    Message.objects.filter(thread=thread, role="assistant").update(notice=CANCELLED_NOTICE)
    choose(owner_web, "it")
    html = owner_web.get(f"/c/{thread.id}/").content.decode()
    assert translated(CANCELLED_NOTICE, "it") in html
    # A notice the catalog doesn't know is shown as stored.
    Message.objects.filter(thread=thread, role="assistant").update(notice="A notice from elsewhere.")
    assert "A notice from elsewhere." in owner_web.get(f"/c/{thread.id}/").content.decode()


def test_the_export_says_the_chosen_language(owner, owner_web):
    assert streamed_json(owner.client.get("/api/me/export"))["person"]["language"] is None
    choose(owner_web, "fr")
    assert streamed_json(owner.client.get("/api/me/export"))["person"]["language"] == "fr"


def test_the_api_keeps_its_codes_whatever_the_language(owner):
    response = owner.client.post("/api/chat", {"message": "   "}, format="json", HTTP_ACCEPT_LANGUAGE="de")
    assert response.status_code == 400 and response.json()["code"]
