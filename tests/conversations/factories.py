import uuid
from datetime import UTC, datetime, timedelta

from conversations.models import Message, Thread, ToolCall

BASE_TIME = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def make_thread(person, *, title="A thread", updated_at=None, status=Thread.Status.IDLE, messages=0, calls=0):
    moment = updated_at or BASE_TIME
    thread = Thread.objects.create(
        organization=person.organization,
        user=person.user,
        title=title,
        created_at=moment,
        updated_at=moment,
        last_activity_at=moment,
        status=status,
    )
    for seq in range(messages):
        message = Message.objects.create(
            thread=thread, seq=seq, role="assistant" if seq % 2 else "user", content=f"message {seq}",
            created_at=moment,
        )
        for position in range(calls):
            ToolCall.objects.create(
                message=message, position=position, tool_use_id=f"toolu_{seq}_{position}", name="search_notes",
                input={"query": "x"}, result={"notes": []}, created_at=moment,
            )
    if messages:
        # Written around the services: the thread's counters as an upsert leaves them.
        thread.next_seq, thread.history_bytes = messages, None
        thread.save(update_fields=["next_seq", "history_bytes"])
    return thread


def stored_conversation(conversation_id=None, *, updated_at=None, title="Offline title", messages=None):
    moment = updated_at or BASE_TIME + timedelta(hours=1)
    return {
        "id": str(conversation_id or uuid.uuid4()),
        "title": title,
        "createdAt": iso(BASE_TIME),
        "updatedAt": iso(moment),
        "messages": messages
        if messages is not None
        else [
            {
                "id": str(uuid.uuid4()),
                "role": "user",
                "content": "Find my notes about Zurich",
                "createdAt": iso(BASE_TIME),
            },
            {
                "id": str(uuid.uuid4()),
                "role": "assistant",
                "content": "Here they are.",
                "createdAt": iso(BASE_TIME),
                "toolCalls": [
                    {
                        "id": "toolu_01",
                        "name": "search_notes",
                        "input": {"query": "Zurich"},
                        "result": {"notes": [{"id": 1, "title": "Zurich trip"}], "nested": [1, 2.5, None, "é"]},
                        "isError": False,
                    }
                ],
            },
        ],
    }
