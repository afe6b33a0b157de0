"""Which models a member may give a conversation is the organization's to say:
by default its own model only; its admins may open it to every model processed
where the organization's is, or to every model the deployment allows. The
API, the pages and the worker check it; a change is in the change log.

The attacker's review: an organization that chose a model processed in
Switzerland had a plain member run a turn on a US model, billed to it."""

import pytest

from assistant.chat import chat_submit
from assistant.loop import run_turn
from assistant.models import Turn
from assistant_engine.organizations.models import Organization, OrganizationChange
from assistant_engine.providers.org_models import NotOrganizationAdmin, member_models_set
from conversations.models import Message, Thread
from tests.assistant.conftest import Clock
from tests.conftest import make_person
from tests.fakes.scripted import ScriptedClient
from tests.web.conftest import web_client

SWISS, SWISS_TOO, EU, US = "infomaniak-qwen3", "infomaniak-mistral3", "bedrock-claude-haiku-4-5", \
    "anthropic-claude-haiku-4-5"


@pytest.fixture
def deployment(settings, acme):
    """Swiss, EU and US options all usable here (US processing allowed by the
    operator); the organization chose a Swiss model."""
    settings.DEBUG = False
    settings.ASSISTANT_MODEL = "offline"
    settings.INFOMANIAK_AI_TOKEN, settings.INFOMANIAK_AI_PRODUCT_ID = "ik", "42"
    settings.BEDROCK_API_KEY, settings.BEDROCK_REGION = "br", "eu-central-2"
    settings.ANTHROPIC_API_KEY, settings.ASSISTANT_ALLOW_US_PROCESSING = "sk", True
    settings.ASSISTANT_MODEL_OPTIONS = []
    Organization.objects.filter(pk=acme.pk).update(model_option=SWISS)
    return settings


@pytest.fixture
def admin(acme):
    return make_person("ada", acme, role="admin")


def listed(person) -> list[str]:
    return [option["id"] for option in person.client.get("/api/me/models").json()]


def chat_on(person, model):
    return person.client.post("/api/chat", {"message": "Hi", "model": model}, format="json")


def rule(acme, value):
    Organization.objects.filter(pk=acme.pk).update(member_models=value)


def test_by_default_a_member_gets_the_organizations_model_only(owner, deployment):
    assert listed(owner) == [SWISS]
    for model in (US, EU, SWISS_TOO):
        response = chat_on(owner, model)
        assert response.status_code == 422 and response.json()["code"] == "model_not_allowed", model
    assert not Thread.objects.exists() and not Message.objects.exists() and not Turn.objects.exists()
    assert chat_on(owner, "").status_code == 202 and chat_on(owner, SWISS).status_code == 202


def test_the_processing_location_rule_allows_the_swiss_models_only(owner, acme, deployment):
    rule(acme, "location")
    assert listed(owner) == [SWISS, SWISS_TOO, "infomaniak-gpt-oss-120b", "infomaniak-apertus-70b"]
    assert chat_on(owner, SWISS_TOO).status_code == 202
    assert chat_on(owner, US).json()["code"] == "model_not_allowed"
    assert chat_on(owner, EU).json()["code"] == "model_not_allowed"


def test_the_any_rule_allows_every_model_the_deployment_allows(owner, acme, deployment):
    rule(acme, "any")
    assert {SWISS, EU, US} <= set(listed(owner))
    assert chat_on(owner, US).status_code == 202


def test_patching_a_conversations_model_follows_the_rule(owner, acme, deployment):
    conversation = chat_on(owner, "").json()["conversationId"]
    url = f"/api/conversations/{conversation}"
    response = owner.client.patch(url, {"model": US}, format="json")
    assert response.status_code == 422 and response.json()["code"] == "model_not_allowed"
    rule(acme, "any")
    assert owner.client.patch(url, {"model": US}, format="json").status_code == 200


def test_the_worker_refuses_a_model_the_rule_no_longer_allows(owner, acme, deployment):
    """Chosen while the organization allowed any model; the admin narrowed the rule before the turn ran."""
    rule(acme, "any")
    submitted = chat_submit(owner.member, message="Hi", conversation_id=None, model=US)
    rule(acme, "organization")
    client = ScriptedClient()
    run_turn(submitted.turn_id, client=client, clock=Clock())
    turn = Turn.objects.get(id=submitted.turn_id)
    assert (turn.status, turn.failure_kind) == (Turn.Status.FAILED, Turn.FailureKind.MODEL)
    assert client.requests == []


def test_only_an_admin_sets_the_rule_and_the_change_is_logged_and_shown(admin, owner, acme, deployment):
    with pytest.raises(NotOrganizationAdmin):
        member_models_set(owner.member, rule="any")
    assert web_client(owner).post("/organization/member-models", {"rule": "any"}).status_code == 404
    page = web_client(admin)
    assert page.post("/organization/member-models", {"rule": "location"}).status_code == 302
    refused = page.post("/organization/member-models", {"rule": "everything"})
    assert refused.status_code == 400 and "Choose one of the rules." in refused.content.decode()
    assert Organization.objects.get(pk=acme.pk).member_models == "location"
    [change] = OrganizationChange.objects.filter(action=OrganizationChange.Kind.MEMBER_MODELS)
    assert (change.detail, change.actor_id) == ("location", admin.user.id)
    html = page.get("/organization/").content.decode()
    assert '<option value="location" selected>' in html
    assert "ada let members choose any model processed where the organization&#x27;s is" in html


def test_an_outsiders_admin_sets_only_their_own_organizations_rule(outsider, acme, globex, deployment):
    outsider_admin = make_person("oscar", globex, role="admin")
    assert web_client(outsider_admin).post("/organization/member-models", {"rule": "any"}).status_code == 302
    assert Organization.objects.get(pk=acme.pk).member_models == "organization"
    assert Organization.objects.get(pk=globex.pk).member_models == "any"
