"""The fixed cast: an owner, a colleague in the same organization, an outsider in
another organization, and an anonymous client. Every endpoint is tried by each.
"""

from dataclasses import dataclass
from functools import cached_property

import pytest
from django.contrib.auth import get_user_model
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.models import Membership, Organization
from assistant_engine.organizations.tokens import create_token

# No deadline per example: on two busy cores a first time-zone load or a
# database round trip takes longer than Hypothesis's 200 ms, a failure of the
# machine, not of the property (a property test failed so under load).
hypothesis_settings.register_profile("suite", deadline=None)
hypothesis_settings.load_profile("suite")


@dataclass
class Person:
    user: object
    organization: Organization
    member: Member
    client: APIClient
    token: str = ""  # the API token of `client` (hashed in the database; only this copy is clear)

    @cached_property
    def mcp_token(self) -> str:
        """An MCP-only token of the person's (what /mcp accepts), made on first use."""
        return create_token(self.member, mcp_only=True)[1]


def make_person(username: str, organization: Organization, role: str = "member") -> Person:
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    membership = Membership.objects.create(organization=organization, user=user, role=role)
    member = Member(
        organization_id=organization.id, user_id=user.id, role=membership.role, organization_slug=organization.slug
    )
    _, token = create_token(member)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return Person(user=user, organization=organization, member=member, client=client, token=token)


def token_just_used(person: Person) -> None:
    """As after a request a moment ago: the token's last use is then not written
    again for a minute (organizations/tokens.py), so a pinned count of a
    request's queries holds whichever request comes first."""
    from django.utils import timezone

    from assistant_engine.organizations.models import ApiToken

    ApiToken.objects.filter(user=person.user).update(last_used_at=timezone.now())


@pytest.fixture
def acme(db) -> Organization:
    return Organization.objects.create(slug="acme", name="Acme", monthly_credits=1000)


@pytest.fixture
def full_conversations(acme) -> None:
    """Acme under the hgdc seed's choice: a conversation is full at ASSISTANT_HISTORY_BYTES."""
    Organization.objects.filter(pk=acme.pk).update(history_mode=Organization.HistoryMode.FULL)


@pytest.fixture
def globex(db) -> Organization:
    return Organization.objects.create(slug="globex", name="Globex", monthly_credits=1000)


@pytest.fixture
def owner(acme) -> Person:
    return make_person("olivia", acme)


@pytest.fixture
def colleague(acme) -> Person:
    return make_person("colin", acme)


@pytest.fixture
def outsider(globex) -> Person:
    return make_person("otto", globex)


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()
