"""Tools propose, people decide: a confirm/send call becomes a pending card,
and so does a write after third-party content (assistant.trifecta.route_call)."""

from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.utils import timezone, translation
from pydantic import BaseModel

from assistant import live
from assistant.card_presentation import TRIFECTA_WARNING
from assistant.fingerprint import snapshot_hash
from assistant.models import ActionCard, Turn
from assistant.repeats import identical_done_at
from assistant_engine.organizations.members import Member
from assistant_engine.organizations.services import preferred_language
from assistant_engine.tools import framework
from conversations.models import ToolCall

TRIFECTA_REFUSAL = (
    "Refused: this turn has read the person's private data and third-party content, so sending anything "
    "outside the product is blocked for the rest of this turn. Tell the person; they can ask again in a "
    "new message if they want it sent."
)
# The sources a card names (the most recent are the likeliest; a card is not a log).
MAX_SOURCES = 8
UNTRUSTED_WRITE_NOTE = (
    "This comes after content from outside the product was read in this conversation, so the person checks it "
    "on a card before it is done. Tell them what it would do and why."
)
REPEAT_NOTE = (
    "An identical action (same tool, input and data) was already confirmed in this conversation at {moment}: "
    "the card says so and the person must confirm it again explicitly. Do not propose it again unless asked."
)


def propose(
    member: Member, *, turn: Turn | None, tool: framework.Tool, tool_input: BaseModel, tool_call: ToolCall,
    warning: bool, after_untrusted: bool = False, sources: Sequence[str] = (),
) -> dict:
    """Store a pending card for the person; the result tells the model it awaits them.

    `turn` is None for a door without turns (MCP): the card then belongs to
    the thread of `tool_call`.
    """
    # The card's words in the person's language (kept as shown: what they confirm), whichever door or worker asks.
    with translation.override(preferred_language(user_id=member.user_id) or translation.get_language()):
        description = framework.describe(tool, member, tool_input)
    input_json = tool_input.model_dump(mode="json")
    fingerprint = snapshot_hash(tool.name, input_json, description.snapshot)
    thread_id = turn.thread_id if turn is not None else tool_call.message.thread_id
    card = ActionCard.objects.create(
        organization_id=member.organization_id,
        user_id=member.user_id,
        thread_id=thread_id,
        turn=turn,
        tool_call=tool_call,
        tool_name=tool.name,
        tool_input=input_json,
        description=description.text,
        snapshot_hash=fingerprint,
        trifecta_warning=warning,
        after_untrusted=after_untrusted,
        sources=list(sources)[:MAX_SOURCES],
        identical_done_at=identical_done_at(thread_id=thread_id, snapshot_hash=fingerprint),
        expires_at=timezone.now() + timedelta(seconds=settings.ASSISTANT_CARD_LIFETIME_SECONDS),
    )
    live.publish_card_proposed(card)
    result = {
        "status": "awaiting_confirmation",
        "card_id": str(card.id),
        "description": description.text,
        "note": "Nothing has happened yet: the person will confirm or cancel this on a card.",
    }
    for flag in sorted(description.marks):  # read back by tools.framework.result_marks
        result[flag] = True
    if warning:
        result["warning"] = TRIFECTA_WARNING
    if after_untrusted:
        result["why"] = UNTRUSTED_WRITE_NOTE
        if sources:
            result["after_reading"] = list(sources)[:MAX_SOURCES]
    if card.identical_done_at is not None:
        result["repeat"] = REPEAT_NOTE.format(moment=card.identical_done_at.isoformat(timespec="minutes"))
    return result
