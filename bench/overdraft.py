"""The overdraft scenario of issue 10 (`python bench/overdraft.py [SOURCE_TREE]`).

An organization with 3 credits, a conversation of about 650 KB, a priced
model option (Haiku) and a model that calls `search_notes` 25 times, each call
billed 170,000 input and 100 output tokens. Prints how many calls were made
and what was charged. Runs on a throw-away SQLite database; give it another
source tree (an older commit extracted with `git archive`) to compare.
"""

import os
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)
WORKDIR = tempfile.mkdtemp(prefix="overdraft-")
os.environ.update(DATABASE_URL=f"sqlite:///{WORKDIR}/s.sqlite3", SECRET_KEY="bench-only", DEBUG="0",
                  RUN_DIR=WORKDIR, LOG_LEVEL="ERROR", DJANGO_SETTINGS_MODULE="config.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.utils import timezone  # noqa: E402

import assistant.chat  # noqa: E402
from assistant.loop import run_turn  # noqa: E402
from assistant.models import Turn  # noqa: E402
from assistant_engine.organizations.members import Member  # noqa: E402
from assistant_engine.organizations.models import Membership, Organization  # noqa: E402
from assistant_engine.providers.clients.base import Usage  # noqa: E402
from conversations.models import Message, Thread  # noqa: E402
from credits.models import CreditAccount  # noqa: E402
from tests.fakes.scripted import ScriptedClient, call  # noqa: E402


def main() -> None:
    call_command("migrate", verbosity=0)
    assistant.chat.enqueue_turn = lambda turn_id: None  # the turn runs here
    organization = Organization.objects.create(slug="s", name="S", monthly_credits=3)
    user = get_user_model().objects.create_user(username="s")
    Membership.objects.create(organization=organization, user=user)
    member = Member(organization.id, user.id, "member", "s")
    now = timezone.now()
    thread = Thread.objects.create(organization=organization, user=user, created_at=now, updated_at=now,
                                   last_activity_at=now)
    Message.objects.bulk_create([
        Message(client_id=uuid.uuid4(), thread=thread, seq=i,
                role="user" if i % 2 == 0 else "assistant", content="x" * 9_900,
                created_at=now)
        for i in range(65)
    ])
    if hasattr(Thread, "next_seq"):  # as an upload leaves it
        Thread.objects.filter(id=thread.id).update(next_seq=65, history_bytes=None)
    submitted = assistant.chat.chat_submit(member, message="Search my notes", conversation_id=thread.id)
    Turn.objects.filter(id=submitted.turn_id).update(model_option="bedrock-claude-haiku-4-5")
    client = ScriptedClient(*[call(("search_notes", {"query": "budget"}), usage=Usage(170_000, 100))] * 25)
    run_turn(submitted.turn_id, client=client)
    turn = Turn.objects.get(id=submitted.turn_id)
    account = CreditAccount.objects.get(organization=organization)
    print(f"calls made {len(client.requests)}, turn {turn.status}/{turn.failure_kind}, "
          f"charged {turn.cost_micros} micros; account granted {account.granted_micros}, "
          f"used {account.used_micros}, reserved {account.reserved_micros}")


if __name__ == "__main__":
    main()
