"""Issue 30: a Django product of its own (examples/shop: e-mail sign-in, stores
for tenants, its own pages, URLs and app names) installs the engine from a wheel
into a fresh virtualenv and works end to end: its people chat through the API and
in its own page's panel, the assistant uses the shop's tools with each person's
rights, a cancel waits for the person's click, credits are charged to the store,
and another store's person finds nothing."""

import json

import pytest
import requests

from tests.fakes.wire_servers import (
    WireServer,
    openai_chunk,
    openai_sse,
    openai_tool_fragment,
    openai_usage_chunk,
)
from tests.kit.shop import (
    ENGINE_TOP_LEVEL,
    PASSWORD,
    Shop,
    build_wheel,
    fresh_virtualenv,
    installed_top_level_names,
    interpreter,
    serve_shop,
    shop_environment,
)
from tests.maintenance.conftest import redis_server  # noqa: F401 (a fixture: a real redis-server)
from tests.web.accessibility import assert_accessible
from tests.workers import wait_until

# On the SQLite run only (the shop keeps its own SQLite database): it needs Chromium,
# the one browser of tests/web (a second Playwright in the process would not start).
pytestmark = [pytest.mark.browser, pytest.mark.redis, pytest.mark.worker]


def tool_call(name: str, arguments: dict, call_id: str):
    return openai_sse([
        openai_tool_fragment(0, json.dumps(arguments), call_id=call_id, name=name),
        openai_chunk(finish_reason="tool_calls"),
        openai_usage_chunk(1200, 30),
    ])


def answer(text: str):
    return openai_sse([openai_chunk({"content": text}), openai_chunk(finish_reason="stop"),
                       openai_usage_chunk(1500, 20)])


@pytest.fixture(scope="module")
def shop_python(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shop-install")
    return fresh_virtualenv(folder, build_wheel(folder))


@pytest.fixture(scope="module")
def model():
    with WireServer() as server:
        yield server


@pytest.fixture(scope="module")
def shop(shop_python, redis_server, model, tmp_path_factory):  # noqa: F811 (fixtures of conftest)
    folder = tmp_path_factory.mktemp("shop")
    env = shop_environment(folder, redis_server.url, model.url + "/v1")
    yield from serve_shop(shop_python, env, folder)


def test_the_wheel_adds_no_generic_top_level_name(shop_python):
    assert installed_top_level_names(shop_python) == ENGINE_TOP_LEVEL


def test_the_shop_passes_django_checks_with_the_engine_installed(shop):
    assert "no issues" in shop.manage("check")
    # The engine's migrations are complete against the shop's custom user model.
    shop.manage("makemigrations", "--check", "--dry-run")


@pytest.mark.parametrize("version", ["3.12", "3.13"])
def test_the_shop_installs_and_migrates_on_the_other_supported_pythons(version, tmp_path):
    python = interpreter(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine")
    shop = Shop(python=fresh_virtualenv(tmp_path, build_wheel(tmp_path), python),
                env=shop_environment(tmp_path, "memory://", "http://127.0.0.1:9/v1"), url="",
                database=tmp_path / "shop.sqlite3")
    shop.manage("migrate", "--verbosity=0")
    assert "no issues" in shop.manage("check")
    shop.manage("makemigrations", "--check", "--dry-run")


def test_a_person_chats_through_the_api_with_the_shop_tools_and_their_own_rights(shop, model):
    assert requests.get(f"{shop.url}/helper/api/conversations", timeout=10).status_code == 401
    ada = shop.signed_in("ada@corner.example")
    model.reply(tool_call("list_orders", {}, "call_1"), answer("Orders 1041 and 1042 are open."))

    accepted = ada.post(f"{shop.url}/helper/api/chat", json={"message": "Which orders are open?"})
    assert accepted.status_code == 202, accepted.text
    turn_id, conversation_id = accepted.json()["turnId"], accepted.json()["conversationId"]
    turn = wait_until(lambda: ended(ada.get(f"{shop.url}/helper/api/turns/{turn_id}").json()), timeout=90)
    assert turn["status"] == "done", turn

    tool_result = [m for m in model.requests[-1].json()["messages"] if m["role"] == "tool"]
    assert "Mme Dubois" in tool_result[0]["content"] and "Ms Brown" not in tool_result[0]["content"]
    conversation = ada.get(f"{shop.url}/helper/api/conversations/{conversation_id}").json()
    assert conversation["messages"][-1]["content"] == "Orders 1041 and 1042 are open."
    credits = ada.get(f"{shop.url}/helper/api/credits").json()
    assert credits["monthlyCredits"] == 500 and 0 < credits["usedMicros"] < credits["grantedMicros"]

    # A colleague of the same store and a person of another store: not found.
    for other in ("carl@corner.example", "olga@harbour.example"):
        session = shop.signed_in(other)
        assert session.get(f"{shop.url}/helper/api/conversations/{conversation_id}").status_code == 404
        assert session.get(f"{shop.url}/helper/api/conversations").json()["count"] == 0
    harbour = shop.signed_in("olga@harbour.example").get(f"{shop.url}/helper/api/credits").json()
    assert harbour["usedMicros"] == 0  # each store pays for its own

    # An API token of Ada's (the engine's command, with the shop's e-mail login) acts in her store.
    token = shop.manage("create_token", "ada@corner.example", "--organization", shop.organization_slug("corner"))
    listed = requests.get(f"{shop.url}/helper/api/conversations", timeout=10,
                          headers={"Authorization": f"Bearer {token.strip()}"})
    assert listed.status_code == 200 and [c["id"] for c in listed.json()["results"]] == [conversation_id]

    # The shop's staff reads the conversation in the shop's admin: a trace stays.
    staff = shop.admin_session("staff@shop.example")
    page = staff.get(f"{shop.url}/admin/conversations/thread/{conversation_id}/change/")
    assert page.status_code == 200 and "Which orders are open?" in page.text
    assert ("conversation", conversation_id) in shop.staff_accesses()


def test_a_cancel_asked_in_the_shop_page_panel_waits_for_the_click(shop, model, chromium):  # noqa: F811
    context = chromium.new_context(base_url=shop.url)
    page = context.new_page()
    page.goto("/helper/")
    assert page.url.startswith(f"{shop.url}/sign-in/")  # the shop's own sign-in
    page.get_by_label("E-mail").fill("ada@corner.example")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.goto("/")
    page.get_by_role("button", name="Assistant", exact=True).click()
    panel = page.locator("[data-assistant-panel]")
    assert panel.is_visible()
    assert_accessible(page, "the shop's orders page, panel open")

    model.reply(tool_call("cancel_order", {"number": 1042}, "call_2"), answer("Confirm to cancel order 1042."))
    composer = panel.get_by_label("Message to the assistant")
    composer.fill("Cancel order 1042")
    composer.press("Enter")
    card = panel.locator("[data-card-id]")
    card.wait_for()
    assert "M. Keller" in card.inner_text()
    assert shop.order(1042) == ("open", 0)  # nothing happens before the click
    assert_accessible(page, "the shop's page with a pending card")

    card.get_by_role("button", name="Confirm").click()
    panel.locator(".card--confirmed").wait_for()
    assert shop.order(1042) == ("cancelled", 1)
    assert shop.order(1041) == ("open", 0)
    context.close()


def ended(turn: dict) -> dict | None:
    return turn if turn.get("status") in ("done", "failed", "cancelled") else None
