"""A typed client generated from the served OpenAPI document by
openapi-python-client (the well-kept generator on PyPI), byte-compiled, then
used against a real server process and a real Celery worker: list, get,
upload, chat, follow the turn, confirm a card, and read a typed refusal.
Proof that the document describes the API a program actually meets."""

import compileall
import importlib
import subprocess
import sys
import time
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conversations.models import Thread
from tests.api_contract.harness import api_server, auth_header, propose, seed_person
from tests.workers import celery_worker
from workspace.models import Note

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

PACKAGE = "assistant_api_client"


def test_a_generated_client_lists_gets_uploads_chats_follows_and_confirms(owner, tmp_path, monkeypatch):
    seeded = seed_person(owner, label="olivia")
    note = Note.objects.create(organization=owner.organization, owner=owner.user, title="Old", body="Delete me")
    card = propose(owner, first_thread(seeded), "delete_note", {"note_id": note.id})
    with api_server() as server, celery_worker(OFFLINE_MODEL_CHUNK_DELAY_MS="5"):
        api = generate_client(server.url, tmp_path, monkeypatch)
        client = authenticated_client(api, server.url, owner)
        models = api.models

        page = api.api.conversations.conversations_list.sync(client=client, page_size=2)
        assert isinstance(page, models.PaginatedConversationSummaryList)
        assert page.count == 3 and len(page.results) == 2 and page.next_ is not None

        stored = api.api.conversations.conversation_get.sync(
            client=client, conversation_id=uuid.UUID(seeded["conversations"][0]),
        )
        assert isinstance(stored, models.Conversation)
        assert stored.messages[1].tool_calls[0].name == "search_notes"

        conversation_id = uuid.uuid4()
        upserted = api.api.conversations.conversation_put.sync(
            client=client, conversation_id=conversation_id, body=offline_conversation(models, conversation_id),
        )
        assert isinstance(upserted, models.UpsertResult) and upserted.applied is True
        assert [m.content for m in upserted.conversation.messages] == ["Find my notes about Zurich", "Here they are."]

        request = models.ChatRequestRequest(message="Search my notes for Old", conversation_id=conversation_id)
        accepted = api.api.chat.chat.sync(client=client, body=request)
        assert isinstance(accepted, models.ChatAccepted) and accepted.conversation_id == conversation_id

        turn = follow_turn(api, client, accepted.turn_id)
        assert turn.status == models.TurnStatusEnum.DONE and turn.conversation_id == conversation_id
        assert accepted.message_id in turn.message_ids

        shown = api.api.cards.card_get.sync(client=client, card_id=card.id)
        assert isinstance(shown, models.ActionCard) and shown.status == models.ActionCardStatusEnum.PENDING
        confirmed = api.api.cards.card_confirm.sync(
            client=client, card_id=card.id, body=models.ConfirmRequestRequest(hash_=shown.hash_),
        )
        assert isinstance(confirmed, models.ActionCard) and confirmed.status == models.ActionCardStatusEnum.CONFIRMED
        assert not Note.objects.filter(id=note.id).exists()

        again = api.api.cards.card_confirm.sync(
            client=client, card_id=card.id, body=models.ConfirmRequestRequest(hash_=shown.hash_),
        )
        assert isinstance(again, models.ErrorStaleDecidedRepeat)
        assert again.code == models.ErrorStaleDecidedRepeatCodeEnum.DECIDED
        assert again.card.status == models.ActionCardStatusEnum.CONFIRMED


def first_thread(seeded):
    return Thread.objects.get(id=seeded["conversations"][0])


def generate_client(base_url: str, folder: Path, monkeypatch):
    """The client generated from the document the server serves, importable."""
    with urllib.request.urlopen(f"{base_url}/api/schema/?format=json", timeout=30) as answer:
        (folder / "openapi.json").write_bytes(answer.read())
    (folder / "config.yaml").write_text(f"package_name_override: {PACKAGE}\npost_hooks: []\n")
    generated = subprocess.run(
        [str(Path(sys.executable).parent / "openapi-python-client"), "generate", "--path", str(folder / "openapi.json"),
         "--meta", "none", "--output-path", str(folder / PACKAGE), "--config", str(folder / "config.yaml"),
         "--fail-on-warning"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    assert compileall.compile_dir(folder / PACKAGE, quiet=1)
    monkeypatch.syspath_prepend(str(folder))
    package = importlib.import_module(PACKAGE)
    for module in ("api.conversations.conversations_list", "api.conversations.conversation_get",
                   "api.conversations.conversation_put", "api.chat.chat", "api.turns.turn_get", "api.cards.card_get",
                   "api.cards.card_confirm", "models"):
        importlib.import_module(f"{PACKAGE}.{module}")
    return package


def authenticated_client(api, base_url: str, person):
    """The generated client, authenticated through the harness's one auth helper."""
    name, value = auth_header(person)
    prefix, token = value.split(" ", 1)
    return api.AuthenticatedClient(
        base_url=base_url, token=token, prefix=prefix, auth_header_name=name, raise_on_unexpected_status=True,
    )


def offline_conversation(models, conversation_id):
    moment = datetime(2026, 11, 1, 12, tzinfo=UTC)
    # The body's id is read-only (the URL names the conversation): the generated request has none.
    return models.ConversationRequest(
        title="Offline", created_at=moment, updated_at=moment,
        messages=[
            models.MessageRequest(id=uuid.uuid4(), role=models.RoleEnum.USER, content="Find my notes about Zurich",
                                  created_at=moment),
            models.MessageRequest(
                id=uuid.uuid4(), role=models.RoleEnum.ASSISTANT, content="Here they are.", created_at=moment,
                tool_calls=[models.ToolCallRequest(
                    id="toolu_01", name="search_notes",
                    input_=models.ToolCallRequestInputType0.from_dict({"query": "Zurich"}), result={"notes": []},
                )],
            ),
        ],
    )


def follow_turn(api, client, turn_id, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while True:
        turn = api.api.turns.turn_get.sync(client=client, turn_id=turn_id)
        if turn.status.value in ("done", "failed") or time.monotonic() > deadline:
            return turn
        time.sleep(0.2)

