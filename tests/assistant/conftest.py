import pytest

from assistant.chat import chat_submit
from assistant.loop import run_turn
from assistant.models import Turn
from workspace.models import Note

PRICED_OPTION = "bedrock-claude-haiku-4-5"  # $1 in / $5 out per million tokens


class Clock:
    """A monotonic clock the test moves: each reading advances `step` seconds."""

    def __init__(self, step: float = 0.0):
        self.now = 1000.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def submit(person, message="Hello", conversation_id=None, *, option=PRICED_OPTION) -> Turn:
    submitted = chat_submit(person.member, message=message, conversation_id=conversation_id)
    Turn.objects.filter(id=submitted.turn_id).update(model_option=option)
    return Turn.objects.get(id=submitted.turn_id)


def play(person, client, message="Hello", conversation_id=None, clock=None) -> Turn:
    turn = submit(person, message, conversation_id)
    run_turn(turn.id, client=client, clock=clock or Clock())
    turn.refresh_from_db()
    return turn


@pytest.fixture
def notes(owner, colleague, outsider):
    def note(person, title, body):
        return Note.objects.create(organization=person.organization, owner=person.user, title=title, body=body)

    return {
        "zurich": note(owner, "Zurich trip", "Train at 9, hotel near the lake."),
        "budget": note(owner, "Budget 2027", "Keep it under 10k."),
        "colleague": note(colleague, "Colleague Zurich plans", "Not yours."),
        "outsider": note(outsider, "Outsider Zurich", "Other organization."),
    }
