"""The pages with Django's test client: who sees what, the organization
switcher, the header, the data page, and how stored states are shown."""

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from assistant.models import ActionCard, Turn
from assistant.proposals import TRIFECTA_WARNING
from assistant_engine.organizations.api import SESSION_ORGANIZATION_KEY
from assistant_engine.organizations.models import Membership, Organization
from conversations.models import Message, Thread, ToolCall
from tests.web.conftest import make_card, make_conversation, web_client


def page(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, response.content[:500]
    return response


def text_of(response) -> str:
    return response.content.decode()


# --- Anonymous ---------------------------------------------------------------


@pytest.mark.parametrize("url", ["/", "/data/", "/organizations/", "/c/00000000-0000-0000-0000-000000000001/"])
def test_anonymous_pages_redirect_to_login(db, url):
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


@pytest.mark.parametrize("url", [
    "/conversations/list", "/c/00000000-0000-0000-0000-000000000001/messages",
    "/cards/00000000-0000-0000-0000-000000000001/",
])
def test_anonymous_fragments_answer_401(db, url):
    assert Client().get(url).status_code == 401


def test_login_page_has_labelled_fields(db):
    html = text_of(page(Client(), "/login/"))
    assert '<label for="id_username">' in html and '<label for="id_password">' in html
    assert 'autocomplete="current-password"' in html


def test_login_leads_to_the_chat_not_to_the_api(owner):
    response = Client().post("/login/", {"username": "olivia", "password": "pw-olivia"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_login_goes_back_to_next(owner):
    thread = make_conversation(owner)
    response = Client().post("/login/", {"username": "olivia", "password": "pw-olivia", "next": f"/c/{thread.id}/"})
    assert response["Location"] == f"/c/{thread.id}/"


def test_login_refuses_an_offsite_next(owner):
    response = Client().post("/login/", {"username": "olivia", "password": "pw-olivia",
                                         "next": "https://evil.example/"})
    assert response["Location"] == "/"


def test_a_wrong_password_is_explained(owner):
    response = Client().post("/login/", {"username": "olivia", "password": "wrong"})
    assert response.status_code == 200
    assert 'role="alert"' in text_of(response)


def test_logout_is_a_post_and_leads_to_login(owner_web):
    response = owner_web.post("/logout/")
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert owner_web.get("/").status_code == 302


# --- The cast on a conversation ------------------------------------------------


def test_owner_sees_their_conversation_with_tool_calls(owner, owner_web):
    thread = make_conversation(owner)
    html = text_of(page(owner_web, f"/c/{thread.id}/"))
    assert "Trip to Zurich" in html
    assert "<strong>trip</strong>" in html  # the person's Markdown, rendered
    assert "Here is the plan." in html
    assert 'data-tool-call-id="toolu_1"' in html and "Search notes" in html
    assert "&quot;query&quot;: &quot;zurich&quot;" in html  # the raw input, escaped
    assert f'data-conversation-id="{thread.id}"' in html


@pytest.mark.parametrize("who", ["colleague_web", "outsider_web"])
@pytest.mark.parametrize("suffix", ["", "messages"])
def test_others_get_404_on_the_owners_conversation(owner, who, suffix, request):
    thread = make_conversation(owner)
    client = request.getfixturevalue(who)
    response = client.get(f"/c/{thread.id}/{suffix}")
    assert response.status_code == 404
    assert "Trip to Zurich" not in text_of(response)


@pytest.mark.parametrize("who", ["colleague_web", "outsider_web"])
def test_others_get_404_on_the_owners_card(owner, who, request):
    card = make_card(owner, make_conversation(owner))
    assert request.getfixturevalue(who).get(f"/cards/{card.id}/").status_code == 404


@pytest.mark.parametrize("who", ["colleague", "outsider"])
def test_the_sidebar_lists_only_ones_own_conversations(owner, colleague, outsider, who):
    make_conversation(owner, title="Owner's secret plan")
    other = {"colleague": colleague, "outsider": outsider}[who]
    make_conversation(other, title="Their own thread")
    html = text_of(page(web_client(other), "/"))
    assert "Their own thread" in html and "Owner's secret plan" not in html


def test_the_sidebar_is_newest_first_with_relative_dates(owner, owner_web):
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    make_conversation(owner, title="Old one", moment=now - timedelta(days=3))
    make_conversation(owner, title="Fresh one", moment=now)
    html = text_of(page(owner_web, "/conversations/list"))
    assert html.index("Fresh one") < html.index("Old one")
    assert "Just now" in html and "3 days ago" in html


def test_the_sidebar_pages_older_conversations(owner, owner_web, settings):
    from assistant_engine.web import selectors

    for number in range(selectors.SIDEBAR_PAGE + 1):
        make_conversation(owner, title=f"Conversation {number}")
    first = text_of(page(owner_web, "/conversations/list"))
    assert first.count("data-conversation-item=") == selectors.SIDEBAR_PAGE
    assert 'data-sidebar-more="2"' in first
    both = text_of(page(owner_web, "/conversations/list?pages=2"))
    assert both.count("data-conversation-item=") == selectors.SIDEBAR_PAGE + 1
    assert "data-sidebar-more" not in both


def test_an_unknown_conversation_is_404(owner_web):
    assert owner_web.get("/c/00000000-0000-0000-0000-000000000001/").status_code == 404


def test_the_conversation_page_reads_a_bounded_number_of_queries(owner, owner_web, django_assert_max_num_queries):
    thread = make_conversation(owner)
    for seq in range(2, 30):
        message = Message.objects.create(thread=thread, seq=seq, role="assistant", content=f"m{seq}",
                                         created_at=thread.created_at)
        ToolCall.objects.create(message=message, position=0, tool_use_id=f"t{seq}", name="search_notes",
                                input={}, result={}, created_at=thread.created_at)
    make_card(owner, thread)
    # 15, the messages' files, and the model menu by the composer (the organization's own keys, issue 25).
    with django_assert_max_num_queries(17):
        page(owner_web, f"/c/{thread.id}/")


# --- Running, failed and stopped turns, cards --------------------------------


def test_a_running_turn_is_handed_to_the_page_script(owner, owner_web):
    thread = make_conversation(owner, status=Thread.Status.RESPONDING)
    turn = Turn.objects.create(thread=thread, organization=owner.organization, user=owner.user,
                               model_option="offline", status=Turn.Status.RUNNING)
    html = text_of(page(owner_web, f"/c/{thread.id}/"))
    assert f'data-running-turn="{turn.id}"' in html
    assert "Replying…" in html  # in the sidebar


def test_a_failed_reply_says_so(owner, owner_web):
    thread = make_conversation(owner)
    Message.objects.filter(thread=thread, role="assistant").update(
        status=Message.Status.FAILED, notice="The model provider did not answer. Please try again.")
    html = text_of(page(owner_web, f"/c/{thread.id}/messages"))
    assert "notice--failed" in html and "This reply failed." in html
    assert "The model provider did not answer." in html


def test_a_reply_stopped_at_a_bound_says_so(owner, owner_web):
    thread = make_conversation(owner)
    Message.objects.filter(thread=thread, role="assistant").update(notice="This reply stopped at a limit: 25 steps.")
    html = text_of(page(owner_web, f"/c/{thread.id}/messages"))
    assert "This reply stopped early." in html and "25 steps" in html


def test_a_pending_card_has_confirm_cancel_and_its_warning(owner, owner_web):
    thread = make_conversation(owner)
    card = make_card(owner, thread, warning=True)
    html = text_of(page(owner_web, f"/c/{thread.id}/"))
    assert f'data-card-id="{card.id}"' in html and f'data-card-hash="{"a" * 64}"' in html
    assert 'data-card-action="confirm"' in html and 'data-card-action="cancel"' in html
    assert TRIFECTA_WARNING in html
    assert "Expires in 23 h" in html


@pytest.mark.parametrize(("status", "words"), [
    (ActionCard.Status.CONFIRMED, "you confirmed it"),
    (ActionCard.Status.CANCELLED, "You cancelled it"),
    (ActionCard.Status.EXPIRED, "It expired"),
    (ActionCard.Status.FAILED, "could not be carried out"),
])
def test_a_decided_card_shows_its_outcome_and_no_buttons(owner, owner_web, status, words):
    card = make_card(owner, make_conversation(owner), status=status)
    html = text_of(page(owner_web, f"/cards/{card.id}/"))
    assert words in html and "data-card-action" not in html


def test_application_events_are_shown_as_sentences(owner, owner_web):
    from assistant.app_events import render_events

    thread = make_conversation(owner)
    block = render_events([{"kind": "confirmed", "card_id": "x", "tool_name": "delete_note", "summary": "s"}])
    # The application writes an events block with the turn it opened (an
    # uploaded one has none and is not told as such: test_uploaded_events.py).
    Message.objects.create(thread=thread, seq=2, role="event", content=block, created_at=thread.created_at,
                           turn_id=uuid.uuid4())
    html = text_of(page(owner_web, f"/c/{thread.id}/messages"))
    assert "The assistant was told that you confirmed “Delete a note”." in html
    assert "application_events" not in html


def test_a_long_tool_result_starts_collapsed(owner, owner_web):
    thread = make_conversation(owner)
    ToolCall.objects.filter(message__thread=thread).update(result={"text": "x" * 5000})
    html = text_of(page(owner_web, f"/c/{thread.id}/messages"))
    assert "result is-collapsed" in html and "data-result-toggle" in html


def test_markup_in_messages_and_tool_results_is_text(owner, owner_web):
    payload = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    thread = make_conversation(owner, content=payload, reply=payload)
    ToolCall.objects.filter(message__thread=thread).update(result={"title": payload}, input={"q": payload})
    make_card(owner, thread, description=payload)
    html = text_of(page(owner_web, f"/c/{thread.id}/"))
    assert "<img src=x" not in html and "<script>alert(2)" not in html
    assert "&lt;img src=x onerror=" in html


# --- Header, organizations, data page ------------------------------------------


def test_the_header_shows_credits_and_where_data_is_processed(owner, owner_web):
    html = text_of(page(owner_web, "/"))
    assert "<span data-credits-value>1000</span>" in html
    assert "Offline demo model" in html
    assert 'data-organization="acme"' in html


def test_under_a_cap_the_pill_counts_the_persons_credits(owner, owner_web):
    """Once "1000 credits left" (the organization's) for a person capped at 25."""
    from credits.services import credits_reserve, credits_settle
    from tests.credits.support import new_turn

    Membership.objects.filter(user=owner.user).update(monthly_cap_credits=25)
    turn = new_turn()
    credits_reserve(owner.member, turn_id=turn)
    credits_settle(turn_id=turn, cost_micros=130_000)  # 13 credits
    html = " ".join(text_of(page(owner_web, "/")).split())
    assert "<span data-credits-value>12</span> of your 25&nbsp;credits left this month" in html
    assert "pill--empty" not in html
    Membership.objects.filter(user=owner.user).update(monthly_cap_credits=13)
    assert "pill--empty" in text_of(page(owner_web, "/"))


def test_exhausted_credits_are_explained_up_front(owner, owner_web):
    Organization.objects.filter(id=owner.organization.id).update(monthly_credits=0)
    html = text_of(page(owner_web, "/"))
    assert "used all its credits for this month" in html and "pill--empty" in html


def test_pages_send_a_strict_content_security_policy(owner_web):
    policy = page(owner_web, "/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "img-src 'self' data:" in policy and "unsafe" not in policy


def test_a_single_organization_has_no_switcher(owner_web):
    assert "org-switch" not in text_of(page(owner_web, "/"))


@pytest.fixture
def traveller(owner, globex):
    """Olivia, also a member of Globex."""
    Membership.objects.create(organization=globex, user=owner.user)
    return owner


def test_a_person_of_several_organizations_chooses_first(traveller):
    client = web_client(traveller)
    response = client.get("/")
    assert response.status_code == 302 and response["Location"] == "/organizations/?next=%2F"
    html = text_of(page(client, "/organizations/"))
    assert "Acme" in html and "Globex" in html


def test_choosing_an_organization_scopes_the_pages_and_the_api(traveller, globex):
    make_conversation(traveller, title="An Acme thread")
    client = web_client(traveller)
    response = client.post("/organizations/", {"organization": "globex", "next": "/"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.session[SESSION_ORGANIZATION_KEY] == "globex"
    html = text_of(page(client, "/"))
    assert "An Acme thread" not in html
    assert 'id="org-select"' in html and '<option value="globex" selected>' in html
    # The API without a header follows the session's choice too (the SSE stream needs it).
    assert client.get("/api/conversations").json()["count"] == 0
    client.post("/organizations/", {"organization": "acme"})
    assert "An Acme thread" in text_of(page(client, "/"))


def test_switching_organization_does_not_reopen_a_conversation_of_the_other(traveller):
    client = web_client(traveller)
    client.post("/organizations/", {"organization": "acme"})
    thread = make_conversation(traveller)
    response = client.post("/organizations/", {"organization": "globex", "next": f"/c/{thread.id}/"})
    assert response["Location"] == "/"


def test_choosing_an_organization_that_is_not_yours_is_404(traveller, db):
    Organization.objects.create(slug="initech", name="Initech")
    client = web_client(traveller)
    assert client.post("/organizations/", {"organization": "initech"}).status_code == 404
    assert SESSION_ORGANIZATION_KEY not in client.session


def test_an_offsite_next_is_ignored_when_choosing(traveller):
    response = web_client(traveller).post("/organizations/", {"organization": "acme", "next": "https://evil.example"})
    assert response["Location"] == "/"


def test_a_stale_organization_choice_is_forgotten(owner, owner_web, globex):
    session = owner_web.session
    session[SESSION_ORGANIZATION_KEY] = "globex"  # not, or no longer, hers
    session.save()
    page(owner_web, "/")
    assert owner_web.session[SESSION_ORGANIZATION_KEY] == "acme"


def test_a_person_without_organization_is_told_so(db):
    user = get_user_model().objects.create_user(username="nomad", password="pw")
    client = Client()
    client.force_login(user)
    response = client.get("/")
    assert response.status_code == 403 and "not in an organization" in text_of(response)


def test_the_data_page_says_what_where_how_long_and_exports(owner_web):
    html = text_of(page(owner_web, "/data/"))
    for words in ("What is stored", "Where it is processed", "How long it is kept", "Offline demo model",
                  "90 days", "24 hours", "Tool calls", "Confirmation cards"):
        assert words in html
    assert 'href="/api/me/export" download' in html


@pytest.mark.parametrize(("model", "environment", "label", "detail"), [
    ("", {}, "Offline demo model", "runs inside this application"),
    ("infomaniak-qwen3", {"INFOMANIAK_AI_TOKEN": "t", "INFOMANIAK_AI_PRODUCT_ID": "1"},
     "Processed in Switzerland", "Infomaniak"),
    ("bedrock-claude-haiku-4-5", {"BEDROCK_API_KEY": "k", "BEDROCK_REGION": "eu-central-2"},
     "Processed in the EU", "European Union"),
])
def test_the_header_and_data_page_name_the_processing_place(owner_web, settings, model, environment, label, detail):
    settings.ASSISTANT_MODEL = model
    for name, value in environment.items():
        setattr(settings, name, value)
    assert label in text_of(page(owner_web, "/"))
    html = text_of(page(owner_web, "/data/"))
    assert label in html and detail in html


def test_the_data_page_follows_the_retention_setting(owner_web, settings):
    settings.ASSISTANT_IDLE_PURGE_DAYS = 30
    assert "<strong>30 days</strong>" in text_of(page(owner_web, "/data/"))


# --- Staff access on the data page -------------------------------------------------


def record(staff, person, kind, object_id=""):
    from assistant_engine.organizations.access_log import staff_access_record

    return staff_access_record(staff=staff, kind=kind, person_id=person.user.pk,
                               organization_id=person.organization.pk, object_id=object_id, path="/admin/x/")


def test_the_data_page_says_when_staff_looked_without_naming_them(owner, colleague, owner_web):
    staff = get_user_model().objects.create_user(username="moderator-max", is_staff=True)
    thread = make_conversation(owner, title="Trip to Zurich")
    record(staff, owner, "conversation", thread.pk)
    record(staff, owner, "export")
    record(staff, colleague, "conversation", make_conversation(colleague, title="Colin's secret").pk)

    html = text_of(page(owner_web, "/data/"))

    section = html[html.index("data-staff-accesses"):html.index('aria-labelledby="export"')]
    assert section.count("data-staff-access=") == 2
    assert section.index("downloaded an export of your data") < section.index(
        "a staff member opened your conversation “Trip to Zurich”")
    assert "moderator-max" not in html and "Colin" not in html


def test_the_data_page_says_when_a_list_of_conversations_showed_some(owner, owner_web):
    """A list page's row has no object id: the page said so once a 500 (the
    empty id looked up as a conversation's UUID)."""
    staff = get_user_model().objects.create_user(username="moderator-max", is_staff=True)
    record(staff, owner, "conversation", make_conversation(owner, title="Trip to Zurich").pk)
    record(staff, owner, "conversation")

    html = text_of(page(owner_web, "/data/"))

    assert "a staff member saw a list that showed some of your data" in html
    assert "a staff member opened your conversation “Trip to Zurich”" in html


def test_the_data_page_says_when_no_staff_looked(owner_web):
    html = text_of(page(owner_web, "/data/"))
    assert "No staff member has looked at your data." in html and "data-staff-access=" not in html


def test_the_data_page_reads_the_staff_accesses_in_a_fixed_number_of_queries(owner, owner_web,
                                                                             django_assert_num_queries):
    staff = get_user_model().objects.create_user(username="moderator-max", is_staff=True)
    record(staff, owner, "conversation", make_conversation(owner, title="First").pk)
    page(owner_web, "/data/")
    with CaptureQueriesContext(connection) as one:
        page(owner_web, "/data/")
    for number in range(10):
        record(staff, owner, "conversation", make_conversation(owner, title=f"More {number}").pk)
        record(staff, owner, "card", number)

    with django_assert_num_queries(len(one)):
        html = text_of(page(owner_web, "/data/"))

    assert html.count("data-staff-access=") == 21 and "More 9" in html
