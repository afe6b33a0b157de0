"""Linking a Telegram account: the page (owner, colleague, outsider,
anonymous), the operators' command, the one-time code, /start, /org,
/unlink, and the person's export and erasure."""

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from assistant_engine.organizations.api import SESSION_ORGANIZATION_KEY
from assistant_engine.organizations.models import Membership
from assistant_engine.organizations.personal_data import erase_user, export_user
from assistant_engine.surfaces.telegram import handlers
from assistant_engine.surfaces.telegram.linking import code_hash, link_code_create
from assistant_engine.surfaces.telegram.models import LinkCode, TelegramLink
from tests.conftest import make_person
from tests.telegram.conftest import COLIN_TG, OLIVIA_TG, SECRET, STRANGER_TG, message_update

pytestmark = pytest.mark.django_db


def browser(person) -> Client:
    client = Client()
    client.force_login(person.user)
    return client


def said(outcome) -> list[str]:
    return [kwargs["text"] for name, kwargs in outcome.calls if name == "send_html"]


def send(telegram_id: int, text: str) -> list[str]:
    return said(handlers.handle_update(message_update(telegram_id, text)))


def linked(person, telegram_id=OLIVIA_TG) -> TelegramLink:
    send(telegram_id, f"/start {link_code_create(person.member).code}")
    return TelegramLink.objects.get(telegram_user_id=telegram_id, organization=person.organization)


# --- The page ---------------------------------------------------------------------


def test_the_owner_gets_a_one_time_code_and_its_deep_link_stored_hashed(owner, telegram_on):
    response = browser(owner).post("/telegram/link/", {"action": "code"})
    assert response.status_code == 200
    page = response.content.decode()
    code = re.search(r"https://t.me/assistant_bot\?start=([A-Za-z0-9_-]+)", page).group(1)
    stored = LinkCode.objects.get()
    assert stored.code_hash == code_hash(code) and code not in str(LinkCode.objects.values().get())
    assert (stored.user_id, stored.organization_id) == (owner.user.id, owner.organization.id)
    assert timedelta(minutes=9) < stored.expires_at - timezone.now() <= timedelta(minutes=10)


def test_the_page_shows_only_the_persons_own_link_and_removes_only_it(owner, colleague, outsider, telegram_on):
    linked(owner)
    linked(colleague, COLIN_TG)
    assert "data-telegram-linked" in browser(owner).get("/telegram/link/").content.decode()
    assert "data-telegram-unlinked" in browser(outsider).get("/telegram/link/").content.decode()
    # A colleague's and an outsider's "remove" touch only their own (absent or present) link.
    browser(outsider).post("/telegram/link/", {"action": "unlink"})
    assert TelegramLink.objects.count() == 2
    browser(colleague).post("/telegram/link/", {"action": "unlink"})
    assert list(TelegramLink.objects.values_list("user_id", flat=True)) == [owner.user.id]
    assert browser(owner).post("/telegram/link/", {"action": "unlink"}).status_code == 302
    assert not TelegramLink.objects.exists()


def test_anonymous_is_sent_to_the_login(anonymous, telegram_on):
    response = Client().get("/telegram/link/")
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert Client().post("/telegram/link/", {"action": "code"}).status_code in (302, 403)
    assert not LinkCode.objects.exists()


def test_an_unknown_action_is_400(owner, telegram_on):
    assert browser(owner).post("/telegram/link/", {"action": "steal"}).status_code == 400


def test_the_page_says_when_telegram_is_off(owner, settings):
    settings.TELEGRAM_BOT_TOKEN = ""
    assert "data-telegram-off" in browser(owner).get("/telegram/link/").content.decode()


# --- The command -------------------------------------------------------------------


def test_the_command_prints_one_code_and_nothing_else(owner):
    out = StringIO()
    call_command("telegram_link_code", "olivia", "--organization", "acme", stdout=out)
    code = out.getvalue().strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{20,64}", code) and out.getvalue() == code + "\n"
    assert LinkCode.objects.get().code_hash == code_hash(code)


def test_the_command_refuses_a_person_outside_the_organization(owner, outsider):
    with pytest.raises(CommandError):
        call_command("telegram_link_code", "otto", "--organization", "acme", stdout=StringIO())
    assert not LinkCode.objects.exists()


# --- /start, /org, /unlink ---------------------------------------------------------------


def test_a_code_links_once_and_only_while_valid(owner, telegram_on):
    issued = link_code_create(owner.member)
    assert "Linked to <b>Acme</b>" in send(OLIVIA_TG, f"/start {issued.code}")[0]
    assert "not valid" in send(STRANGER_TG, f"/start {issued.code}")[0]  # used
    assert not TelegramLink.objects.filter(telegram_user_id=STRANGER_TG).exists()
    expired = link_code_create(owner.member, now=timezone.now() - timedelta(minutes=11))
    assert "not valid" in send(STRANGER_TG, f"/start {expired.code}")[0]
    assert "not valid" in send(STRANGER_TG, "/start made-up-code")[0]
    assert TelegramLink.objects.count() == 1


def test_a_code_of_a_person_no_longer_in_the_organization_links_nothing(owner, telegram_on):
    issued = link_code_create(owner.member)
    Membership.objects.filter(user=owner.user).delete()
    assert "not valid" in send(OLIVIA_TG, f"/start {issued.code}")[0]
    assert not TelegramLink.objects.exists()


def test_an_unlinked_user_gets_instructions_and_nothing_is_written(owner, telegram_on):
    for text in ("hello", "/new", "/credits", "/org acme", "/unlink", "/start"):
        assert "link your account" in send(STRANGER_TG, text)[0]
    assert not TelegramLink.objects.exists()
    from conversations.models import Thread
    assert not Thread.objects.exists()


def test_a_linked_person_writing_in_a_group_gets_no_turn(owner, telegram_on):
    linked(owner)
    outcome = handlers.handle_update(message_update(OLIVIA_TG, "Search my notes for x", group_id=-100123))
    assert "private chat" in said(outcome)[0] and outcome.follow_turn is None
    assert outcome.calls[0][1]["chat_id"] == -100123
    from conversations.models import Thread
    assert not Thread.objects.exists()


def test_start_without_a_code_helps_a_linked_person(owner, telegram_on):
    linked(owner)
    assert "/new starts a new conversation" in send(OLIVIA_TG, "/start")[0]


def test_a_person_in_two_organizations_links_each_and_switches_with_org(owner, globex, telegram_on):
    Membership.objects.create(organization=globex, user=owner.user, role="member")
    from assistant_engine.organizations.members import Member
    linked(owner)
    second = link_code_create(Member(globex.id, owner.user.id, "member", "globex"))
    send(OLIVIA_TG, f"/start {second.code}")
    assert list(TelegramLink.objects.filter(active=True).values_list("organization__slug", flat=True)) == ["globex"]
    listing = send(OLIVIA_TG, "/org")[0]
    assert "Acme" in listing and "Globex" in listing
    assert "Now speaking for <b>Acme</b>" in send(OLIVIA_TG, "/org acme")[0]
    assert list(TelegramLink.objects.filter(active=True).values_list("organization__slug", flat=True)) == ["acme"]
    assert "not linked" in send(OLIVIA_TG, "/org initech")[0]
    unlinked = send(OLIVIA_TG, "/unlink")[0]
    assert "Unlinked from Acme" in unlinked and "Now speaking for <b>Globex</b>" in unlinked
    assert list(TelegramLink.objects.values_list("organization__slug", "active")) == [("globex", True)]
    assert "Globex" in send(OLIVIA_TG, "/credits")[0]


def test_a_link_whose_membership_is_gone_is_removed_at_the_next_message(owner, telegram_on):
    linked(owner)
    Membership.objects.filter(user=owner.user).delete()
    assert "link your account" in send(OLIVIA_TG, "hello")[0]
    assert not TelegramLink.objects.exists()


def test_credits_shows_the_months_balance(owner, telegram_on):
    linked(owner)
    text = send(OLIVIA_TG, "/credits")[0]
    assert "<b>1000</b> of 1000 credits left" in text


def test_new_starts_a_fresh_conversation_and_keeps_the_old_one(owner, telegram_on):
    link = linked(owner)
    from conversations.models import Thread
    old = Thread.objects.create(organization=owner.organization, user=owner.user, created_at=timezone.now(),
                                updated_at=timezone.now(), last_activity_at=timezone.now(), surface="telegram",
                                continuous=True)
    TelegramLink.objects.filter(id=link.id).update(thread=old)
    assert "new conversation" in send(OLIVIA_TG, "/new")[0]
    assert TelegramLink.objects.get(id=link.id).thread_id is None and Thread.objects.filter(id=old.id).exists()


# --- Export and erasure ---------------------------------------------------------------------


def test_the_export_includes_the_link_and_the_erasure_removes_it(owner, colleague, telegram_on):
    linked(owner)
    linked(colleague, COLIN_TG)
    link_code_create(owner.member)
    exported = export_user(owner.member)["telegram"]
    assert [(e["telegramUserId"], e["active"]) for e in exported] == [(OLIVIA_TG, True)]
    while not erase_user(owner.user, 500).done:
        pass
    assert list(TelegramLink.objects.values_list("user_id", flat=True)) == [colleague.user.id]
    assert not LinkCode.objects.filter(user_id=owner.user.id).exists()


def test_a_new_person_starts_unlinked(acme, telegram_on):
    person = make_person("nina", acme)
    assert "data-telegram-unlinked" in browser(person).get("/telegram/link/").content.decode()


# --- setWebhook ------------------------------------------------------------------------------


def test_the_set_webhook_command_sends_the_secret_and_the_update_types(telegram_on):
    out = StringIO()
    call_command("telegram_set_webhook", "https://assistant.example.com/telegram/webhook", stdout=out)
    (sent,) = telegram_on.of("setWebhook")
    assert sent.params == {"url": "https://assistant.example.com/telegram/webhook", "secret_token": SECRET,
                           "allowed_updates": ["message", "callback_query"]}
    assert "Webhook set" in out.getvalue()


def test_the_set_webhook_command_needs_a_token(settings):
    settings.TELEGRAM_BOT_TOKEN = ""
    with pytest.raises(CommandError):
        call_command("telegram_set_webhook", "https://x.example/telegram/webhook", stdout=StringIO())


def test_removing_the_active_link_on_the_page_makes_another_one_active(owner, globex, telegram_on):
    from assistant_engine.organizations.members import Member

    Membership.objects.create(organization=globex, user=owner.user, role="member")
    linked(owner)
    send(OLIVIA_TG, f"/start {link_code_create(Member(globex.id, owner.user.id, 'member', 'globex')).code}")
    client = browser(owner)
    session = client.session  # the page acts in the organization the session chose
    session[SESSION_ORGANIZATION_KEY] = "globex"
    session.save()
    assert client.post("/telegram/link/", {"action": "unlink"}).status_code == 302
    assert list(TelegramLink.objects.values_list("organization__slug", "active")) == [("acme", True)]


@pytest.mark.parametrize("same_organization", [True, False])
def test_a_code_of_another_person_does_not_take_over_an_account_linked_to_someone(
        owner, colleague, outsider, telegram_on, same_organization):
    """Olivia's Telegram account is linked to her. Someone else's code (a
    colleague's, or a person's of another organization), sent through a deep
    link Olivia is tricked into opening, must not make her account speak for
    them: her messages would go into their conversations. Nothing is linked,
    the code stays usable, and after /unlink it links."""
    linked(owner)
    other = colleague if same_organization else outsider
    issued = link_code_create(other.member)

    reply = send(OLIVIA_TG, f"/start {issued.code}")[0]

    assert "another person" in reply and "/unlink" in reply
    assert list(TelegramLink.objects.values_list("user_id", "active")) == [(owner.user.pk, True)]
    send(OLIVIA_TG, "/unlink")
    assert "Linked to" in send(OLIVIA_TG, f"/start {issued.code}")[0]
    assert list(TelegramLink.objects.values_list("user_id", flat=True)) == [other.user.pk]
