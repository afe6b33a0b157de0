"""The conversations' part of a person's export and erasure (organizations.personal_data)."""

import base64
import json
from collections.abc import Callable, Iterator

from django.db.models import Prefetch, Q

from assistant_engine.organizations.members import Member
from assistant_engine.organizations.personal_data import ErasureBlocked, delete_in_order, iso
from conversations.deletion import threads_delete
from conversations.feedback import feedback_json
from conversations.files import file_json, files_of
from conversations.models import Attachment, Message, MessageFeedback, Thread, ToolCall
from conversations.selectors import messages_prefetch, threads_of
from conversations.serializers import conversation_to_json

ExportPrefetch = Callable[[Member], Prefetch]

# Prefetches the apps above add to the exported threads, by name: the
# conversation extras they registered (conversations.extensions) then read
# what was loaded for all the threads at once, not one query per thread.
_export_prefetches: dict[str, ExportPrefetch] = {}


def register_export_prefetch(name: str, fn: ExportPrefetch) -> None:
    """The export's threads get `fn(member)` prefetched. Registering a name
    again replaces it, so a repeated ready() is harmless."""
    _export_prefetches[name] = fn


# Conversations exported per query batch: memory holds this many (with their
# messages), however many the person has.
EXPORT_BATCH_THREADS = 20


def export_conversations(member: Member) -> Iterator[dict]:
    """Every conversation of the person, as the API shows it (with the extras
    other apps register, such as cards), plus what the API leaves out: each
    message's order, turn and notice, each tool call's times. Read
    EXPORT_BATCH_THREADS at a time (a fixed number of queries per batch) and
    yielded one by one, so the streamed export stays flat in memory."""
    after: tuple | None = None
    while True:
        threads = _export_batch(member, after)
        for thread in threads:
            yield _exported_thread(thread)
        if len(threads) < EXPORT_BATCH_THREADS:
            return
        after = (threads[-1].created_at, threads[-1].id)
        _release(threads)


def _release(threads: list[Thread]) -> None:
    """Prefetching links each message to its thread (and each call to its
    message) both ways: reference cycles that only the garbage collector frees,
    at its own pace, so batches would pile up between its passes. Breaking the
    links frees a batch as soon as the next one is read."""
    for thread in threads:
        for message in thread.messages.all():
            message._prefetched_objects_cache.clear()
        thread._prefetched_objects_cache.clear()
        thread.__dict__.clear()


def _export_batch(member: Member, after: tuple | None) -> list[Thread]:
    threads = threads_of(member)
    if after is not None:  # keyset: the next threads by (created_at, id)
        threads = threads.filter(Q(created_at__gt=after[0]) | Q(created_at=after[0], id__gt=after[1]))
    return list(
        threads.order_by("created_at", "id")
        .prefetch_related(
            messages_prefetch(file_data=True),
            *(prefetch(member) for prefetch in _export_prefetches.values()),
        )[:EXPORT_BATCH_THREADS]
    )


def _exported_thread(thread: Thread) -> dict:
    document = conversation_to_json(thread)
    document["lastActivityAt"] = iso(thread.last_activity_at)
    _add_client_document(document, thread)
    for data, message in zip(document["messages"], thread.messages.all(), strict=True):
        data.update(seq=message.seq, turnId=str(message.turn_id) if message.turn_id else None,
                    notice=message.notice)
        _add_client_document(data, message)
        for call_data, call in zip(data["toolCalls"], message.tool_calls.all(), strict=True):
            call_data.update(createdAt=iso(call.created_at), finishedAt=iso(call.finished_at))
        for file_data, attachment in zip(data.get("attachments", []), message.attachments.all(), strict=True):
            file_data.update(createdAt=iso(attachment.created_at), content=b64(attachment.content()))
    return document


def export_feedback(member: Member) -> list[dict]:
    """The person's 👍/👎 on replies, with the conversation each belongs to."""
    rows = (MessageFeedback.objects.filter(message__thread__in=threads_of(member))
            .select_related("message").order_by("created_at", "id"))
    return [{**feedback_json(row), "conversationId": str(row.message.thread_id)} for row in rows]


def export_unattached_files(member: Member) -> list[dict]:
    """Uploads no message has taken yet (kept a day): the person's data too."""
    return [
        {**file_json(attachment), "createdAt": iso(attachment.created_at), "content": b64(attachment.content())}
        for attachment in files_of(member).filter(message__isnull=True).order_by("created_at", "id")
    ]


def b64(data) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _add_client_document(data: dict, row) -> None:
    """What an esm-ai-memory client (/ai/) stored of its own: its id and its
    document as sent (fields the server does not read are personal data too)."""
    if row.external_id:
        data["clientId"] = row.external_id
    if row.client_json:
        data["clientDocument"] = json.loads(row.client_json)


def erase_conversations(user, batch_size: int) -> int:
    """Up to `batch_size` rows of the person's conversations, smallest first
    (feedback and tool calls, then messages, then threads), in every organization. A thread
    that is responding is left until its turn ends (ErasureBlocked)."""
    erasable = Thread.objects.filter(user=user).exclude(status=Thread.Status.RESPONDING)
    # Starting from the person's own conversations (a list of their ids), the
    # messages and tool calls are found through their thread's index.
    thread_ids = list(erasable.values_list("pk", flat=True))
    deleted = delete_in_order((
        MessageFeedback.objects.filter(message__thread_id__in=thread_ids),
        Attachment.objects.filter(user=user, message__isnull=True),
        Attachment.objects.filter(message__thread_id__in=thread_ids),
        ToolCall.objects.filter(message__thread_id__in=thread_ids),
        Message.objects.filter(thread_id__in=thread_ids),
    ), batch_size)
    if deleted < batch_size:
        # Last, the threads themselves, a few per statement: their cascades
        # (cards, summaries, turns set null) then read the thread's index.
        deleted += threads_delete(thread_ids[: batch_size - deleted])[0]
    if deleted >= batch_size:
        return deleted
    if Thread.objects.filter(user=user, status=Thread.Status.RESPONDING).exists():
        raise ErasureBlocked(deleted)
    return deleted


def register() -> None:
    from assistant_engine.organizations.personal_data import register_eraser, register_exporter

    register_exporter("conversations", export_conversations)
    register_exporter("feedback", export_feedback)
    register_exporter("files", export_unattached_files)
    register_eraser("conversations", erase_conversations, order=20)
