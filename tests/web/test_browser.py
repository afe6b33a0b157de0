"""The chat in real headless Chromium, against the live server and a real
Celery worker running the offline demo model (see conftest.py and browser.py).
"""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from assistant.models import ActionCard
from assistant_engine.organizations.access_log import staff_access_record
from assistant_engine.organizations.models import Organization
from conversations.models import Message, Thread
from credits.models import LedgerEntry
from tests.web.accessibility import open_account_menu
from tests.web.conftest import make_card, make_conversation
from workspace.management.commands.seed_demo_workspace import seed
from workspace.models import Note, SentEmail

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONVERSATION_URL = re.compile(r".*/c/[0-9a-f-]{36}/$")

# Lengths of the live text each time it changes: proof that it arrived in pieces.
RECORD_STREAM = """() => {
  window.__lengths = [];
  new MutationObserver(() => {
    const text = document.querySelector('.prose.is-streaming');
    if (text) window.__lengths.push(text.textContent.length);
  }).observe(document.querySelector('[data-messages]'), {subtree: true, childList: true, characterData: true});
}"""


@pytest.fixture
def workspace(owner):
    seed(owner.member)
    return owner


def send(page, text):
    composer = page.get_by_label("Message to the assistant")
    composer.fill(text)
    composer.press("Enter")


def wait_for_reply(page):
    page.locator("[data-send]").wait_for(state="attached")
    page.wait_for_function("() => !document.querySelector('[data-send]').disabled"
                           " && !document.querySelector('.msg--assistant.is-live')")


def test_log_in_and_out(browser, owner):
    page = browser.page()
    page.goto("/")
    assert page.url.endswith("/login/?next=/")
    page.get_by_label("Username").fill("olivia")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    assert page.get_by_role("alert").is_visible()
    page.get_by_label("Password").fill("pw-olivia")
    browser.shot(page, "login")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{browser.url}/")
    assert page.get_by_role("heading", name="How can I help?").is_visible()
    open_account_menu(page)
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r".*/login/$"))


def test_a_reply_streams_in_then_the_conversation_resumes_after_reload(browser, workspace):
    page = browser.page(workspace)
    page.goto("/")
    assert page.locator("[data-credits-value]").inner_text() == "1000"
    assert page.locator("[data-processing]").inner_text().strip() == "Offline demo model"
    browser.shot(page, "chat-empty")
    page.evaluate(RECORD_STREAM)

    composer = page.get_by_label("Message to the assistant")
    composer.fill("hello")
    composer.press("Shift+Enter")
    composer.type("there")
    assert composer.input_value() == "hello\nthere"
    assert page.locator(".msg--user").count() == 0  # Shift+Enter did not send

    composer.press("Enter")
    send_button = page.locator("[data-send]")
    page.wait_for_function("() => (document.querySelector('.prose.is-streaming')?.textContent.length ?? 0) > 40")
    assert send_button.inner_text().strip() == "Stop"  # no second message while the turn runs: Send is Stop
    assert page.evaluate("document.activeElement.id") == "composer-input"  # focus back in the composer
    assert composer.input_value() == ""
    browser.shot(page, "chat-streaming")

    wait_for_reply(page)
    assert send_button.is_enabled() and send_button.inner_text().strip() == "Send"
    reply = page.locator(".msg--assistant .prose").last
    assert "offline demo model" in reply.inner_text()
    assert reply.locator("p").count() >= 1  # re-rendered from the server's Markdown at the end
    lengths = page.evaluate("window.__lengths")
    assert len(set(lengths)) >= 3 and max(lengths) > min(lengths), lengths  # arrived in pieces
    assert CONVERSATION_URL.match(page.url)
    assert page.locator("[data-sidebar-list] .conv.is-current").inner_text().startswith("hello there")

    page.reload()
    assert page.locator(".msg--user .msg__bubble").inner_text() == "hello\nthere"
    assert "offline demo model" in page.locator(".msg--assistant").inner_text()

    url = page.url
    send(page, "search my notes for budget")
    page.locator("[data-tool-call-id]").wait_for()
    wait_for_reply(page)
    assert page.url == url
    row = page.locator("details.tool").last
    assert "Search notes" in row.locator("summary").inner_text() and "Done" in row.locator("summary").inner_text()
    row.locator("summary").click()
    assert '"query": "budget"' in row.locator("[data-tool-input]").inner_text()
    assert "Quarterly planning" in row.locator("[data-tool-result]").inner_text()
    assert 'I found 1 note: "Quarterly planning".' in page.locator(".msg--assistant").last.inner_text()
    page.locator("[data-scroll]").evaluate("element => { element.scrollTop = element.scrollHeight; }")
    browser.shot(page, "tool-call")
    assert "offline demo model" in page.locator(".msg--assistant").first.inner_text()  # earlier reply untouched
    thread = Thread.objects.get()
    assert thread.messages.filter(role="user").count() == 2 and thread.status == Thread.Status.IDLE
    # The organization's spend counts both under the chat page (issue 35.1).
    assert list(LedgerEntry.objects.filter(kind="reserve").values_list("door", flat=True)) == ["browser"] * 2


def test_cards_are_confirmed_cancelled_or_refused_when_expired(browser, workspace):
    page = browser.page(workspace)
    page.goto("/")
    send(page, "delete the note Ideas for the team offsite")
    card = page.locator("[data-card-id]")
    card.wait_for()
    wait_for_reply(page)
    assert "Delete the note “Ideas for the team offsite”" in card.inner_text()
    assert "Awaits your confirmation" in page.locator("details.tool").last.inner_text()
    assert Note.objects.filter(title="Ideas for the team offsite").exists()
    browser.shot(page, "card-pending")
    card.get_by_role("button", name="Confirm").click()
    page.locator(".card--confirmed").wait_for()
    assert "you confirmed it and it was carried out" in page.locator(".card--confirmed").inner_text()
    assert "Confirmed" in page.locator("details.tool").last.locator("summary").inner_text()
    assert not Note.objects.filter(title="Ideas for the team offsite").exists()
    browser.shot(page, "card-confirmed")

    send(page, "email Lunch at noon? to marie.keller@example.com")
    pending = page.locator(".card--pending")
    pending.wait_for()
    wait_for_reply(page)
    pending.get_by_role("button", name="Cancel").click()
    page.locator(".card--cancelled").wait_for()
    assert "nothing was done" in page.locator(".card--cancelled").inner_text()

    send(page, "email See you soon to marie.keller@example.com")
    pending.wait_for()
    wait_for_reply(page)
    ActionCard.objects.filter(status="pending").update(expires_at=timezone.now() - timedelta(minutes=1))
    pending.get_by_role("button", name="Confirm").click()
    expired = page.locator(".card--expired")
    expired.wait_for()
    assert "expired" in expired.get_by_role("alert").inner_text()
    assert mail.outbox == [] and not SentEmail.objects.exists()


def test_delete_asks_first_and_is_refused_while_a_reply_is_written(browser, owner):
    keep = make_conversation(owner, title="Keep me")
    busy = make_conversation(owner, title="Being answered", status=Thread.Status.RESPONDING)
    doomed = make_conversation(owner, title="Delete me")
    page = browser.page(owner)
    page.goto(f"/c/{keep.id}/")
    dialog = page.locator("[data-delete-dialog]")

    page.get_by_role("button", name="Delete “Delete me”").click()
    assert dialog.is_visible() and "Delete me" in dialog.inner_text()
    dialog.get_by_role("button", name="Cancel").click()
    assert not dialog.is_visible() and Thread.objects.filter(id=doomed.id).exists()

    page.get_by_role("button", name="Delete “Delete me”").click()
    dialog.get_by_role("button", name="Delete").click()
    page.locator(f'[data-conversation-item="{doomed.id}"]').wait_for(state="detached")
    assert not Thread.objects.filter(id=doomed.id).exists()
    assert page.locator(".msg--assistant [data-text]").inner_text() == "Here is the plan."  # the open one untouched

    page.get_by_role("button", name="Delete “Being answered”").click()
    dialog.get_by_role("button", name="Delete").click()
    refusal = dialog.get_by_role("alert")
    refusal.wait_for()
    assert "A reply is being written" in refusal.inner_text()
    assert Thread.objects.filter(id=busy.id).exists()
    browser.shot(page, "delete-refused")
    dialog.get_by_role("button", name="Cancel").click()

    page.get_by_role("button", name="Delete “Keep me”").click()
    dialog.get_by_role("button", name="Delete").click()
    page.wait_for_url(f"{browser.url}/")
    assert not Thread.objects.filter(id=keep.id).exists()


def test_markup_in_a_message_and_in_a_tool_result_is_shown_as_text(browser, workspace):
    payload = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
    page = browser.page(workspace)
    page.goto("/")
    send(page, f"create a note titled {payload}: [click](javascript:window.__xss=3) ![t](https://evil.example/t.png)")
    wait_for_reply(page)
    send(page, "search my notes for onerror")
    wait_for_reply(page)
    page.locator("details.tool").last.locator("summary").click()

    messages = page.locator("[data-messages]")
    assert messages.locator("img, script, iframe, [onerror]").count() == 0
    assert messages.locator('a[href^="javascript"], [src]').count() == 0
    assert '<img src=x onerror="window.__xss=1">' in page.locator(".msg--user").first.inner_text()
    assert "<script>window.__xss=2</script>" in page.locator("[data-tool-result]").last.inner_text()
    assert '<img src=x onerror="window.__xss=1">' in page.locator(".msg--assistant").first.inner_text()
    page.reload()
    assert page.locator("[data-messages] img, [data-messages] script").count() == 0
    assert page.evaluate("window.__xss") is None
    assert browser.dialogs == []
    assert Note.objects.filter(title__startswith="<img src=x").exists()


def test_a_narrow_screen_has_a_drawer_and_no_sideways_scrolling(browser, owner):
    thread = make_conversation(owner, title="Plans for the offsite", content="Where should we go for the offsite?",
                               reply="Three ideas:\n\n1. **Hiking** near Lake Geneva\n2. A cooking class\n"
                                     "3. A boat trip on the lake")
    make_card(owner, thread, description="Send an email to marie.keller@example.com: “Offsite ideas”", warning=True,
              tool_name="send_email",
              tool_input={"to": "marie.keller@example.com", "subject": "Offsite ideas", "body": "Three ideas…"})
    page = browser.page(owner, width=375, height=812)
    page.goto(f"/c/{thread.id}/")
    sidebar = page.locator("[data-sidebar]")
    toggle = page.get_by_role("button", name="Conversations", exact=True)
    assert not sidebar.is_visible() and toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    browser.shot(page, "mobile-chat")

    toggle.click()
    page.wait_for_function("() => document.querySelector('[data-sidebar]').getBoundingClientRect().left >= 0")
    assert toggle.get_attribute("aria-expanded") == "true"
    assert page.evaluate("document.activeElement.closest('[data-sidebar]') !== null")
    assert page.evaluate("document.querySelector('[data-chat]').inert")  # the page behind is out of reach
    browser.shot(page, "mobile-drawer")
    page.keyboard.press("Escape")
    sidebar.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.matches('[data-drawer-open]')")

    long_title = make_conversation(owner, title="Itinerary" + "ZurichGenevaLausanne" * 4)
    for opened in (thread, long_title):
        staff_access_record(staff=owner.user, kind="conversation", person_id=owner.user.pk,
                            organization_id=owner.organization.pk, object_id=opened.pk, path="/admin/")
    page.goto("/data/")
    assert page.locator("[data-staff-access]").count() == 2
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    browser.shot(page, "mobile-data", full_page=True)
    wide = browser.page(owner)
    wide.goto("/data/")
    assert wide.get_by_role("link", name="Export my data").get_attribute("href") == "/api/me/export"
    browser.shot(wide, "data", full_page=True)


def test_exhausted_credits_and_a_full_conversation_are_explained(browser, owner, settings):
    Organization.objects.filter(id=owner.organization.id).update(monthly_credits=0)
    page = browser.page(owner)
    page.goto("/")
    send(page, "Plan my week")
    banner = page.locator("[data-banner]")
    banner.wait_for()
    assert "used all its credits for this month" in banner.inner_text()
    assert page.get_by_label("Message to the assistant").input_value() == "Plan my week"  # kept, not lost
    assert page.get_by_role("button", name="Send").is_enabled()
    browser.shot(page, "credits-exhausted")

    # Under the hgdc seed's choice, a conversation is full at the bound.
    Organization.objects.filter(id=owner.organization.id).update(monthly_credits=1000, history_mode="full")
    settings.ASSISTANT_HISTORY_BYTES = 1000
    send(page, "A long message. " * 80)
    page.wait_for_function("() => document.querySelector('[data-banner-text]').textContent.includes('full')")
    assert banner.get_by_role("link", name="Start a new conversation").is_visible()
    assert not Message.objects.exists()


def test_a_reload_while_the_reply_streams_picks_the_stream_up_again(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    send(page, "hi")
    page.wait_for_function("() => (document.querySelector('.prose.is-streaming')?.textContent.length ?? 0) > 20")
    page.reload()
    assert page.locator("[data-messages]").get_attribute("data-running-turn")  # still running after the reload
    assert page.get_by_role("button", name="Stop").is_enabled()  # the running turn can be stopped
    wait_for_reply(page)
    text = page.locator(".msg--assistant [data-text]").inner_text()
    assert text.count("Hello! I am the offline demo model") == 1 and text.rstrip().endswith('alice@example.com".')
    assert page.get_by_role("button", name="Send").is_enabled()


def test_a_failed_reply_is_shown_clearly(browser, owner):
    thread = make_conversation(owner, title="Weekly report", content="Summarise my week",
                               reply="Here is what I found so far:")
    Message.objects.filter(thread=thread, role="assistant").update(
        status=Message.Status.FAILED,
        notice="The model provider did not answer, so the reply was stopped. Please try again.")
    page = browser.page(owner)
    page.goto(f"/c/{thread.id}/")
    notice = page.locator(".notice--failed")
    assert notice.is_visible()
    assert "This reply failed." in notice.inner_text() and "Please try again." in notice.inner_text()
    browser.shot(page, "reply-failed")
