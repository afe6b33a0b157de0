"""Seeds the load test's database (run by bench/loadtest.sh with the stack's
environment): an organization with ample credits, one person with an API
token, notes to search, and HELD turns that wait on their model (running, no
worker has them). Prints JSON: {"token", "held"}. `finish ID,ID…` ends the held turns."""

import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from assistant import chat  # noqa: E402
from assistant.loop import claim_turn  # noqa: E402
from assistant.models import Turn  # noqa: E402
from assistant.turn.outcome import Outcome  # noqa: E402
from assistant.turn.settle import finish_turn  # noqa: E402
from assistant_engine.organizations.members import Member  # noqa: E402
from assistant_engine.organizations.models import Membership, Organization  # noqa: E402
from assistant_engine.organizations.tokens import create_token  # noqa: E402
from workspace.models import Note  # noqa: E402


def seed(held: int) -> dict:
    organization = Organization.objects.create(slug="loadtest", name="Load test", monthly_credits=10_000_000)
    user = get_user_model().objects.create_user(username="loadtest", password="loadtest-password")
    Membership.objects.create(organization=organization, user=user, role="member")
    for number in range(20):
        Note.objects.create(organization=organization, owner=user, title=f"Budget {number}",
                            body=f"The budget line {number}: travel, rooms, food.")
    member = Member(organization_id=organization.id, user_id=user.id, role="member", organization_slug="loadtest")
    _, token = create_token(member, days=1, name="load test")
    chat.enqueue_turn = lambda turn_id: None  # held turns: no worker may take them
    turns = []
    for _ in range(held):
        submitted = chat.chat_submit(member, message="Hold on", conversation_id=None)
        claim_turn(submitted.turn_id)
        turns.append(str(submitted.turn_id))
    return {"token": token, "held": turns}


def finish(turn_ids: list[str]) -> int:
    """Ends the held turns as a worker would: the end committed, then published."""
    return sum(finish_turn(turn_id, Outcome(Turn.Status.DONE), usage=None) for turn_id in turn_ids)


if __name__ == "__main__":
    if sys.argv[1] == "finish":
        print(json.dumps({"finished": finish(sys.argv[2].split(","))}))
    else:
        print(json.dumps(seed(int(sys.argv[1]))))
