"""Reads for the pages. Each takes the verified Member first and goes through
the apps' own tenant filters (threads_of, turns_of, cards_of): a conversation
or card of someone else is not found."""

import re
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.db.models import OuterRef, Subquery, Value
from django.db.models.functions import Greatest, Lower, StrIndex, Substr
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from assistant import selectors as assistant_selectors
from assistant.models import ActionCard, Turn
from assistant_engine.organizations.access_log import staff_accesses_of
from assistant_engine.organizations.members import Member
from assistant_engine.tools.registry import all_tools
from assistant_engine.web import presenters, versions
from conversations import selectors as conversation_selectors
from conversations.models import Message, Thread

SIDEBAR_PAGE = 50


class CardNotFound(Exception):
    pass


@dataclass
class SidebarItem:
    id: str
    title: str
    updated_at: datetime
    when: str
    responding: bool
    surface: str = ""  # "telegram": the sidebar marks it
    # The title cut around the searched words: (text, is_a_match) pieces, shown with <mark>.
    title_parts: list[tuple[str, bool]] = field(default_factory=list)
    # Where a message matched the search (when the title didn't), the same way.
    snippet_parts: list[tuple[str, bool]] = field(default_factory=list)


@dataclass
class Sidebar:
    items: list[SidebarItem]
    has_more: bool
    pages: int


@dataclass
class ConversationPage:
    thread: Thread
    blocks: list[presenters.Block]
    running_turn_id: str
    # What the template lays out: the blocks with their version sets' markers (web.versions).
    items: list = field(default_factory=list)


def tool_titles() -> dict[str, str]:
    # Titles are declared in English (the MCP server serves them so); shown translated.
    return {tool.name: str(_(tool.title)) for tool in all_tools()}


def sidebar(member: Member, *, pages: int = 1, query: str = "", current_id: str = "",
            now: datetime | None = None) -> Sidebar:
    """The person's conversations (those matching `query` when given), newest
    first, `pages` × SIDEBAR_PAGE of them: one query, and one more when the
    open conversation (`current_id`) is older than the list, so it is always
    in it (last) and highlighted."""
    now = now or timezone.now()
    limit = max(1, pages) * SIDEBAR_PAGE
    # The search box can't type a NUL; a crafted URL's is dropped (PostgreSQL text can't hold it).
    query = query.replace("\x00", "").strip()[:conversation_selectors.SEARCH_MAX_CHARS]
    if query:
        listed = conversation_selectors.thread_search(member, query)
    else:
        listed = conversation_selectors.thread_list(member)
    fields = ("id", "title", "updated_at", "status", "surface")
    if query:
        listed = listed.annotate(snippet=_snippet_of_first_match(query))
    threads = list(listed.only(*fields)[: limit + 1])
    shown = threads[:limit]
    if current_id and not query and current_id not in {str(thread.id) for thread in shown}:
        shown += list(conversation_selectors.threads_of(member).filter(id=_uuid_or_none(current_id)).only(*fields))
    items = [_sidebar_item(thread, query, now) for thread in shown]
    return Sidebar(items=items, has_more=len(threads) > limit, pages=max(1, pages))


def _uuid_or_none(raw: str) -> UUID | None:
    try:
        return UUID(raw)
    except ValueError:
        return None


def _sidebar_item(thread: Thread, query: str, now: datetime) -> SidebarItem:
    title = thread.title or str(_("New conversation"))
    return SidebarItem(
        id=str(thread.id), title=title, updated_at=thread.updated_at,
        when=presenters.relative_date(thread.updated_at, now),
        responding=thread.status == Thread.Status.RESPONDING,
        surface=thread.surface,
        title_parts=marked_parts(title, query),
        snippet_parts=_snippet_parts(getattr(thread, "snippet", None), title, query),
    )


SNIPPET_BEFORE, SNIPPET_CHARS = 40, 140


def _snippet_of_first_match(query: str) -> Subquery:
    """Around the first of the conversation's current messages holding the
    query's first word: a cut of SNIPPET_CHARS characters, computed by the
    database in the sidebar's one query (no message read whole)."""
    word = query.split()[0].lower()
    at = StrIndex(Lower("content"), Value(word))
    matching = (Message.objects.filter(thread_id=OuterRef("id"), superseded_at__isnull=True,
                                       role__in=[Message.Role.USER, Message.Role.ASSISTANT],
                                       content__icontains=word)
                .order_by("seq")
                .values(cut=Substr("content", Greatest(at - SNIPPET_BEFORE, Value(1)), SNIPPET_CHARS)))
    return Subquery(matching[:1])


def _snippet_parts(snippet: str | None, title: str, query: str) -> list[tuple[str, bool]]:
    if not snippet or any(marked for _text, marked in marked_parts(title, query)):
        return []
    return marked_parts("… " + " ".join(snippet.split()) + " …", query)


def marked_parts(text: str, query: str) -> list[tuple[str, bool]]:
    """`text` in pieces, the words of `query` marked (case-insensitive)."""
    words = [re.escape(word) for word in query.split() if word]
    if not words:
        return [(text, False)]
    pieces = re.split(f"({'|'.join(words)})", text, flags=re.IGNORECASE)
    return [(piece, index % 2 == 1) for index, piece in enumerate(pieces) if piece]


def conversation_page(member: Member, thread_id: UUID, *, now: datetime | None = None) -> ConversationPage:
    """Raises ConversationNotFound. Five queries whatever the length (six with a summary)."""
    thread = conversation_selectors.thread_with_messages(member, thread_id)
    cards = list(
        assistant_selectors.cards_of(member).filter(thread_id=thread.id).order_by("created_at")
    )
    running = (
        assistant_selectors.turns_of(member)
        .filter(thread_id=thread.id, status__in=[Turn.Status.QUEUED, Turn.Status.RUNNING])
        .order_by("-created_at")
        .values_list("id", flat=True)
        .first()
    )
    blocks = presenters.blocks_of(thread.messages.all(), cards, titles=tool_titles(), now=now or timezone.now())
    items = versions.arrange(blocks)
    summary = conversation_selectors.summary_of(thread)  # no query for a conversation never summarized
    if summary is not None:
        items = with_summary_divider(items, thread.messages.all(), summary)
    return ConversationPage(thread=thread, blocks=blocks, running_turn_id=str(running) if running else "",
                            items=items)


def with_summary_divider(items: list, messages, summary) -> list:
    """The page's items with the divider "Earlier messages are summarized for
    the assistant" before the first message the model still receives whole."""
    summarized = {str(message.client_id) for message in messages if message.seq < summary.through_seq}
    divider = presenters.Block(role="summary", turn_id="", text=summary.content)
    for index, item in enumerate(items):
        parts = getattr(item, "parts", None) or []
        if item.role in ("user", "assistant") and any(part.id not in summarized for part in parts):
            return [*items[:index], divider, *items[index:]]
    return [*items, divider]


def card_for_member(member: Member, card_id: UUID, *, now: datetime | None = None) -> presenters.CardView:
    card: ActionCard | None = assistant_selectors.cards_of(member).filter(id=card_id).first()
    if card is None:
        raise CardNotFound
    title = tool_titles().get(card.tool_name) or presenters.humanize_tool_name(card.tool_name)
    return presenters.card_view(card, title=title, now=now or timezone.now())


def card_lifetime_hours() -> int:
    return max(1, settings.ASSISTANT_CARD_LIFETIME_SECONDS // 3600)


# What the data page says a staff member did, by kind of access.
STAFF_ACCESS_WORDS = {
    "conversation": _("a staff member opened your conversation"),
    "turn": _("a staff member looked into one of the assistant's replies to you"),
    "card": _("a staff member looked at one of your confirmation cards"),
    "export": _("a staff member downloaded an export of your data"),
    "erasure": _("a staff member started erasing your data"),
    "note": _("a staff member opened one of your notes"),
    "inbox_message": _("a staff member opened a message of your inbox"),
    "sent_email": _("a staff member opened an e-mail you sent"),
    "feedback": _("a staff member read your feedback on a reply"),
    "account": _("a staff member opened your account"),
    "ledger_entry": _("a staff member looked at what one of your replies cost"),
    "usage_export": _("a staff member downloaded a table of your use of the assistant and what it cost"),
}
# A row without an object of these kinds: an admin list page showed the person's objects.
LISTED_WORDS = _("a staff member saw a list that showed some of your data")
LISTED_KINDS = {"conversation", "turn", "card", "note", "inbox_message", "sent_email", "feedback", "account",
                "ledger_entry"}
# The most recent ones on the page; the export lists them all.
STAFF_ACCESS_SHOWN = 100


@dataclass
class StaffAccessItem:
    at: datetime
    words: str
    # The conversation's title when the access was to an object of a conversation that still exists.
    conversation_title: str
    object_id: str


def staff_access_list(member: Member) -> list[StaffAccessItem]:
    """The staff accesses to the person's data in the organization, most
    recent first, without who: the person is told "a staff member"."""
    accesses = list(staff_accesses_of(member)[:STAFF_ACCESS_SHOWN])
    # A list page's row has no object id (and no title to look up).
    titles = _conversation_titles(member, [a.object_id for a in accesses if a.kind == "conversation" and a.object_id])
    return [
        StaffAccessItem(at=access.at, words=_staff_access_words(access),
                        conversation_title=titles.get(access.object_id, ""), object_id=access.object_id)
        for access in accesses
    ]


def _staff_access_words(access) -> str:
    if not access.object_id and access.kind in LISTED_KINDS:
        return LISTED_WORDS
    return STAFF_ACCESS_WORDS.get(access.kind, access.kind)


def _conversation_titles(member: Member, ids: list[str]) -> dict[str, str]:
    if not ids:
        return {}
    rows = conversation_selectors.threads_of(member).filter(id__in=set(ids)).values_list("id", "title")
    return {str(thread_id): title or str(_("Untitled")) for thread_id, title in rows}
