"""Long conversations on every catalog model (issue 32): each request within
the model's window, checked by providers over their wire that refuse a request
past it as the real ones do (tests/fakes/windowed_models.py); older messages
summarized, not dropped; the summary reused and extended, its marks kept."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from assistant.chat import chat_submit
from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.organizations.models import Organization
from assistant_engine.providers.catalog import CATALOG, client_for
from assistant_engine.providers.clients.base import ModelRequest, ProviderError, UserText
from conversations.models import Message, Summary, Thread, ToolCall
from credits.models import LedgerEntry
from tests.assistant.conftest import Clock
from tests.fakes.windowed_models import AnthropicWindowed, OpenAIWindowed

REAL_OPTIONS = [option for option in CATALOG if option.provider != "offline"]
WORDS = "The quarterly budget review moved to Thursday; Lena brings the figures and the venue list. "


def seed_conversation(person, messages: int, *, untrusted_at: int | None = None) -> Thread:
    """A conversation of `messages` messages (the person's and the assistant's
    in turn), written directly: a month of daily use in one thread."""
    now = timezone.now() - timedelta(days=30)
    thread = Thread.objects.create(organization=person.organization, user=person.user, created_at=now,
                                   updated_at=now, last_activity_at=now, next_seq=messages)
    rows = []
    for seq in range(messages):
        role = Message.Role.USER if seq % 2 == 0 else Message.Role.ASSISTANT
        message_id = uuid.uuid4()
        rows.append(Message(id=message_id, client_id=message_id, thread=thread, seq=seq, role=role,
                            content=f"#{seq} {WORDS}", turn_id=None if role == Message.Role.USER else thread.id,
                            created_at=now))
    Message.objects.bulk_create(rows)
    if untrusted_at is not None:  # an inbox read early on: third-party content
        reply = Message.objects.get(thread=thread, seq=untrusted_at)
        ToolCall.objects.create(message=reply, tool_use_id="inbox_1", name="read_inbox", input={},
                                result={"messages": [{"from": "x@example.com", "body": "hello"}]},
                                created_at=now, finished_at=now)
    return thread


def provider_client(option, settings, monkeypatch, url):
    """The option's real client (its official SDK) aimed at the fake server."""
    if option.provider == "infomaniak":
        settings.INFOMANIAK_AI_PRODUCT_ID = "4242"
        settings.INFOMANIAK_AI_BASE_URL = url + "/v1"
    elif option.provider == "bedrock":
        settings.BEDROCK_REGION = "eu-central-2"
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", url)
    else:
        settings.ASSISTANT_ALLOW_US_PROCESSING = True
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    return client_for(option, api_key="test-key", max_retries=0)


def fake_for(option):
    model = OpenAIWindowed if option.provider == "infomaniak" else AnthropicWindowed
    return model(option.context_window_tokens)


def turn_on(person, thread, option, text="And what did we decide?"):
    turn_id = chat_submit(person.member, message=text, conversation_id=thread.id).turn_id
    Turn.objects.filter(id=turn_id).update(model_option=option.id)
    return turn_id


@pytest.mark.parametrize("option", REAL_OPTIONS, ids=lambda option: option.id)
def test_a_2000_message_conversation_keeps_answering_within_each_models_window(owner, option, settings,
                                                                               monkeypatch):
    thread = seed_conversation(owner, 2000, untrusted_at=5)
    fake = fake_for(option)
    with fake.server() as server:
        client = provider_client(option, settings, monkeypatch, server.url)
        turns = []
        for number in range(3):
            turn_id = turn_on(owner, thread, option, f"Question {number}: what did we decide?")
            run_turn(turn_id, client=client, clock=Clock())
            turn = Turn.objects.get(id=turn_id)
            assert (turn.status, turn.failure_kind) == ("done", "")
            turns.append(turn)
    assert fake.refused == 0 and fake.largest <= option.context_window_tokens
    # The first turn caught up with the whole past once; the next two reused its summary.
    assert Summary.objects.filter(thread=thread).count() == 1
    # Nothing is deleted: every message is still there, in the API and the export.
    assert Message.objects.filter(thread=thread).count() == 2000 + 3 * 2
    document = owner.client.get(f"/api/conversations/{thread.id}/export?format=json")
    assert document.status_code == 200 and document.content.count(b"The quarterly budget review") >= 2000
    # The summary's calls are billed to the turn that made them, their hold marked in the ledger.
    summary = Summary.objects.get(thread=thread)
    assert summary.turn_id == turns[0].id and 0 < summary.input_tokens <= turns[0].input_tokens
    assert LedgerEntry.objects.filter(turn_id=turns[0].id, job="summarize").exists()
    assert not LedgerEntry.objects.filter(turn_id__in=[turns[1].id, turns[2].id], job="summarize").exists()
    # The inbox read of message 5 is summarized: its mark is kept (the later turns' guard sees it).
    assert summary.read_untrusted and Turn.objects.filter(thread=thread).latest("created_at").read_untrusted


@pytest.mark.parametrize("make", [AnthropicWindowed, OpenAIWindowed])
def test_the_fake_providers_refuse_a_request_past_the_window_as_the_real_ones_do(make, settings, monkeypatch):
    """What the test above relies on: sent whole, the conversation would fail."""
    option = next(o for o in REAL_OPTIONS if (o.provider == "infomaniak") == (make is OpenAIWindowed))
    fake = make(4_000)
    with fake.server() as server:
        client = provider_client(option, settings, monkeypatch, server.url)
        request = ModelRequest(system="s", history=[UserText("x" * 3_500)], max_tokens=1_000)
        with pytest.raises(ProviderError) as refused:
            list(client.stream(request))
    assert refused.value.kind in ("bad_request", "invalid_request", "api") and fake.refused == 1


def test_the_summary_is_made_once_per_threshold_crossed_not_per_turn(owner, settings):
    """On the offline model, with a deployment's window bound of 16,000 tokens
    (about 7,500 for the history once the tools, the system prompt and the
    reply's 4,000 are set aside): 40 turns of ~1,100 tokens each fill the room
    every 3 or 4 turns; a summary is written each time it fills (keeping half
    the room for the recent messages), extended from the previous one."""
    settings.ASSISTANT_CONTEXT_WINDOW_TOKENS = 16_000
    settings.OFFLINE_MODEL_CHUNK_DELAY_MS = 0
    thread = seed_conversation(owner, 2)
    summaries_after = []
    for number in range(40):
        turn_id = chat_submit(owner.member, message=f"Note {number}: " + WORDS * 6, conversation_id=thread.id).turn_id
        run_turn(turn_id, clock=Clock())
        assert Turn.objects.get(id=turn_id).status == "done"
        summaries_after.append(Summary.objects.filter(thread=thread).count())
    made = summaries_after[-1]
    assert 5 <= made <= 40 // 3  # each threshold crossed, not every turn
    # Each summary extends the previous one: it goes further, and keeps its points.
    summaries = list(Summary.objects.filter(thread=thread).order_by("through_seq"))
    assert [s.through_seq for s in summaries] == sorted({s.through_seq for s in summaries})
    assert "Note 0:" in summaries[1].content
    # Each written by the turn that needed it, once.
    assert len({s.turn_id for s in summaries}) == made


def test_window_and_full_are_the_organizations_choice(owner, settings):
    settings.ASSISTANT_CONTEXT_WINDOW_TOKENS = 8_000
    settings.OFFLINE_MODEL_CHUNK_DELAY_MS = 0
    thread = seed_conversation(owner, 400)
    Organization.objects.filter(pk=owner.organization.pk).update(history_mode="window")
    turn_id = chat_submit(owner.member, message="Still there?", conversation_id=thread.id).turn_id
    run_turn(turn_id, clock=Clock())
    assert Turn.objects.get(id=turn_id).status == "done" and not Summary.objects.exists()
    Organization.objects.filter(pk=owner.organization.pk).update(history_mode="full")
    turn_id = chat_submit(owner.member, message="And now?", conversation_id=thread.id).turn_id
    run_turn(turn_id, clock=Clock())
    turn = Turn.objects.get(id=turn_id)
    assert (turn.status, turn.failure_kind) == ("failed", "bounds") and not Summary.objects.exists()


def test_a_summary_never_folds_a_pending_cards_proposal(owner, settings):
    """A card proposed earlier and still awaiting the click stays sent whole:
    without it, this fold would go up to message 37 or so (half the room kept)."""
    from assistant.models import ActionCard

    settings.ASSISTANT_CONTEXT_WINDOW_TOKENS = 16_000
    settings.OFFLINE_MODEL_CHUNK_DELAY_MS = 0
    thread = seed_conversation(owner, 60)
    reply = Message.objects.get(thread=thread, seq=31)
    call = ToolCall.objects.create(message=reply, tool_use_id="send_1", name="send_email",
                                   input={"to": "a@example.com", "subject": "s", "body": "b"},
                                   result={"status": "awaiting_confirmation"}, created_at=reply.created_at,
                                   finished_at=reply.created_at)
    ActionCard.objects.create(organization=owner.organization, user=owner.user, thread=thread, tool_call=call,
                              tool_name="send_email", tool_input=call.input, description="Send",
                              snapshot_hash="f" * 64, expires_at=timezone.now() + timedelta(hours=1))
    turn_id = chat_submit(owner.member, message="Go on.", conversation_id=thread.id).turn_id
    run_turn(turn_id, clock=Clock())
    assert Turn.objects.get(id=turn_id).status == "done", Message.objects.filter(thread=thread).last().notice
    summary = Summary.objects.get(thread=thread)
    assert 0 < summary.through_seq <= 31  # older messages folded, never the proposal's


def test_the_long_conversations_benchmark_runs_and_prints_its_table():
    """`make bench`'s long-conversation rows at their smallest size: a change that breaks it fails here."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "BENCH_LONG_TURNS": "2", "BENCH_LONG_CACHE_TURNS": "2"}
    env.pop("DATABASE_URL", None)  # its own SQLite file, whatever database the suite runs on
    result = subprocess.run([sys.executable, "bench/long_conversations.py"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "| 5,000 messages | summarize |" in result.stdout and "read from the cache" in result.stdout
    assert "0 requests refused for their length" in result.stdout
