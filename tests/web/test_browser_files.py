"""Files in real Chromium: a text file attached with the paperclip and an image
dropped on the chat, shown as chips, sent with the message; their content
reaches a scripted model (the turn is run here, in the test process, instead
of by a worker); the message shows them (name, type, size; the image as a
thumbnail served inert); an edit keeps the message's files, or those of them
left after removing some; axe-core on each state."""

import base64
import time

import pytest

from assistant.loop import run_turn
from assistant.models import Turn
from conversations.models import Attachment
from conversations.tasks import read_file_task
from tests.fakes.files import pdf, png
from tests.fakes.scripted import ScriptedClient, say
from tests.web.accessibility import assert_accessible
from tests.web.conftest import Browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NOTES = "Budget 2027: keep it under 10k.\nRent: 1200 a month.\n"
DROP_IMAGE = """([name, data]) => {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type: 'image/png' }));
  const chat = document.querySelector('assistant-chat');
  chat.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  chat.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
}"""


@pytest.fixture
def quiet_browser(chromium, live_server, tmp_path):
    """The browser with a broker no worker reads: the test runs each turn itself, with a scripted model."""
    from tests.web.browser import broker_folder

    session = Browser(chromium, live_server, tmp_path)
    with broker_folder(tmp_path / "broker"):
        yield session
        session.close()
    assert session.errors == [], f"JavaScript errors in the page: {session.errors}"


def queued_turn(deadline: float = 15.0) -> Turn:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        turn = Turn.objects.filter(status=Turn.Status.QUEUED).first()
        if turn is not None:
            return turn
        time.sleep(0.1)
    raise AssertionError("no turn was queued")


def with_notes_attached(browser, person, folder):
    """The chat page with budget-notes.md attached with the paperclip."""
    page = browser.page(person)
    page.goto("/")
    notes = folder / "budget-notes.md"
    notes.write_text(NOTES)
    page.locator("[data-file-input]").set_input_files(str(notes))
    page.get_by_role("list", name="Files to send").get_by_text("budget-notes.md").wait_for()
    files_ready(page)
    return page


def files_ready(page) -> None:
    """Every chip uploaded (and a PDF read): none is busy any more."""
    page.wait_for_function("() => !document.querySelector('[data-attachments] [aria-busy=true]')")


def test_a_file_attached_and_dropped_is_shown_and_reaches_the_model(quiet_browser, owner, tmp_path):
    page = with_notes_attached(quiet_browser, owner, tmp_path)
    page.evaluate(DROP_IMAGE, ["whiteboard.png", base64.b64encode(png(40, 30)).decode()])
    chips = page.get_by_role("list", name="Files to send")
    chips.get_by_text("whiteboard.png").wait_for()
    files_ready(page)
    assert "budget-notes.md" in chips.inner_text() and "text/plain" in chips.inner_text()
    assert_accessible(page, "two files waiting in the composer")

    composer = page.get_by_label("Message to the assistant")
    composer.fill("What do these say?")
    composer.press("Enter")
    client = ScriptedClient(say("Your notes keep the budget under 10k."))
    run_turn(queued_turn().id, client=client)

    [message] = client.requests[0].history
    assert [(f.name, f.media_type) for f in message.files] == [
        ("budget-notes.md", "text/plain"), ("whiteboard.png", "image/png")]
    assert message.files[0].text == NOTES and message.files[1].data == png(40, 30)
    page.get_by_text("Your notes keep the budget under 10k.").wait_for()
    page.wait_for_function("() => !document.querySelector('.msg--assistant.is-live')")

    shown = page.locator(".msg--user").get_by_role("list", name="Attached files")
    shown.locator(".file__thumb").wait_for()
    assert "budget-notes.md" in shown.inner_text() and "text/plain" in shown.inner_text()
    # The thumbnail is in the page before its bytes have arrived: wait for the image to load.
    page.wait_for_function(
        "() => [...document.querySelectorAll('.msg--user img')].some(img => img.complete && img.naturalWidth)")
    assert page.get_by_role("img", name="whiteboard.png").evaluate("img => img.naturalWidth") == 40
    assert page.get_by_role("list", name="Files to send").is_hidden()
    assert_accessible(page, "a message with a text file and an image")
    quiet_browser.shot(page, "files-attached")


def test_files_keep_the_order_they_were_added_whatever_order_their_uploads_finish(quiet_browser, owner, tmp_path):
    """The first upload is held until the second has finished: the chips, and the files the model gets,
    stay in the order the person chose them (before, the last to finish went last)."""
    page = quiet_browser.page(owner)
    page.goto("/")
    first, second = tmp_path / "first.md", tmp_path / "second.md"
    first.write_text("one")
    second.write_text("two")
    held = []

    def hold_the_first(route):
        if b"first.md" in (route.request.post_data_buffer or b"") and not held:
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/files", hold_the_first)
    page.locator("[data-file-input]").set_input_files([str(first), str(second)])
    page.wait_for_function("() => document.querySelectorAll('[data-attachments] [aria-busy=true]').length === 1")
    assert held and Attachment.objects.filter(name="second.md").exists()
    held[0].continue_()
    files_ready(page)
    chips = page.get_by_role("list", name="Files to send").get_by_role("listitem").all_inner_texts()
    assert [chip.split("\n")[0] for chip in chips] == ["first.md", "second.md"]
    client = sent_and_answered(page, "Both, please", "One and two.")
    assert [f.name for f in client.requests[0].history[0].files] == ["first.md", "second.md"]


def test_a_pdf_is_read_by_the_worker_before_its_message_goes(quiet_browser, owner, tmp_path):
    """The upload answers at once (`reading`); the chip says so, and Enter sends the message once it is read."""
    page = quiet_browser.page(owner)
    page.goto("/")
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf("Rent 1200"))
    page.locator("[data-file-input]").set_input_files(str(report))
    chips = page.get_by_role("list", name="Files to send")
    chips.get_by_text("Reading…").wait_for()
    assert_accessible(page, "a PDF being read")
    composer = page.get_by_label("Message to the assistant")
    composer.fill("What is the rent?")
    composer.press("Enter")
    page.locator("[data-announcer]").get_by_text("sent once its files are ready").wait_for(state="attached")
    assert not Turn.objects.exists()  # held while the PDF is read
    read_file_task(str(Attachment.objects.get(name="report.pdf").id))  # what the worker does
    client = ScriptedClient(say("1200 a month."))
    run_turn(queued_turn().id, client=client)
    [message] = client.requests[0].history
    assert message.text == "What is the rent?" and "Rent 1200" in message.files[0].text
    page.get_by_text("1200 a month.").wait_for()


def test_an_html_file_named_png_is_refused_with_the_reason(quiet_browser, owner, tmp_path):
    page = quiet_browser.page(owner)
    page.goto("/")
    fake = tmp_path / "cat.png"
    fake.write_text("<html><script>alert(1)</script></html>")
    page.locator("[data-file-input]").set_input_files(str(fake))
    alert = page.get_by_role("alert")
    alert.get_by_text("cat.png:").wait_for()
    assert "Only text" in alert.inner_text()
    assert page.get_by_role("list", name="Files to send").is_hidden()
    assert_accessible(page, "a refused file")


def sent_and_answered(page, text: str, reply: str) -> ScriptedClient:
    """`text` sent from the composer, its turn run with a model that says `reply`, shown when it ends."""
    composer = page.get_by_label("Message to the assistant")
    composer.fill(text)
    composer.press("Enter")
    client = ScriptedClient(say(reply))
    run_turn(queued_turn().id, client=client)
    page.locator(".msg--assistant").get_by_text(reply, exact=True).wait_for()
    page.wait_for_function("() => !document.querySelector('.msg--assistant.is-live')")
    return client


def test_an_edited_message_keeps_its_files(quiet_browser, owner, tmp_path):
    page = with_notes_attached(quiet_browser, owner, tmp_path)
    sent_and_answered(page, "What does this say?", "It keeps the budget under 10k.")

    page.get_by_role("button", name="Edit your message", exact=True).click()
    assert "Its attached files go with it again" in page.locator("[data-composer-hint]").inner_text()
    # The message's own files, shown to keep or remove (the server copies them: nothing is uploaded again).
    assert page.get_by_role("list", name="Files to send").get_by_role("listitem").all_inner_texts() == [
        f"budget-notes.md\ntext/plain · {len(NOTES.encode())}\xa0bytes\n×"]
    client = sent_and_answered(page, "And the rent?", "The rent is 1200 a month.")

    [message] = client.requests[0].history
    assert message.text == "And the rent?" and [f.text for f in message.files] == [NOTES]
    current = page.locator(".msg--user:not(.msg--previous)")
    assert "And the rent?" in current.inner_text()
    assert "budget-notes.md" in current.get_by_role("list", name="Attached files").inner_text()
    assert_accessible(page, "an edited message with its files")


def test_an_edit_can_drop_one_of_the_messages_files(quiet_browser, owner, tmp_path):
    page = with_notes_attached(quiet_browser, owner, tmp_path)
    page.evaluate(DROP_IMAGE, ["whiteboard.png", base64.b64encode(png(40, 30)).decode()])
    page.get_by_role("list", name="Files to send").get_by_text("whiteboard.png").wait_for()
    sent_and_answered(page, "What do these say?", "A budget and a drawing.")

    page.get_by_role("button", name="Edit your message", exact=True).click()
    chips = page.get_by_role("list", name="Files to send")
    assert "budget-notes.md" in chips.inner_text() and "whiteboard.png" in chips.inner_text()
    assert page.get_by_role("button", name="Attach files").is_disabled()  # an edit takes no new file
    page.evaluate(DROP_IMAGE, ["late.png", base64.b64encode(png(10, 10)).decode()])
    page.get_by_role("alert").get_by_text("send new files with a new message").wait_for()
    assert "late.png" not in chips.inner_text()
    assert not Attachment.objects.filter(name="late.png").exists()  # not even uploaded
    assert_accessible(page, "editing a message with its files")
    remove = chips.get_by_role("button", name="Remove whiteboard.png")
    remove.focus()
    page.keyboard.press("Enter")
    assert chips.get_by_role("listitem").count() == 1 and "budget-notes.md" in chips.inner_text()
    assert page.evaluate("document.activeElement.id") == "composer-input"
    client = sent_and_answered(page, "Only the budget, please", "Under 10k.")

    [message] = client.requests[0].history
    assert message.text == "Only the budget, please"
    assert [(f.name, f.text) for f in message.files] == [("budget-notes.md", NOTES)]
    current = page.locator(".msg--user:not(.msg--previous)")
    shown = current.get_by_role("list", name="Attached files")
    assert "budget-notes.md" in shown.inner_text() and "whiteboard.png" not in shown.inner_text()
    assert page.get_by_role("button", name="Attach files").is_enabled()
    assert page.get_by_role("list", name="Files to send").is_hidden()
    assert_accessible(page, "an edited message that dropped a file")
