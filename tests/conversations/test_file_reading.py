"""A PDF's text is read by a worker, in a bounded child process, never in the
web request; the storage bounds of files; files keep the person's order.

The attacker's PDF (tests.fakes.files.pdf_bomb): 7 KB whose 10 pages share
one content stream inflating to 2 MB took 57.6 s of a web process's CPU when
it was read inside POST /api/files."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from assistant import chat as chat_service
from assistant.models import Turn
from conversations import pdf_reading
from conversations.models import Attachment, Message
from conversations.tasks import read_file_task
from tests.fakes.files import pdf, pdf_bomb

UPLOAD = "/api/files"


def upload(person, data: bytes, name: str = "report.pdf"):
    return person.client.post(UPLOAD, {"file": SimpleUploadedFile(name, data)}, format="multipart")


def uploaded(person, data: bytes, name: str = "report.pdf") -> dict:
    response = upload(person, data, name)
    assert response.status_code == 201, response.content
    return response.json()


def shown(person, file_id: str) -> dict:
    return person.client.get(f"{UPLOAD}/{file_id}").json()


def chat(person, attachments):
    return person.client.post("/api/chat", {"message": "Read these", "attachments": attachments}, format="json")


@pytest.fixture(autouse=True)
def no_turn_broker(monkeypatch):
    monkeypatch.setattr(chat_service, "enqueue_turn", lambda turn_id: None)


# --- Never in the web request -------------------------------------------------------------


def test_the_attackers_pdf_is_answered_at_once_and_read_by_the_worker_within_its_bounds(owner, monkeypatch):
    def read_in_the_request(data):
        raise AssertionError("a web request read a PDF")

    monkeypatch.setattr(pdf_reading, "read_pdf", read_in_the_request)
    body = uploaded(owner, pdf_bomb())
    assert body["state"] == "reading" and len(pdf_bomb()) < 8_000
    monkeypatch.undo()
    read_file_task(body["id"])  # what the worker runs
    refused = shown(owner, body["id"])
    assert (refused["state"], refused["code"]) == ("refused", "unreadable_pdf")


def test_past_its_cpu_bound_the_reading_child_is_ended_by_the_kernel(owner, settings, caplog):
    """The decompressed-bytes bound lifted: the CPU bound alone stops the same PDF."""
    settings.FILE_PDF_MAX_CONTENT_BYTES = 1024 * 1024 * 1024
    settings.FILE_PDF_CPU_SECONDS = 1
    body = uploaded(owner, pdf_bomb())
    with caplog.at_level("INFO", logger="conversations.files"):
        read_file_task(body["id"])
    assert shown(owner, body["id"])["code"] == "unreadable_pdf"
    [record] = [r for r in caplog.records if r.getMessage() == "pdf_read"]
    assert record.error_type == "exit_-24"  # SIGXCPU


def test_past_the_characters_bound_a_pdf_is_refused(owner, settings):
    settings.FILE_PDF_MAX_CHARS = 1000
    body = uploaded(owner, pdf_bomb(pages=1, inflated_bytes=60_000))  # 1,600 × "budget"
    read_file_task(body["id"])
    assert shown(owner, body["id"])["code"] == "unreadable_pdf"


def test_past_the_pages_bound_a_pdf_is_refused_as_too_many_pages(owner, settings):
    settings.FILE_PDF_MAX_PAGES = 3
    body = uploaded(owner, pdf_bomb(pages=4, inflated_bytes=100))
    read_file_task(body["id"])
    assert shown(owner, body["id"])["code"] == "too_many_pages"


def test_a_message_takes_a_pdf_only_once_it_is_read(owner):
    body = uploaded(owner, pdf("Rent 1200"))
    response = chat(owner, [body["id"]])
    assert response.status_code == 409 and response.json()["code"] == "file_not_ready"
    assert not Message.objects.exists() and not Turn.objects.exists()
    read_file_task(body["id"])
    assert chat(owner, [body["id"]]).status_code == 202
    assert Attachment.objects.get(id=body["id"]).message is not None


def test_a_refused_pdf_is_never_taken_by_a_message(owner):
    body = uploaded(owner, b"%PDF-1.4\nnot a pdf")
    read_file_task(body["id"])
    response = chat(owner, [body["id"]])
    assert response.status_code == 422 and response.json()["code"] == "unreadable_pdf"
    assert not Message.objects.exists()


def test_a_person_reads_two_pdfs_at_once_and_an_organization_four(owner, colleague, settings):
    uploaded(owner, pdf()), uploaded(owner, pdf())
    response = upload(owner, pdf())
    assert response.status_code == 429 and response.json()["code"] == "files_still_reading"
    assert upload(owner, b"text is not read by a worker", "a.txt").status_code == 201
    uploaded(colleague, pdf()), uploaded(colleague, pdf())
    settings.FILE_PDF_READING_PER_PERSON = 5
    assert upload(colleague, pdf()).json()["code"] == "files_still_reading"  # the organization's four
    assert Attachment.objects.filter(state="reading").count() == 4


def test_when_no_broker_takes_the_pdf_the_upload_is_undone(owner, monkeypatch):
    def down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(read_file_task, "apply_async", down)
    response = upload(owner, pdf())
    assert response.status_code == 503 and response.json()["code"] == "queue_unavailable"
    assert not Attachment.objects.exists()


# --- Storage bounds ---------------------------------------------------------------------


def test_a_persons_unattached_files_are_bounded(owner, colleague, settings):
    settings.FILE_UNATTACHED_MAX_BYTES = 3000
    uploaded(owner, b"a" * 2000, "a.txt")
    response = upload(owner, b"b" * 1001, "b.txt")
    assert response.status_code == 429 and response.json()["code"] == "unattached_files_limit"
    assert upload(owner, b"b" * 1000, "b.txt").status_code == 201  # exactly at the bound
    assert upload(colleague, b"c" * 2000, "c.txt").status_code == 201  # theirs is their own


def test_a_sent_file_no_longer_counts_as_unattached(owner, settings):
    settings.FILE_UNATTACHED_MAX_BYTES = 3000
    first = uploaded(owner, b"a" * 2000, "a.txt")
    assert chat(owner, [first["id"]]).status_code == 202
    assert upload(owner, b"b" * 2000, "b.txt").status_code == 201


def test_an_organizations_unattached_and_stored_files_are_bounded(owner, colleague, outsider, settings):
    settings.FILE_ORGANIZATION_UNATTACHED_MAX_BYTES = 3000
    uploaded(owner, b"a" * 2000, "a.txt")
    response = upload(colleague, b"b" * 1001, "b.txt")
    assert response.status_code == 429 and response.json()["code"] == "unattached_files_limit"
    assert upload(outsider, b"c" * 2000, "c.txt").status_code == 201  # another organization
    settings.FILE_ORGANIZATION_UNATTACHED_MAX_BYTES = 10**9
    settings.FILE_ORGANIZATION_MAX_BYTES = 4000
    sent = uploaded(colleague, b"d" * 1000, "d.txt")
    assert chat(colleague, [sent["id"]]).status_code == 202  # attached files count too
    response = upload(owner, b"e" * 1001, "e.txt")
    assert response.status_code == 413 and response.json()["code"] == "organization_files_full"


# --- The person's order -----------------------------------------------------------------


def test_a_messages_files_keep_the_order_the_person_gave_whatever_order_they_were_uploaded_in(owner):
    from assistant.history import load_context

    first, second, third = (uploaded(owner, f"file {n}".encode(), f"{n}.txt")["id"] for n in (1, 2, 3))
    turn_id = chat(owner, [third, first, second]).json()["turnId"]
    [item] = load_context(Turn.objects.get(id=turn_id).thread_id).items
    assert [part.name for part in item.files] == ["3.txt", "1.txt", "2.txt"]
    listed = owner.client.get(f"/api/conversations/{item_thread(turn_id)}").json()
    [message] = [m for m in listed["messages"] if m["role"] == "user"]
    assert [f["name"] for f in message["attachments"]] == ["3.txt", "1.txt", "2.txt"]


def item_thread(turn_id: str) -> str:
    return str(Turn.objects.get(id=turn_id).thread_id)


# --- Under concurrency ------------------------------------------------------------------

RACERS, FITTING = 16, 5


@pytest.mark.django_db(transaction=True)
def test_uploads_at_once_never_pass_the_organizations_bound(acme, settings):
    """The organization's row lock: of 16 people uploading 1,000 bytes at once
    into room for 5,000, exactly 5 are stored, whatever their order."""
    from rest_framework.test import APIClient

    from tests.conftest import make_person
    from tests.races import race

    settings.FILE_ORGANIZATION_UNATTACHED_MAX_BYTES = FITTING * 1000
    tokens = [make_person(f"racer{index}", acme).token for index in range(RACERS)]

    def upload_at_once(index: int) -> int:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens[index]}")
        data = SimpleUploadedFile(f"{index}.txt", b"x" * 1000)
        return client.post(UPLOAD, {"file": data}, format="multipart").status_code

    statuses = race(RACERS, upload_at_once)
    assert sorted(statuses) == [201] * FITTING + [429] * (RACERS - FITTING), statuses
    assert Attachment.objects.count() == FITTING
