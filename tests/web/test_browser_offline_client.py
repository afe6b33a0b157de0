"""Issue 34.14: the offline-first client of host pages (static/assistant/memory.js,
the esm-ai-memory package's role) in real Chromium against the live server's
/ai/ door, under the app's CSP (the module is imported from the page's own
origin, no inline script).

Offline then online, nothing lost and nothing doubled: every message written
offline reaches the server once, a conflicting edit goes to the newer write,
a delete made offline is applied and not brought back, a fresh browser
hydrates the server's conversations, and another person's store is apart.
The seed's timing (a tick every 20 s, a sync of what waited 3 minutes) is
checked with Playwright's clock and with the store's own clock; the tests
wait for states (polling), never for guessed durations.
"""

import time

import pytest
from django.conf import settings
from django.templatetags.static import static

from conversations.models import Message, Thread, ToolCall
from tests.web.conftest import Browser, web_client

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE = "/notes/"  # a host page of the demo product (its #assistant-config names the person)

OPEN = """async ([url, options]) => {
  const { createConversationMemory } = await import(url);
  window.memory?.close();
  window.memory = createConversationMemory(options);
  await window.memory.ready;
  return window.memory.status;
}"""

# The person's IndexedDB as it is, read without the module (a database that
# doesn't exist is not created by looking).
READ_DATABASE = """async (name) => {
  if (!(await indexedDB.databases()).some((db) => db.name === name)) return null;
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const tx = db.transaction(['conversations', 'sync']);
  const all = (store) => new Promise((resolve) => {
    const req = tx.objectStore(store).getAll();
    req.onsuccess = () => resolve(req.result);
  });
  const [docs, states] = await Promise.all([all('conversations'), all('sync')]);
  db.close();
  return { docs, states };
}"""

# Every violation of the app's CSP the page reports (the module must load without one).
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
  (event) => window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`));
"""

SETTLED = "() => window.memory.status.hydrated && window.memory.status.waiting === 0"
FAST = {"syncIntervalMs": 100, "syncAfterMs": 300}


@pytest.fixture
def pages(chromium, live_server, tmp_path):
    """Browser pages of one test (no Celery worker: no turn runs here); no JavaScript error allowed."""
    session = Browser(chromium, live_server, tmp_path)
    yield session
    session.close()
    assert session.errors == [], f"JavaScript errors in the page: {session.errors}"


def module_url() -> str:
    return static("assistant/memory.js")


def open_memory(page, **options):
    return page.evaluate(OPEN, [module_url(), options])


def database(page, person):
    return page.evaluate(READ_DATABASE, f"assistant-memory:{person.user.id}")


def now_ms() -> int:
    return int(time.time() * 1000)


def server_document(conversation_id, *texts, updated_at, title=None):
    return {
        "id": conversation_id, "title": title, "createdAt": updated_at - 1000, "updatedAt": updated_at,
        "messages": [{"id": f"{conversation_id}-s{index}", "role": "user", "content": text, "createdAt": updated_at}
                     for index, text in enumerate(texts)],
    }


def put(person, document):
    response = person.client.put(f"/ai/conversations/{document['id']}", document, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def on_server(person, conversation_id):
    response = person.client.get(f"/ai/conversations/{conversation_id}")
    return response.json() if response.status_code == 200 else None


def threads_of(person, external_id):
    return Thread.objects.filter(user=person.user, organization=person.organization, external_id=external_id)


def wait_until(check, timeout=15.0, message="the state"):
    """Poll a condition of the server (the page's clock may be Playwright's)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"Timed out waiting for {message}.")


WRITE_OFFLINE = """async () => {
  const m = window.memory;
  const trip = await m.startConversation({ title: 'Offline trip', widget: { panel: 'right' } });
  await m.addMessage(trip.id, { role: 'user', content: 'Plan a trip to Zurich' });
  const call = { id: 'toolu_1', name: 'search_notes', input: { query: 'Zurich' } };
  const reply = await m.addMessage(trip.id, { role: 'assistant', content: 'Searching your notes.',
    toolCalls: [{ ...call, result: null }] });
  await m.recordToolCall(trip.id, reply.id, { ...call, result: { notes: [{ id: 7, title: 'Zurich' }] } });
  await m.addMessage(trip.id, { role: 'user', content: 'Thanks' });
  const draft = await m.startConversation({ title: 'Never sent' });
  await m.addMessage(draft.id, { role: 'user', content: 'a second thought' });
  await m.deleteConversation(draft.id);
  await m.addMessage('mine-wins', { role: 'user', content: 'written offline, newer' });
  await m.addMessage('theirs-wins', { role: 'user', content: 'written offline, older' });
  await m.deleteConversation('doomed');
  return { trip: trip.id, reply: reply.id, draft: draft.id,
           theirsAt: (await m.getConversation('theirs-wins')).updatedAt };
}"""


def test_offline_then_online_nothing_lost_nothing_doubled(pages, owner):
    start = now_ms() - 60_000
    for name in ("mine-wins", "theirs-wins", "doomed"):
        put(owner, server_document(name, f"{name} on the server", updated_at=start))
    page = pages.page(owner)
    page.context.add_init_script(RECORD_VIOLATIONS)
    page.goto(PAGE)
    status = open_memory(page, **FAST)
    assert status["hydrated"] and status["userId"] == str(owner.user.id)
    listed = page.evaluate("window.memory.listConversations()")
    assert sorted(item["id"] for item in listed) == ["doomed", "mine-wins", "theirs-wins"]

    # Offline: every interaction is in IndexedDB at once, marked to be sent.
    page.context.set_offline(True)
    written = page.evaluate(WRITE_OFFLINE)
    trip = written["trip"]
    local = database(page, owner)
    docs = {doc["id"]: doc for doc in local["docs"]}
    states = {state["id"]: state for state in local["states"]}
    assert sorted(docs) == sorted(["mine-wins", "theirs-wins", trip])
    assert [m["content"] for m in docs[trip]["messages"]] == [
        "Plan a trip to Zurich", "Searching your notes.", "Thanks"]
    assert docs[trip]["messages"][1]["toolCalls"][0]["result"] == {"notes": [{"id": 7, "title": "Zurich"}]}
    assert all(states[name]["dirtySince"] is not None for name in ("mine-wins", "theirs-wins", trip))
    assert states["doomed"]["deleted"] and states[written["draft"]]["deleted"]  # tombstones

    # Meanwhile another device writes a newer version of one of them.
    put(owner, server_document("theirs-wins", "theirs-wins on the server", "from the other device",
                               updated_at=written["theirsAt"] + 1000))

    # Back on the network but the server away (its /ai/ door unreachable): a
    # reload keeps everything, the sync fails silently and keeps it waiting.
    # (The reload's own best-effort flush is a keepalive request, which no
    # route intercepts: it is left out here and tested on its own below.)
    page.evaluate("window.memory.close()")
    page.context.route("**/ai/conversations**", lambda route: route.abort("connectionrefused"))
    page.context.set_offline(False)
    page.reload()
    status = open_memory(page, **FAST, flushOnHide=False)
    assert status["hydrated"] is False and status["waiting"] == 5  # 3 changes, 2 deletes
    page.wait_for_function("() => window.memory.status.online === false")
    listed = page.evaluate("window.memory.listConversations()")
    assert sorted(item["id"] for item in listed) == sorted(["mine-wins", "theirs-wins", trip])
    assert not threads_of(owner, trip).exists()
    assert on_server(owner, "doomed") is not None

    # The server back: hydrate, then everything that waited goes, once.
    page.context.unroute("**/ai/conversations**")
    page.wait_for_function(SETTLED)
    assert all(state["dirtySince"] is None and not state["deleted"] for state in database(page, owner)["states"])

    [thread] = threads_of(owner, trip)
    assert thread.title == "Offline trip"
    assert list(Message.objects.filter(thread=thread).order_by("seq").values_list("external_id", "content")) == [
        (message["id"], message["content"]) for message in docs[trip]["messages"]
    ]
    [call] = ToolCall.objects.filter(message__thread=thread)
    assert call.result == {"notes": [{"id": 7, "title": "Zurich"}]}
    got = on_server(owner, trip)
    assert got["widget"] == {"panel": "right"} and got["userId"] == str(owner.user.id)
    assert not threads_of(owner, written["draft"]).exists()  # created and deleted offline: never sent
    assert not threads_of(owner, "doomed").exists()  # deleted offline: applied
    # Last write wins, both ways: the local newer edit, the other device's newer one.
    assert [m["content"] for m in on_server(owner, "mine-wins")["messages"]] == [
        "mine-wins on the server", "written offline, newer"]
    theirs = [m["content"] for m in on_server(owner, "theirs-wins")["messages"]]
    assert theirs == ["theirs-wins on the server", "from the other device"]
    local_theirs = page.evaluate("window.memory.getConversation('theirs-wins')")
    assert [m["content"] for m in local_theirs["messages"]] == theirs
    assert Thread.objects.filter(user=owner.user).count() == 3
    assert Message.objects.filter(thread__user=owner.user).count() == 3 + 2 + 2

    # Syncing again changes nothing: nothing doubled.
    page.evaluate("window.memory.flush()")
    assert Message.objects.filter(thread__user=owner.user).count() == 7
    assert page.evaluate("window.__violations") == []

    # A fresh browser of the same person hydrates the server's conversations.
    fresh = pages.page(owner)
    fresh.goto(PAGE)
    assert database(fresh, owner) is None
    open_memory(fresh, **FAST)
    server_ids = [item["id"] for item in owner.client.get("/ai/conversations").json()]
    assert [item["id"] for item in fresh.evaluate("window.memory.listConversations()")] == server_ids
    hydrated = fresh.evaluate(f"window.memory.getConversation('{trip}')")
    assert [m["content"] for m in hydrated["messages"]] == [m["content"] for m in docs[trip]["messages"]]
    assert all(state["dirtySince"] is None for state in database(fresh, owner)["states"])


def test_another_persons_store_is_apart_and_never_uploaded_into_the_wrong_account(pages, owner, colleague):
    page = pages.page(owner)
    page.goto(PAGE)
    open_memory(page, **FAST)
    page.evaluate("""async () => {
      const c = await window.memory.startConversation({ title: 'Olivia only' });
      await window.memory.addMessage(c.id, { role: 'user', content: 'mine' });
      await window.memory.flush();
    }""")
    assert Thread.objects.filter(user=owner.user).count() == 1

    # The same browser, now signed in as the colleague: their own store, empty.
    page.context.clear_cookies()
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": pages.url,
                               "value": web_client(colleague).cookies[settings.SESSION_COOKIE_NAME].value}])
    page.goto(PAGE)
    status = open_memory(page, **FAST)
    assert status["userId"] == str(colleague.user.id) and status["hydrated"]
    assert page.evaluate("window.memory.listConversations()") == []
    assert database(page, colleague)["docs"] == []
    assert [doc["title"] for doc in database(page, owner)["docs"]] == ["Olivia only"]

    # Olivia's store opened under the colleague's session stays local: no
    # hydrate of the colleague's account into it, no upload into theirs.
    status = page.evaluate(f"window.memory.setUser('{owner.user.id}').then(() => window.memory.status)")
    assert status["userId"] == str(owner.user.id) and status["hydrated"] is False
    page.evaluate("""async () => {
      const [c] = await window.memory.listConversations();
      await window.memory.addMessage(c.id, { role: 'user', content: 'typed on the wrong session' });
      await window.memory.flush();
    }""")
    assert Thread.objects.filter(user=colleague.user).count() == 0
    assert Message.objects.filter(thread__user=owner.user).count() == 1
    assert any(state["dirtySince"] for state in database(page, owner)["states"])  # kept, for Olivia's next visit

    # Back to the person the session is for: their store, synced again.
    status = page.evaluate(f"window.memory.setUser('{colleague.user.id}').then(() => window.memory.status)")
    assert status["userId"] == str(colleague.user.id) and status["hydrated"] is True


def test_two_tabs_of_one_person_write_one_store_and_the_server_gets_each_message_once(pages, owner):
    first = pages.page(owner)
    first.goto(PAGE)
    open_memory(first, **FAST)
    second = first.context.new_page()
    second.on("pageerror", lambda error: pages.errors.append(str(error)))
    second.goto(PAGE)
    open_memory(second, **FAST)
    conversation = first.evaluate(WRITE_ONE, "from the first tab")
    second.evaluate(f"window.memory.addMessage('{conversation}', {{ role: 'assistant', content: 'from the second' }})")
    first.evaluate(f"window.memory.addMessage('{conversation}', {{ role: 'user', content: 'the first again' }})")
    for page in (first, second):
        page.wait_for_function(SETTLED)
    [thread] = threads_of(owner, conversation)
    assert list(Message.objects.filter(thread=thread).order_by("seq").values_list("content", flat=True)) == [
        "from the first tab", "from the second", "the first again"]
    got = second.evaluate(f"window.memory.getConversation('{conversation}')")
    assert [m["content"] for m in got["messages"]] == ["from the first tab", "from the second", "the first again"]


WRITE_ONE = """async (content) => {
  const c = await window.memory.startConversation({ title: content });
  await window.memory.addMessage(c.id, { role: 'user', content });
  return c.id;
}"""


def page_state(page):
    return page.evaluate("window.memory.status")


def test_the_seeds_rule_by_default_a_tick_every_20_s_sends_what_waited_3_minutes(pages, owner):
    page = pages.page(owner)
    page.clock.install()  # Playwright's clock: Date and the timers of the page, moved on by the test
    page.goto(PAGE)
    open_memory(page)
    assert page.evaluate("window.memory.options") == {
        "syncIntervalMs": 20_000, "syncAfterMs": 180_000, "flushOnHide": True, "autoSync": True}
    conversation = page.evaluate(WRITE_ONE, "Waits three minutes")
    [state] = database(page, owner)["states"]

    page.clock.run_for(150_000)  # seven ticks, none 3 minutes after the write
    page.evaluate("window.memory.idle()")  # what those ticks did is done
    assert page.evaluate("Date.now()") - state["dirtySince"] < 180_000
    assert page_state(page)["waiting"] == 1
    assert not threads_of(owner, conversation).exists()

    # The first tick 3 minutes after the write (at most 3 min 20 s) sends it, once.
    page.clock.run_for(60_000)
    wait_until(lambda: page_state(page)["waiting"] == 0, message="the sync")
    [thread] = threads_of(owner, conversation)
    assert list(Message.objects.filter(thread=thread).values_list("content", flat=True)) == ["Waits three minutes"]


CLOCKED = """async ([url]) => {
  const { createConversationMemory } = await import(url);
  const base = Date.now();
  window.offset = 0;
  window.memory = createConversationMemory({ autoSync: false, now: () => base + window.offset });
  await window.memory.ready;
}"""


def test_exactly_3_minutes_and_a_server_error_keeps_it_waiting_silently(pages, owner):
    page = pages.page(owner)
    page.goto(PAGE)
    page.evaluate(CLOCKED, [module_url()])
    conversation = page.evaluate(WRITE_ONE, "On the boundary")

    page.evaluate("window.offset = 179_999; window.memory.syncDue()")  # awaited: that sync is done
    assert not threads_of(owner, conversation).exists()

    # 3 minutes: due, but the server fails (503): nothing thrown, still waiting.
    page.route("**/ai/conversations/**", lambda route: route.fulfill(
        status=503, content_type="application/json", body='{"code": "unavailable", "detail": "Down."}'))
    page.evaluate("window.offset = 180_000")
    assert page.evaluate("window.memory.syncDue().then(() => 'resolved')") == "resolved"
    status = page_state(page)
    assert status["online"] is False and status["lastError"]["status"] == 503 and status["waiting"] == 1
    assert not threads_of(owner, conversation).exists()
    assert database(page, owner)["states"][0]["dirtySince"] is not None

    page.unroute("**/ai/conversations/**")
    page.evaluate("window.memory.syncDue()")
    assert page_state(page)["online"] is True and page_state(page)["waiting"] == 0
    [thread] = threads_of(owner, conversation)
    assert Message.objects.filter(thread=thread).count() == 1

    # A local edit older than another device's write, sent after it: the
    # server keeps the newer, and its answer replaces the local version.
    local = page.evaluate(f"window.memory.addMessage('{conversation}', {{ role: 'user', content: 'older' }})"
                          f".then(() => window.memory.getConversation('{conversation}'))")
    newer = server_document(conversation, "from the other device", updated_at=local["updatedAt"] + 1000)
    put(owner, newer)
    page.evaluate("window.offset = 360_000; window.memory.syncDue()")
    got = page.evaluate(f"window.memory.getConversation('{conversation}')")
    assert [m["content"] for m in got["messages"]] == ["from the other device"]
    assert got["updatedAt"] == newer["updatedAt"]
    assert [m["content"] for m in on_server(owner, conversation)["messages"]] == ["from the other device"]
    assert page_state(page)["waiting"] == 0


def test_a_hidden_tab_and_a_page_left_flush_what_waits(pages, owner):
    page = pages.page(owner)
    page.goto(PAGE)
    open_memory(page)  # the defaults: nothing would go before 3 minutes
    hidden = page.evaluate(WRITE_ONE, "Sent when the tab is hidden")
    page.evaluate("""() => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
    }""")
    page.wait_for_function("() => window.memory.status.waiting === 0")
    assert threads_of(owner, hidden).count() == 1

    # Leaving the page: its keepalive requests outlive it.
    left = page.evaluate(WRITE_ONE, "Sent when the page is left")
    page.goto("/inbox/")
    wait_until(lambda: threads_of(owner, left).exists(), message="the pagehide flush")
    [thread] = threads_of(owner, left)
    assert list(Message.objects.filter(thread=thread).values_list("content", flat=True)) == [
        "Sent when the page is left"]
    # Still marked as waiting in IndexedDB (the answer came after the page left):
    # the next visit sends it again, and the server keeps one version of it.
    open_memory(page, **FAST)
    page.wait_for_function(SETTLED)
    assert Message.objects.filter(thread__user=owner.user).count() == 2
    assert Thread.objects.filter(user=owner.user).count() == 2
