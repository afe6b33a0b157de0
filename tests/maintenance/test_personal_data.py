"""A person's data: the export (API and admin) and the batched erasure, which
keeps what accounting needs and never touches anyone else's data."""

import json
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from assistant import maintenance
from assistant.loop import run_turn
from assistant.maintenance_tasks import erase_user_task
from assistant.models import ActionCard, Erasure, Turn
from assistant_engine.organizations.models import ApiToken, Membership, PersonSession
from assistant_engine.organizations.personal_data import erase_user, export_user
from assistant_engine.providers.models import ProviderKey
from assistant_engine.providers.sealing import key_hint, seal_secret
from conversations.models import Message, Thread, ToolCall
from credits.models import CreditAccount, LedgerEntry
from tests.fakes.scripted import ScriptedClient, call, say
from tests.maintenance.conftest import queued_turn, running_turn
from tests.streamed import streamed_json, streamed_text
from workspace.models import InboxMessage, Note, SentEmail

PRICED = "bedrock-claude-haiku-4-5"  # $1 in / $5 out per million tokens: a scripted step costs 200 micros
User = get_user_model()


def played(person, message: str, *steps, conversation_id=None) -> Turn:
    turn = queued_turn(person, message=message, conversation_id=conversation_id)
    Turn.objects.filter(id=turn.id).update(model_option=PRICED)
    run_turn(turn.id, client=ScriptedClient(*steps))
    turn.refresh_from_db()
    return turn


def populate(person, tag: str, provider: str = "infomaniak") -> None:
    """Everything a person can have: notes, mail both ways, two conversations
    (a read tool with its raw result; a send proposed as a card), a provider key."""
    org, user = person.organization, person.user
    Note.objects.create(organization=org, owner=user, title=f"{tag} trip", body=f"{tag} train at nine")
    InboxMessage.objects.create(organization=org, recipient=user, sender="x@example.com", subject=f"{tag} hello",
                                body=f"{tag} third-party text")
    SentEmail.objects.create(organization=org, sender=user, from_address="a@example.com", to="b@example.com",
                             subject=f"{tag} sent", body=f"{tag} sent body")
    first = played(person, f"Search my notes for {tag}", call(("search_notes", {"query": tag})), say("Found it."))
    played(person, "And again", say("Still there."), conversation_id=first.thread_id)
    played(person, f"Email {tag}", call(("send_email", {"to": "t@example.com", "subject": tag, "body": "Hi"})),
           say("Card ready."))
    key = f"sk-{tag}-0123456789abcdef"
    ProviderKey.objects.create(organization=org, provider=provider, created_by=user,
                               sealed=seal_secret(key, org.id, provider), hint=key_hint(key))


def rows_of(person) -> dict[str, int]:
    user = person.user
    return {
        "threads": Thread.objects.filter(user=user).count(),
        "messages": Message.objects.filter(thread__user=user).count(),
        "tool_calls": ToolCall.objects.filter(message__thread__user=user).count(),
        "cards": ActionCard.objects.filter(user=user).count(),
        "workspace": Note.objects.filter(owner=user).count() + SentEmail.objects.filter(sender=user).count()
        + InboxMessage.objects.filter(recipient=user).count(),
    }


def without_time(document: dict) -> dict:
    return {key: value for key, value in document.items() if key != "exportedAt"}


def api_pages(client, url: str) -> list[dict]:
    results, page = [], 1
    while True:
        body = client.get(url, {"page": page}).json()
        results += body["results"]
        if not body["next"]:
            return results
        page += 1


def contains(whole, part, path="") -> None:
    """Every field of `part` is in `whole` with the same value (`whole` may have more)."""
    if isinstance(part, dict):
        assert isinstance(whole, dict), path
        for key, value in part.items():
            assert key in whole, f"{path}.{key} missing from the export"
            contains(whole[key], value, f"{path}.{key}")
    elif isinstance(part, list):
        assert isinstance(whole, list) and len(whole) == len(part), path
        for index, (w, p) in enumerate(zip(whole, part, strict=True)):
            contains(w, p, f"{path}[{index}]")
    else:
        assert whole == part, f"{path}: {whole!r} != {part!r}"


# --- Export ---------------------------------------------------------------------------


def test_the_export_holds_everything_the_person_sees_through_the_api(owner, colleague, settings):
    settings.CONVERSATIONS_PAGE_SIZE = 1
    populate(owner, "olivia")
    populate(colleague, "colin", provider="bedrock")

    response = owner.client.get("/api/me/export")
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith('attachment; filename="personal-data-acme-')
    assert response["Content-Disposition"].endswith('.json"')
    text = streamed_text(response)
    export = json.loads(text)
    assert export["person"]["username"] == "olivia" and export["organization"]["slug"] == "acme"

    by_id = {c["id"]: c for c in export["conversations"]}
    summaries = api_pages(owner.client, "/api/conversations")
    assert len(summaries) == len(by_id) == 2
    for summary in summaries:
        detail = owner.client.get(f"/api/conversations/{summary['id']}").json()
        contains(by_id[summary["id"]], detail)
        assert detail["messages"] and any(m["toolCalls"] for m in by_id[summary["id"]]["messages"])
    [search] = [call for conversation in by_id.values() for message in conversation["messages"]
                for call in message["toolCalls"] if call["name"] == "search_notes"]
    assert search["result"]["notes"][0]["title"] == "olivia trip"  # the raw tool result, whole

    assert len(export["turns"]) == 3 and sum(t["costMicros"] for t in export["turns"]) > 0
    for turn in export["turns"]:
        api = owner.client.get(f"/api/turns/{turn['id']}").json()
        assert (turn["status"], turn["costMicros"], turn["reservedMicros"]) == (
            api["status"], api["costMicros"], api["reservedMicros"])
    assert len(export["cards"]) == 1
    contains(export["cards"][0], owner.client.get(f"/api/cards/{export['cards'][0]['id']}").json())

    assert [n["body"] for n in export["notes"]] == ["olivia train at nine"]
    assert [m["body"] for m in export["inbox"]] == ["olivia third-party text"]
    assert [m["body"] for m in export["sentEmails"]] == ["olivia sent body"]
    assert [k["hint"] for k in export["providerKeys"]] == ["…cdef"]
    assert "sealed" not in json.dumps(export["providerKeys"]) and "colin" not in text


def test_colleague_and_outsider_export_only_their_own_and_anonymous_gets_401(owner, colleague, outsider,
                                                                               anonymous):
    populate(owner, "olivia")
    for person in (colleague, outsider):
        response = person.client.get("/api/me/export")
        assert response.status_code == 200
        text = streamed_text(response)
        body = json.loads(text)
        assert body["organization"]["id"] == person.organization.id
        assert body["conversations"] == body["cards"] == body["turns"] == body["notes"] == []
        assert "olivia" not in text
    assert anonymous.get("/api/me/export").status_code == 401


def test_the_export_is_of_the_active_organization_only(owner, globex):
    Membership.objects.create(organization=globex, user=owner.user)
    populate(owner, "olivia")
    session = APIClient()  # the header chooses for a session; a token acts in its own organization
    session.force_login(owner.user)
    response = session.get("/api/me/export", HTTP_X_ORGANIZATION="globex")
    assert response.status_code == 200 and streamed_json(response)["notes"] == []
    assert session.get("/api/me/export").json()["code"] == "organization_required"


# --- Erasure --------------------------------------------------------------------------


def test_erasure_runs_in_batches_keeps_costs_and_leaves_a_colleague_untouched(owner, colleague):
    populate(owner, "olivia")
    populate(colleague, "colin", provider="bedrock")
    colleague_before = without_time(export_user(colleague.member))
    colleague_rows = rows_of(colleague)
    owner_rows = rows_of(owner)
    owner_turns = dict(Turn.objects.filter(user=owner.user).values_list("id", "cost_micros"))
    ledger_before = list(LedgerEntry.objects.values_list("id", "kind", "turn_id", "used_delta", "reserved_delta"))
    account_before = CreditAccount.objects.values_list("granted_micros", "used_micros", "reserved_micros").get()
    key = ProviderKey.objects.get(created_by=owner.user)

    batches = []
    while not (batches and batches[-1].done):
        batches.append(erase_user(owner.user, batch_size=4))
        assert len(batches) < 30
    totals = {}
    for progress in batches:
        for name, count in progress.counts.items():
            totals[name] = totals.get(name, 0) + count
    assert len(batches) > 5 and not any(p.done for p in batches[:-1])
    assert all(sum(v for k, v in p.counts.items() if k not in ("tokens", "memberships", "user")) <= 4
               for p in batches)
    assert totals["conversations"] == owner_rows["threads"] + owner_rows["messages"] + owner_rows["tool_calls"]
    assert (totals["cards"], totals["workspace"], totals["turns"]) == (1, 3, 3)
    assert (totals["provider_keys"], totals["tokens"], totals["memberships"], totals["user"]) == (1, 1, 1, 1)

    # The person is gone, with everything of theirs…
    assert not User.objects.filter(username="olivia").exists()
    assert rows_of(owner) == dict.fromkeys(owner_rows, 0)
    assert not Membership.objects.filter(user_id=owner.user.id).exists()
    assert not ApiToken.objects.filter(user_id=owner.user.id).exists()
    # …but accounting keeps every cost, without the person.
    assert dict(Turn.objects.filter(id__in=owner_turns).values_list("id", "cost_micros")) == owner_turns
    assert not Turn.objects.filter(id__in=owner_turns, user__isnull=False).exists()
    assert list(LedgerEntry.objects.values_list("id", "kind", "turn_id", "used_delta", "reserved_delta")) == \
        ledger_before
    assert not LedgerEntry.objects.filter(actor_id=owner.user.id).exists()
    assert CreditAccount.objects.values_list("granted_micros", "used_micros", "reserved_micros").get() == \
        account_before
    key.refresh_from_db()
    assert key.created_by is None and key.hint == "…cdef"

    # The colleague: not one row changed.
    assert rows_of(colleague) == colleague_rows
    assert without_time(export_user(colleague.member)) == colleague_before
    assert User.objects.get(pk=colleague.user.pk).is_active
    assert colleague.client.get("/api/conversations").status_code == 200


def test_erasure_waits_for_a_reply_being_written_and_closes_the_door_at_once(owner):
    populate(owner, "olivia")
    turn = running_turn(owner)
    progress = erase_user(owner.user, batch_size=1000)
    assert not progress.done and progress.blocked_by == "conversations"
    assert Thread.objects.filter(user=owner.user).get().id == turn.thread_id
    assert not User.objects.get(pk=owner.user.pk).is_active
    assert owner.client.get("/api/conversations").status_code == 401
    # The stuck-turn job (or the turn's worker) frees the thread; then it goes.
    assert maintenance.fail_stuck_turns() == 1
    assert erase_user(owner.user, batch_size=1000).done
    assert Turn.objects.get(id=turn.id).user_id is None


def test_the_erasure_task_reschedules_itself_until_done(owner, colleague, settings, monkeypatch,
                                                        django_capture_on_commit_callbacks):
    settings.ASSISTANT_ERASURE_BATCH_SIZE = 5
    populate(owner, "olivia")
    staff = User.objects.create_user("staff", is_staff=True)
    scheduled = []
    monkeypatch.setattr(erase_user_task, "apply_async", lambda args, kwargs=None, **options: scheduled.append(args[0]))

    with django_capture_on_commit_callbacks(execute=True):
        erasure = maintenance.erasure_start(owner.user, requested_by=staff)
    assert maintenance.erasure_start(owner.user, requested_by=staff) == erasure  # one running per person
    runs = 0
    while scheduled:
        erase_user_task(scheduled.pop())  # what the worker runs
        runs += 1
        assert runs < 30
    erasure.refresh_from_db()
    assert erasure.status == "done" and erasure.user_id is None and erasure.subject_id == owner.user.pk
    assert runs == erasure.batches > 3
    assert erasure.counts["user"] == 1 and erasure.counts["cards"] == 1 and erasure.requested_by == staff
    assert not User.objects.filter(pk=owner.user.pk).exists() and User.objects.filter(pk=colleague.user.pk).exists()


def test_continue_erasures_enqueues_the_stalled_ones_only(owner, colleague, settings, monkeypatch):
    scheduled = []
    monkeypatch.setattr(erase_user_task, "apply_async", lambda args, kwargs=None, **options: scheduled.append(args[0]))
    stalled = Erasure.objects.create(user=owner.user, subject_id=owner.user.pk,
                                     updated_at=timezone.now() - timedelta(hours=1))
    Erasure.objects.create(user=colleague.user, subject_id=colleague.user.pk, updated_at=timezone.now())
    Erasure.objects.create(subject_id=999, status="done", updated_at=timezone.now() - timedelta(days=1))
    assert maintenance.continue_erasures() == 1
    assert scheduled == [str(stalled.id)]


def test_a_finished_or_unknown_erasure_runs_nothing(owner):
    assert maintenance.erasure_run_batch(uuid.uuid4()) is None
    erasure = Erasure.objects.create(user=owner.user, subject_id=owner.user.pk, status="done",
                                     updated_at=timezone.now())
    assert maintenance.erasure_run_batch(erasure.id) is None
    assert User.objects.filter(pk=owner.user.pk).exists()


# --- Staff, in the admin ------------------------------------------------------------


@pytest.fixture
def staff_client(client, db):
    staff = User.objects.create_superuser("root", "root@example.com", "pw-root")
    client.force_login(staff)
    return client


def test_staff_download_a_person_export_from_the_users_admin(staff_client, owner, colleague):
    populate(owner, "olivia")
    response = staff_client.post("/admin/auth/user/", {
        "action": "export_personal_data", "_selected_action": [owner.user.pk],
    })
    assert response.status_code == 200 and response["Content-Disposition"].startswith("attachment;")
    body = json.loads(response.content)
    [person] = body["people"]
    [export] = person["organizations"]
    assert export["organization"]["slug"] == "acme" and len(export["conversations"]) == 2
    assert "colin" not in response.content.decode()


def test_staff_start_an_erasure_from_the_admin(staff_client, owner, monkeypatch):
    scheduled = []
    monkeypatch.setattr(erase_user_task, "apply_async", lambda args, kwargs=None, **options: scheduled.append(args[0]))
    response = staff_client.post("/admin/auth/user/", {
        "action": "erase_personal_data", "_selected_action": [owner.user.pk],
    })
    assert response.status_code == 302 and response["Location"].endswith(f"?user={owner.user.pk}")
    assert staff_client.get(response["Location"]).status_code == 200

    refused = staff_client.post("/admin/assistant/erasure/add/", {"user": owner.user.pk})
    assert refused.status_code == 200 and not Erasure.objects.exists()  # the confirmation is required
    response = staff_client.post("/admin/assistant/erasure/add/", {"user": owner.user.pk, "confirm": "on"})
    assert response.status_code == 302
    erasure = Erasure.objects.get()
    assert (erasure.status, erasure.subject_id, erasure.requested_by.username) == ("running", owner.user.pk, "root")
    assert not User.objects.get(pk=owner.user.pk).is_active
    assert staff_client.get(f"/admin/assistant/erasure/{erasure.pk}/change/").status_code == 200


def test_starting_an_erasure_deletes_the_persons_sessions_and_tokens_only(owner, colleague, monkeypatch):
    monkeypatch.setattr(erase_user_task, "apply_async", lambda args, kwargs=None, **options: None)
    browsers = [Client(), Client(), Client()]
    for browser, person in zip(browsers, (owner, owner, colleague), strict=True):
        browser.force_login(person.user)

    maintenance.erasure_start(owner.user)

    assert not PersonSession.objects.filter(user_id=owner.user.pk).exists()
    assert PersonSession.objects.filter(user_id=colleague.user.pk).count() == 1
    assert not ApiToken.objects.filter(user_id=owner.user.pk).exists()
    assert ApiToken.objects.filter(user_id=colleague.user.pk).exists()
    assert browsers[0].get("/data/").status_code == 302  # signed out
    assert browsers[2].get("/data/").status_code == 200


def test_a_session_row_names_its_person_and_an_anonymous_one_nobody(owner):
    browser, anonymous_browser = Client(), Client()
    browser.force_login(owner.user)
    anonymous_browser.get("/accounts/login/")
    session = anonymous_browser.session
    session["seen"] = True
    session.save()

    assert PersonSession.objects.get(session_key=browser.session.session_key).user_id == owner.user.pk
    assert PersonSession.objects.get(session_key=session.session_key).user_id is None


def test_a_session_saved_by_async_code_names_its_person_too(owner):
    from asgiref.sync import async_to_sync

    from assistant_engine.organizations.sessions import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(owner.user.pk)
    async_to_sync(session.asave)()

    assert PersonSession.objects.get(session_key=session.session_key).user_id == owner.user.pk


def test_a_session_row_decodes_through_the_engines_store(owner):
    browser = Client()
    browser.force_login(owner.user)

    row = PersonSession.objects.get(session_key=browser.session.session_key)

    assert row.get_decoded()[SESSION_KEY] == str(owner.user.pk)


def test_the_personal_export_is_streamed_a_batch_of_conversations_at_a_time(owner, colleague, monkeypatch):
    from conversations import personal_data as conversations_export
    from tests.conversations.factories import BASE_TIME, make_thread

    monkeypatch.setattr(conversations_export, "EXPORT_BATCH_THREADS", 2)
    # Two share a created_at: the keyset (created_at, id) must neither skip nor repeat one.
    moments = [BASE_TIME, BASE_TIME, BASE_TIME + timedelta(hours=1), BASE_TIME + timedelta(hours=2),
               BASE_TIME + timedelta(hours=3)]
    made = [make_thread(owner, title=f"t{i}", updated_at=moment, messages=2) for i, moment in enumerate(moments)]
    make_thread(colleague, title="not mine", messages=1)
    read = []
    monkeypatch.setattr(conversations_export, "_exported_thread",
                        lambda thread, wrapped=conversations_export._exported_thread: read.append(thread.id)
                        or wrapped(thread))

    response = owner.client.get("/api/me/export")

    assert response.status_code == 200 and response.streaming
    assert read == []  # nothing is read before the body is sent
    streamed = streamed_json(response)
    expected = sorted(made, key=lambda thread: (thread.created_at, thread.id))
    assert [c["id"] for c in streamed["conversations"]] == [str(thread.id) for thread in expected]
    whole = export_user(owner.member)
    assert {**streamed, "exportedAt": None} == json.loads(json.dumps({**whole, "exportedAt": None}))
