"""Files attached to messages: upload (POST /api/files), metadata and content,
the type judged from the bytes, the bounds, tenancy with the fixed cast."""

import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from conversations.models import Attachment
from conversations.sniff import GIF, JPEG, PDF, PNG, TEXT, WEBP, sniff
from conversations.tasks import read_file_task
from tests.fakes.files import pdf, png

UPLOAD = "/api/files"


def upload(person, data: bytes, name: str = "notes.txt"):
    return person.client.post(UPLOAD, {"file": SimpleUploadedFile(name, data)}, format="multipart")


def uploaded(person, data: bytes = b"Budget: 42 francs\n", name: str = "notes.txt") -> dict:
    response = upload(person, data, name)
    assert response.status_code == 201, response.content
    return response.json()


# --- The type, from the content --------------------------------------------------


@pytest.mark.parametrize(("data", "expected"), [
    (png(), PNG),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", JPEG),
    (b"GIF89a\x01\x00\x01\x00", GIF),
    (b"RIFF\x24\x00\x00\x00WEBPVP8 ", WEBP),
    (pdf(), PDF),
    ("# Titel\n\nGrüße, *Markdown*".encode(), TEXT),
    (b"\xef\xbb\xbfname,amount\nrent,1200\n", TEXT),
    (b"<html><body>hi</body></html>", None),
    (b"\n  <!DOCTYPE HTML>\n<p>x</p>", None),
    (b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", None),
    (b"<?xml version='1.0'?><svg/>", None),
    (b"<script>alert(1)</script>", None),
    (b"text with a NUL\x00 byte", None),
    (b"\xff\xfe\x00latin-1 or binary", None),
])
def test_sniff_judges_the_bytes(data, expected):
    assert sniff(data) == expected


def test_a_png_named_txt_is_an_image(owner):
    body = uploaded(owner, png(), name="holiday.txt")
    assert body["type"] == PNG and body["name"] == "holiday.txt" and body["attached"] is False


def test_html_named_png_is_refused_and_nothing_is_stored(owner):
    response = upload(owner, b"<html><script>alert(document.cookie)</script></html>", name="cat.png")
    assert response.status_code == 422 and response.json()["code"] == "unsupported_file_type"
    assert not Attachment.objects.exists()


def test_a_text_file_keeps_its_text_once_and_a_pdf_its_extracted_text(owner):
    text = uploaded(owner, "\ufeffGrüezi\n".encode(), name="hello.md")
    document = uploaded(owner, pdf("Quarterly budget: 42 francs"), name="report.pdf")
    assert (text["state"], document["state"]) == ("ready", "reading")
    stored_text = Attachment.objects.get(id=text["id"])
    assert (stored_text.text, bytes(stored_text.data), stored_text.size) == ("Grüezi\n", b"", 11)
    assert owner.client.get(f"{UPLOAD}/{text['id']}/content").content == "Grüezi\n".encode()
    read_file_task(document["id"])
    stored = Attachment.objects.get(id=document["id"])
    assert (stored.media_type, stored.pages, stored.state) == (PDF, 1, "ready")
    assert "Quarterly budget: 42 francs" in stored.text


def test_a_broken_pdf_is_refused_as_unreadable_pdf_once_read(owner):
    body = uploaded(owner, b"%PDF-1.4\nthis is not a pdf at all", name="x.pdf")
    read_file_task(body["id"])
    shown = owner.client.get(f"{UPLOAD}/{body['id']}").json()
    assert (shown["state"], shown["code"]) == ("refused", "unreadable_pdf")


def test_the_name_is_its_last_path_part_without_control_characters(owner):
    body = uploaded(owner, b"hi", name="..\\..\\etc/pass\x07wd.txt")
    assert body["name"] == "passwd.txt"


# --- Bounds ------------------------------------------------------------------------


def test_a_file_over_file_max_bytes_is_a_413_file_too_large(owner, settings):
    settings.FILE_MAX_BYTES = 2048
    assert upload(owner, b"a" * 2048).status_code == 201
    response = upload(owner, b"a" * 2049)
    assert response.status_code == 413 and response.json()["code"] == "file_too_large"
    assert Attachment.objects.count() == 1


def test_a_body_far_over_the_bound_is_refused_before_it_is_read(owner, settings):
    settings.FILE_MAX_BYTES = 2048
    response = upload(owner, b"a" * (settings.FILE_UPLOAD_FRAMING_BYTES + 4096))
    assert response.status_code == 413 and response.json()["code"] == "file_too_large"


def test_an_empty_file_is_a_422_and_a_missing_part_a_400_each_with_a_code(owner):
    """Issue 34.15: an empty file is a well-formed request (the schema's binary may be empty), refused for
    its bytes: 422, not 400 (the contract's positive-data check expected a valid request to be accepted)."""
    empty = upload(owner, b"")
    assert (empty.status_code, empty.json()["code"]) == (422, "empty_file")
    assert not Attachment.objects.exists()
    response = owner.client.post(UPLOAD, {"other": "x"}, format="multipart")
    assert response.status_code == 400 and response.json()["code"] == "invalid"
    response = owner.client.post(UPLOAD, {"file": "x"}, format="json")
    assert response.status_code == 415


def test_two_file_parts_are_a_400_and_store_nothing(owner):
    """Before, the second part was silently dropped and the upload answered 201."""
    parts = [SimpleUploadedFile("a.txt", b"first"), SimpleUploadedFile("b.txt", b"second")]
    response = owner.client.post(UPLOAD, {"file": parts}, format="multipart")
    assert response.status_code == 400 and response.json()["code"] == "invalid"
    assert not Attachment.objects.exists()


# --- Tenancy: owner, colleague, outsider, anonymous ------------------------------


def test_only_the_owner_reads_the_file_and_its_content(owner, colleague, outsider, anonymous):
    body = uploaded(owner, b"Private budget")
    for url in (f"{UPLOAD}/{body['id']}", f"{UPLOAD}/{body['id']}/content"):
        assert owner.client.get(url).status_code == 200
        for person in (colleague, outsider):
            response = person.client.get(url)
            assert response.status_code == 404 and response.json()["code"] == "not_found"
        assert anonymous.get(url).status_code == 401


def test_an_unknown_or_malformed_id_is_404_or_400(owner):
    assert owner.client.get(f"{UPLOAD}/{uuid.uuid4()}").status_code == 404
    assert owner.client.get(f"{UPLOAD}/not-a-uuid").json()["code"] == "invalid_id"


def test_anonymous_upload_is_401_and_stores_nothing(anonymous, db):
    response = anonymous.post(UPLOAD, {"file": SimpleUploadedFile("a.txt", b"x")}, format="multipart")
    assert response.status_code == 401 and not Attachment.objects.exists()


def test_the_same_person_in_another_organization_does_not_see_it(owner, globex):
    from assistant_engine.organizations.models import Membership

    Membership.objects.create(organization=globex, user=owner.user, role="member")
    body = uploaded(owner, b"acme only")  # the token acts in acme
    owner.client.force_authenticate(owner.user)
    owner.client.credentials(HTTP_X_ORGANIZATION="globex")
    assert owner.client.get(f"{UPLOAD}/{body['id']}").status_code == 404


# --- Serving the content: never active ---------------------------------------------


def test_an_image_is_served_inline_in_its_own_type_with_nosniff(owner):
    body = uploaded(owner, png(), name="a<b>.png")
    response = owner.client.get(f"{UPLOAD}/{body['id']}/content")
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"] == "inline; filename*=UTF-8''a%3Cb%3E.png"
    assert "sandbox" in response["Content-Security-Policy"]
    assert response.content == png()


def test_text_is_served_as_an_attachment_in_text_plain(owner):
    body = uploaded(owner, b"# Notes\n<b>not html</b>", name="notes.html")
    response = owner.client.get(f"{UPLOAD}/{body['id']}/content")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["X-Content-Type-Options"] == "nosniff"
