"""The conversations' part of a person's export and erasure (organizations.personal_data)."""

import base64
import json
from collections.abc import Callable

from django.db.models import Prefetch

from conversations.files import file_json, files_of
from conversations.models import Attachment, Message, Thread, ToolCall
from conversations.selectors import messages_prefetch, threads_of
from conversations.serializers import conversation_to_json
from organizations.members import Member
from organizations.personal_data import ErasureBlocked, delete_in_order, iso

ExportPrefetch = Callable[[Member], Prefetch]

# Prefetches the apps above add to the exported threads, by name: the
# conversation extras they registered (conversations.extensions) then read
# what was loaded for all the threads at once, not one query per thread.
_export_prefetches: dict[str, ExportPrefetch] = {}


def register_export_prefetch(name: str, fn: ExportPrefetch) -> None:
    """The export's threads get `fn(member)` prefetched. Registering a name
    again replaces it, so a repeated ready() is harmless."""
    _export_prefetches[name] = fn


def export_conversations(member: Member) -> list[dict]:
    """Every conversation of the person, as the API shows it (with the extras
    other apps register, such as cards), plus what the API leaves out: each
    message's order, turn and notice, each tool call's times. A fixed number
    of queries, however many conversations."""
    threads = (
        threads_of(member)
        .order_by("created_at", "id")
        .prefetch_related(
            messages_prefetch(file_data=True),
            *(prefetch(member) for prefetch in _export_prefetches.values()),
        )
    )
    exported = []
    for thread in threads:
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
                file_data.update(createdAt=iso(attachment.created_at), content=b64(attachment.data))
        exported.append(document)
    return exported


def export_unattached_files(member: Member) -> list[dict]:
    """Uploads no message has taken yet (kept a day): the person's data too."""
    return [
        {**file_json(attachment), "createdAt": iso(attachment.created_at), "content": b64(attachment.data)}
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
    (tool calls, then messages, then threads), in every organization. A thread
    that is responding is left until its turn ends (ErasureBlocked)."""
    erasable = Thread.objects.filter(user=user).exclude(status=Thread.Status.RESPONDING)
    deleted = delete_in_order((
        Attachment.objects.filter(user=user, message__isnull=True),
        Attachment.objects.filter(message__thread__in=erasable),
        ToolCall.objects.filter(message__thread__in=erasable),
        Message.objects.filter(thread__in=erasable),
        erasable,
    ), batch_size)
    if deleted >= batch_size:
        return deleted
    if Thread.objects.filter(user=user, status=Thread.Status.RESPONDING).exists():
        raise ErasureBlocked(deleted)
    return deleted


def register() -> None:
    from organizations.personal_data import register_eraser, register_exporter

    register_exporter("conversations", export_conversations)
    register_exporter("files", export_unattached_files)
    register_eraser("conversations", erase_conversations, order=20)
