"""The assistant's part of a person's export and erasure (organizations.personal_data).

Exported: the person's cards, turns with their costs, and the provider keys
they added (hint only). Erased: their cards. Kept, without the person: turns
(accounting needs their costs: `user` set null) and provider keys (they are
the organization's: their author is set null).
"""

from collections.abc import Iterator

from django.db.models import Prefetch

from assistant.cards import thread_cards_json
from assistant.models import ENDED_STATUSES, ActionCard, Turn
from assistant.progress import card_json
from assistant.selectors import cards_of, turns_of
from assistant_engine.organizations.members import Member
from assistant_engine.organizations.personal_data import iso
from assistant_engine.providers.models import ProviderKey
from conversations.models import Thread

# Where the export's prefetch leaves a thread's cards.
PREFETCHED_CARDS = "exported_cards"


# Sections are iterators read in chunks, so the streamed export (GET
# /api/me/export) holds a chunk, not all of a person's cards or turns.
CHUNK = 500


def export_cards(member: Member) -> Iterator[dict]:
    cards = cards_of(member).select_related("tool_call").order_by("created_at", "id")
    return (
        {**card_json(card), "turnId": str(card.turn_id) if card.turn_id else None, "createdAt": iso(card.created_at)}
        for card in cards.iterator(chunk_size=CHUNK)
    )


def prefetch_thread_cards(member: Member) -> Prefetch:
    """The cards of all the exported threads in one query (thread_cards_json's
    filter and order: the threads are the member's own)."""
    return Prefetch(
        "action_cards",
        queryset=cards_of(member).select_related("tool_call").order_by("created_at", "id"),
        to_attr=PREFETCHED_CARDS,
    )


def conversation_cards_json(thread: Thread) -> list[dict]:
    """A conversation's `cards`: the ones prefetched with the thread (the
    export), else thread_cards_json's own query (one conversation)."""
    cards = getattr(thread, PREFETCHED_CARDS, None)
    if cards is None:
        return thread_cards_json(thread)
    return [card_json(card) for card in cards]


def export_turns(member: Member) -> Iterator[dict]:
    return (
        {
            "id": str(turn.id), "conversationId": str(turn.thread_id) if turn.thread_id else None,
            "status": turn.status, "failureKind": turn.failure_kind or None, "model": turn.model_option,
            "steps": turn.steps, "toolCalls": turn.tool_calls, "inputTokens": turn.input_tokens,
            "outputTokens": turn.output_tokens, "cacheWriteTokens": turn.cache_write_tokens,
            "cacheReadTokens": turn.cache_read_tokens, "creditMonth": turn.credit_month,
            "reservedMicros": turn.reserved_micros, "costMicros": turn.cost_micros,
            "createdAt": iso(turn.created_at), "startedAt": iso(turn.started_at), "finishedAt": iso(turn.finished_at),
        }
        for turn in turns_of(member).order_by("created_at", "id").iterator(chunk_size=CHUNK)
    )


def export_provider_keys(member: Member) -> list[dict]:
    keys = ProviderKey.objects.filter(organization_id=member.organization_id, created_by_id=member.user_id)
    return [
        {"id": key.id, "provider": key.provider, "hint": key.hint, "createdAt": iso(key.created_at)}
        for key in keys.order_by("id")
    ]


def erase_cards(user, batch_size: int) -> int:
    """The person's cards, except those of a thread being answered (they go
    with the thread, once its turn has ended)."""
    ids = list(
        ActionCard.objects.filter(user=user)
        .exclude(thread__status=Thread.Status.RESPONDING)
        .order_by()  # the person's index, not a walk of every card's key (see delete_in_order)
        .values_list("pk", flat=True)[:batch_size]
    )
    return ActionCard.objects.filter(pk__in=ids).delete()[0] if ids else 0


def anonymize_turns(user, batch_size: int) -> int:
    """Finished turns keep their costs without the person."""
    ids = list(
        Turn.objects.filter(user=user, status__in=ENDED_STATUSES)
        .order_by()
        .values_list("pk", flat=True)[:batch_size]
    )
    return Turn.objects.filter(pk__in=ids).update(user=None) if ids else 0


def anonymize_provider_keys(user, batch_size: int) -> int:
    """A key the person added stays the organization's, without its author."""
    ids = list(ProviderKey.objects.filter(created_by=user).order_by("pk").values_list("pk", flat=True)[:batch_size])
    return ProviderKey.objects.filter(pk__in=ids).update(created_by=None) if ids else 0


def register() -> None:
    from assistant_engine.organizations.personal_data import register_eraser, register_exporter
    from conversations.extensions import register_conversation_extra
    from conversations.personal_data import register_export_prefetch

    # The conversations' export prefetches the cards of all its threads; the
    # `cards` extra that AssistantConfig.ready() registered just before
    # (thread_cards_json, one query per thread) is replaced by the same JSON
    # read from that prefetch when there is one.
    register_export_prefetch("cards", prefetch_thread_cards)
    register_conversation_extra("cards", conversation_cards_json)
    register_exporter("cards", export_cards)
    register_exporter("turns", export_turns)
    register_exporter("providerKeys", export_provider_keys)
    # Cards before conversations (a thread's deletion would cascade to them).
    register_eraser("cards", erase_cards, order=10)
    register_eraser("turns", anonymize_turns, order=60)
    register_eraser("provider_keys", anonymize_provider_keys, order=70)
