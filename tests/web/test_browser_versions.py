"""Regenerate and edit in real Chromium: new turns, the old versions kept and
paged one at a time ("‹ 2 / 3 ›"), by mouse and keyboard, across a reload;
axe-core on each state, light and dark."""

import pytest

from assistant.models import ActionCard, Turn
from conversations.models import Message, Thread
from tests.web.accessibility import assert_accessible
from tests.web.conftest import make_conversation
from tests.web.test_browser import send, wait_for_reply
from workspace.management.commands.seed_demo_workspace import seed
from workspace.models import Note

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ANNOUNCER = "document.querySelector('[data-announcer]').textContent"
REPLY_SET = '.versions[data-versions="reply"]'
MESSAGE_SET = '.versions[data-versions="message"]'


# The cards each turn's event stream proposed (card_proposed), recorded as the page receives them: the stream,
# not the re-read of the conversation at the end, delivers them. (Whether the page shows the card before or after
# the turn ends is a race the test can't pin: the whole turn may be over before the stream is opened.)
RECORD_PROPOSED_CARDS = """(() => {
  window.__proposed = [];
  const Original = window.EventSource;
  window.EventSource = class extends Original {
    constructor(...args) {
      super(...args);
      this.addEventListener('card_proposed', (event) => window.__proposed.push(JSON.parse(event.data).id));
    }
  };
})();"""
DELETE_REQUEST = "delete the note Ideas for the team offsite"


@pytest.fixture
def seeded(owner):
    """The owner with the demo notes (one of them to delete)."""
    seed(owner.member)
    return owner


def shown(page, selector):
    """The versions of the set `selector` that are visible, by their number."""
    return [node.get_attribute("data-version") for node in page.locator(f"{selector} > .version").all()
            if node.is_visible()]


def pager(page, selector):
    return page.locator(f"{selector} > .version:not([hidden]) > [data-pager]")


def test_regenerate_then_edit_keep_previous_versions(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    send(page, "**hello** `there`")
    assert page.locator(".chat__title").inner_text() == "hello there"  # its words, not its Markdown (34.5)
    assert page.title().endswith("hello there · Assistant")  # "Replying… — " first, while it replies
    wait_for_reply(page)

    page.get_by_role("button", name="Regenerate").click()
    wait_for_reply(page)
    assert Turn.objects.count() == 2
    assert page.locator(".msg--assistant").count() == 2 and page.locator(".msg--assistant:visible").count() == 1
    assert pager(page, REPLY_SET).locator("[aria-hidden=true]").all_inner_texts() == ["‹", "2 / 2", "›"]
    assert "Version 2 of 2" in pager(page, REPLY_SET).inner_text()
    assert page.get_by_role("button", name="Regenerate").count() == 1  # on the current reply only

    page.get_by_role("button", name="Edit your message", exact=True).click()
    composer = page.get_by_label("Message to the assistant")
    assert composer.input_value() == "**hello** `there`"
    assert page.evaluate("document.activeElement.id") == "composer-input"
    composer.fill("search my notes for budget")
    composer.press("Enter")
    wait_for_reply(page)
    # The title derived from the first message follows its edit, on the page and in the tab (34.5).
    page.wait_for_function("() => document.querySelector('.chat__title').textContent === "
                           "'search my notes for budget'")
    page.wait_for_function("() => document.title === 'search my notes for budget · Assistant'")
    assert page.locator(".msg--user").count() == 2 and page.locator(".msg--user:visible").count() == 1
    assert page.locator(".msg--user.msg--previous").count() == 1
    assert "search my notes for budget" in page.locator(".msg--user:not(.msg--previous)").inner_text()
    # The message's pager brings back the old message with its replies (their own set).
    page.get_by_role("group", name="Versions of your message").get_by_role("button", name="Previous version").click()
    assert shown(page, MESSAGE_SET) == ["1"]
    assert page.locator(".msg--user:visible .msg__bubble").inner_text().strip() == "hello there"
    assert shown(page, f"{MESSAGE_SET} {REPLY_SET}") == ["2"]
    assert page.evaluate("document.activeElement.getAttribute('data-version-step')") == "1"  # Previous is disabled
    assert_accessible(page, "the first version of an edited message")
    page.keyboard.press("Enter")
    assert shown(page, MESSAGE_SET) == ["2"]
    old, new = Message.objects.filter(role="user").order_by("seq")
    assert old.superseded_at and new.replaces == old.client_id and new.superseded_at is None
    current_replies = Message.objects.filter(role="assistant", superseded_at__isnull=True)
    assert current_replies.count() == 2  # the tool step and its summary
    assert_accessible(page, "a conversation with previous versions")
    browser.shot(page, "versions")


def test_versions_page_by_keyboard_arrive_live_and_survive_a_reload(browser, owner):
    page = browser.page(owner)
    page.goto("/")
    send(page, "hello")
    wait_for_reply(page)
    page.get_by_role("button", name="Regenerate").click()
    # The reply being written is the newest version of its set at once, without a reload.
    page.locator(f"{REPLY_SET} > .version:not([hidden]) .msg--assistant.is-live").wait_for()
    assert shown(page, REPLY_SET) == ["2"] and "2 / 2" in pager(page, REPLY_SET).inner_text()
    wait_for_reply(page)
    page.get_by_role("button", name="Regenerate").click()
    wait_for_reply(page)
    assert shown(page, REPLY_SET) == ["3"]
    assert page.locator(".msg--assistant:visible").count() == 1
    previous = page.get_by_role("button", name="Previous version")
    assert page.get_by_role("button", name="Next version").is_disabled()
    assert_accessible(page, "three versions of a reply, the newest shown")

    previous.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => {ANNOUNCER} === 'Version 2 of 3'")
    assert shown(page, REPLY_SET) == ["2"]
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(f"() => {ANNOUNCER} === 'Version 1 of 3'")
    assert shown(page, REPLY_SET) == ["1"]
    # At the first version Previous is disabled: focus is on Next, never lost.
    assert page.evaluate("document.activeElement.textContent") == "›Next version"
    assert page.get_by_role("group", name="Versions of this reply").get_by_text("Version 1 of 3").count() == 1
    assert_accessible(page, "the first of three versions")
    browser.shot(page, "versions-pager")
    page.emulate_media(color_scheme="dark", reduced_motion="reduce")  # no colour transition under axe
    assert_accessible(page, "the first of three versions in dark")
    page.emulate_media(color_scheme="light")

    page.keyboard.press("ArrowRight")
    assert shown(page, REPLY_SET) == ["2"]
    page.reload()
    assert shown(page, REPLY_SET) == ["3"]  # the newest, rendered by the server
    assert page.locator(f"{REPLY_SET} > .version").count() == 3
    pager(page, REPLY_SET).get_by_role("button", name="Previous version").click()
    assert shown(page, REPLY_SET) == ["2"]


def test_after_confirm_nothing_on_the_page_still_says_it_awaits(browser, seeded):
    page = browser.page(seeded)
    page.goto("/")
    send(page, DELETE_REQUEST)
    wait_for_reply(page)
    reply = page.locator(".msg--assistant [data-text]").last
    assert "It is yours to decide there." in reply.inner_text()
    page.get_by_role("button", name="Confirm").click()
    page.locator(".card--confirmed").wait_for()
    outcome = "Card confirmed. Done: you confirmed it and it was carried out."
    page.wait_for_function(f"() => {ANNOUNCER} === {outcome!r}")  # the polite live region
    messages = page.locator("[data-messages]")
    assert "await" not in messages.inner_text().lower()
    assert "Confirmed" in page.locator("details.tool").last.locator("summary").inner_text()
    assert_accessible(page, "a confirmed card under the reply that proposed it")
    page.reload()
    assert "await" not in messages.inner_text().lower()
    assert "you confirmed it and it was carried out" in page.locator(".card--confirmed").inner_text()
    page.emulate_media(color_scheme="dark", reduced_motion="reduce")  # no colour transition under axe
    assert_accessible(page, "a confirmed card in dark")


def test_a_regenerated_reply_delivers_its_card_live_and_the_old_one_is_withdrawn(browser, seeded):
    page = browser.page(seeded)
    page.add_init_script(RECORD_PROPOSED_CARDS)
    page.goto("/")
    send(page, DELETE_REQUEST)
    page.locator("[data-card-id]").wait_for()
    wait_for_reply(page)
    [first] = ActionCard.objects.all()
    assert page.evaluate("window.__proposed") == [str(first.id)]

    page.get_by_role("button", name="Regenerate").click()
    wait_for_reply(page)
    second = ActionCard.objects.exclude(id=first.id).get()
    # The regenerated turn's stream proposes its card, exactly as the first turn's did.
    assert page.evaluate("window.__proposed") == [str(first.id), str(second.id)]
    assert shown(page, REPLY_SET) == ["2"]
    current = page.locator(f"{REPLY_SET} > .version:not([hidden]) [data-card-id]")
    assert current.get_attribute("data-card-id") == str(second.id)
    assert current.get_by_role("button", name="Confirm").is_visible()
    assert_accessible(page, "a regenerated reply with its card")
    narrow = browser.page(seeded, width=375, height=740)
    narrow.goto(page.url)
    assert narrow.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scroll
    assert_accessible(narrow, "a reply's versions at 375 px")
    narrow.locator(f"{REPLY_SET} [data-pager]").last.scroll_into_view_if_needed()
    browser.shot(narrow, "mobile-versions")

    # The previous version's card was withdrawn by the regenerate: it can't do
    # a second time what the new version proposes again.
    assert ActionCard.objects.get(id=first.id).status == ActionCard.Status.CANCELLED
    page.get_by_role("button", name="Previous version").click()
    old = page.locator(f"{REPLY_SET} > .version:not([hidden]) [data-card-id]")
    assert old.get_attribute("data-card-id") == str(first.id)
    assert old.get_by_role("button", name="Confirm").count() == 0
    assert "Withdrawn when you asked for another version" in old.inner_text()
    assert_accessible(page, "the previous version with its withdrawn card")
    browser.shot(page, "versions-card")
    page.get_by_role("button", name="Next version").click()
    page.locator(f"#card-{second.id}").get_by_role("button", name="Confirm").click()
    page.locator(f"#card-{second.id}.card--confirmed").wait_for()
    assert not Note.objects.filter(title="Ideas for the team offsite").exists()


def test_a_long_previous_version_is_collapsed_when_paged_to(browser, owner):
    long_reply = "\n\n".join(f"Paragraph {number} of a long first answer." for number in range(60))
    thread = make_conversation(owner, reply=long_reply)
    old = Message.objects.get(thread=thread, role="assistant")
    Message.objects.filter(id=old.id).update(superseded_at=old.created_at)
    regenerated = Turn.objects.create(thread=thread, organization=owner.organization, user=owner.user,
                                      model_option="offline", status=Turn.Status.DONE)
    Message.objects.create(thread=thread, seq=2, role="assistant", content="A short second answer.",
                           created_at=old.created_at, turn_id=regenerated.id)
    Thread.objects.filter(id=thread.id).update(next_seq=3)
    page = browser.page(owner)
    page.goto(f"/c/{thread.id}/")
    assert page.get_by_role("button", name="Show more").count() == 0  # the shown version is short
    page.get_by_role("button", name="Previous version").click()
    more = page.get_by_role("button", name="Show more")
    assert more.is_visible() and more.get_attribute("aria-expanded") == "false"
    page.get_by_role("button", name="Next version").click()
    page.get_by_role("button", name="Previous version").click()
    assert page.get_by_role("button", name="Show more").count() == 1  # collapsed once, not twice
