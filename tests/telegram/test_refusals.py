"""A message that can't become a turn is answered with a message that says
why, and leaves nothing behind: credits exhausted, a reply already running,
the queue down."""

import pytest

from assistant.models import Turn
from assistant_engine.organizations.models import Organization
from assistant_engine.surfaces.telegram import handlers
from assistant_engine.surfaces.telegram.models import StreamedReply, TelegramLink
from conversations.models import Message, Thread
from credits.models import CreditAccount
from tests.maintenance.conftest import free_port, publishing_to
from tests.telegram.conftest import OLIVIA_TG, message_update
from tests.telegram.test_linking import linked, send

pytestmark = pytest.mark.django_db(transaction=True)


def test_credits_exhausted_is_a_message_and_no_conversation_is_left(owner, telegram_on):
    linked(owner)
    Organization.objects.filter(id=owner.organization.id).update(monthly_credits=0)
    assert "used its credits" in send(OLIVIA_TG, "Search my notes for x")[0]
    assert not Thread.objects.exists() and not Turn.objects.exists()


def test_a_reply_already_running_is_a_message(owner, telegram_on):
    link = linked(owner)
    outcome = handlers.handle_update(message_update(OLIVIA_TG, "Search my notes for x"))
    assert outcome.follow_turn is not None and ("typing", {"chat_id": OLIVIA_TG}) in outcome.calls
    assert StreamedReply.objects.get().chat_id == OLIVIA_TG
    thread = Thread.objects.get()
    assert thread.status == "responding" and TelegramLink.objects.get(id=link.id).thread_id == thread.id
    assert "still being written" in send(OLIVIA_TG, "And another")[0]
    assert Message.objects.filter(role="user").count() == 1


def test_the_queue_down_is_a_message_and_everything_is_undone(owner, telegram_on):
    linked(owner)
    with publishing_to(f"redis://127.0.0.1:{free_port()}/0"):
        assert "not available right now" in send(OLIVIA_TG, "Search my notes for x")[0]
    assert not Thread.objects.exists() and not Turn.objects.exists() and not StreamedReply.objects.exists()
    assert CreditAccount.objects.get(organization=owner.organization).reserved_micros == 0


def test_a_suspended_member_is_refused_and_lifting_restores_the_link(owner, telegram_on):
    from django.utils import timezone

    from assistant_engine.organizations.models import Membership

    linked(owner)
    Membership.objects.filter(user=owner.user).update(suspended_at=timezone.now(), suspended_reason="Left")

    assert "membership in this organization is suspended" in send(OLIVIA_TG, "Search my notes for x")[0]
    assert "membership in this organization is suspended" in send(OLIVIA_TG, "/credits")[0]
    assert not Thread.objects.exists() and not Turn.objects.exists()
    assert TelegramLink.objects.filter(user=owner.user).exists()  # the link stays

    Membership.objects.filter(user=owner.user).update(suspended_at=None, suspended_reason="")
    assert "credits left" in send(OLIVIA_TG, "/credits")[0]


def test_a_suspended_member_can_still_unlink_and_the_account_then_links_to_someone_else(owner, colleague,
                                                                                        telegram_on):
    """/unlink answered "suspended" (the reviewer's finding): the Telegram
    account, linked to a suspended membership, could be linked to no one else."""
    from django.utils import timezone

    from assistant_engine.organizations.models import Membership
    from assistant_engine.surfaces.telegram.linking import link_code_create

    linked(owner)
    Membership.objects.filter(user=owner.user).update(suspended_at=timezone.now(), suspended_reason="Left")

    assert "Unlinked from Acme" in send(OLIVIA_TG, "/unlink")[0]
    assert not TelegramLink.objects.exists()
    assert "Linked to" in send(OLIVIA_TG, f"/start {link_code_create(colleague.member).code}")[0]
    assert list(TelegramLink.objects.values_list("user_id", flat=True)) == [colleague.user.pk]


def test_a_member_past_their_cap_is_told_so_not_that_the_organization_ran_out(owner, telegram_on):
    from assistant_engine.organizations.models import Membership

    linked(owner)
    Membership.objects.filter(user=owner.user).update(monthly_cap_credits=1)

    assert "reached your monthly limit" in send(OLIVIA_TG, "Search my notes for x")[0]
    assert not Thread.objects.exists() and not Turn.objects.exists()
