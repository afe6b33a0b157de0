"""The organization's change log in words: every kind of OrganizationChange,
written by its real service, said as a sentence (in English and German); an
operator's change and a detail of an unknown shape still read."""

import pytest
from django.utils import translation

from assistant_engine.organizations.instructions import organization_instructions_set
from assistant_engine.organizations.models import Membership, OrganizationChange
from assistant_engine.organizations.services import (
    change_record,
    default_cap_set,
    member_cap_set,
    membership_lift,
    membership_suspend,
)
from assistant_engine.providers.org_models import model_choose, provider_key_remove, provider_key_save
from assistant_engine.web.changes import SENTENCES, change_sentence
from tests.conftest import make_person

pytestmark = pytest.mark.django_db


def said(language="en"):
    with translation.override(language):
        return [change_sentence(change, {"offline": "Offline demo model"})
                for change in OrganizationChange.objects.order_by("id")]


def test_every_kind_has_a_sentence():
    assert set(SENTENCES) == set(OrganizationChange.Kind.values)


def test_each_change_written_by_its_service_reads_as_a_sentence(acme, owner):
    ada = make_person("ada", acme, role="admin")
    membership = Membership.objects.get(user=owner.user)
    model_choose(ada.member, option_id="offline")
    model_choose(ada.member, option_id="")
    provider_key_save(None, provider="infomaniak", plaintext="ik-secret-7f3a", organization_id=acme.id,
                      actor_id=ada.user.id, verified=True)
    provider_key_remove(ada.member, provider="infomaniak")
    member_cap_set(membership=membership, credits=20, actor_id=ada.user.id)
    member_cap_set(membership=membership, credits=None, actor_id=ada.user.id)
    default_cap_set(organization_id=acme.id, credits=50, actor_id=None)  # an operator's command
    default_cap_set(organization_id=acme.id, credits=None, actor_id=ada.user.id)
    membership_suspend(membership=membership, reason="Left: for good", actor_id=ada.user.id)
    membership_lift(membership=membership, actor_id=ada.user.id)
    organization_instructions_set(ada.member, text="Answer in French.")
    organization_instructions_set(ada.member, text="")

    assert said() == [
        "ada chose the model Offline demo model",
        "ada went back to the deployment's model",
        "ada saved a key for Infomaniak AI Services (Switzerland) (…7f3a)",
        "ada removed the key for Infomaniak AI Services (Switzerland)",
        "ada set olivia's monthly cap to 20 credits",
        "ada lifted olivia's monthly cap",
        "An operator set the default monthly cap to 50 credits",
        "ada lifted the default monthly cap",
        "ada suspended olivia (reason: Left: for good)",
        "ada lifted the suspension of olivia",
        "ada changed the organization's instructions (17 characters)",
        "ada cleared the organization's instructions",
    ]
    german = said("de")
    assert german[4] == "ada hat das Monatslimit von olivia auf 20 Credits gesetzt"
    assert german[6] == "Das Betreiberteam hat das Standard-Monatslimit auf 50 Credits gesetzt"


def test_a_detail_of_another_shape_still_reads(acme):
    change_record(organization_id=acme.id, actor_id=None, action=OrganizationChange.Kind.DEFAULT_CAP, detail="odd")
    change_record(organization_id=acme.id, actor_id=None, action="retired_kind", detail="x")
    assert said() == ["An operator: The default monthly cap set (odd)", "An operator: retired_kind (x)"]
