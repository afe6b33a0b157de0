"""Tools propose, people decide: a confirm/send call becomes a pending card."""

from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from pydantic import BaseModel

from assistant import live
from assistant.fingerprint import snapshot_hash
from assistant.models import ActionCard, Turn
from assistant.tools import framework
from conversations.models import ToolCall
from organizations.members import Member

TRIFECTA_REFUSAL = (
    "Refused: this turn has read the person's private data and third-party content, so sending anything "
    "outside the product is blocked for the rest of this turn. Tell the person; they can ask again in a "
    "new message if they want it sent."
)
TRIFECTA_WARNING = (
    "This turn read your private data and content from third parties. Check that this is what you asked "
    "for: third-party content can try to make the assistant send your data elsewhere."
)


def propose(
    member: Member, *, turn: Turn, tool: framework.Tool, tool_input: BaseModel, tool_call: ToolCall, warning: bool
) -> dict:
    """Store a pending card for the person; the result tells the model it awaits them."""
    description = framework.describe(tool, member, tool_input)
    input_json = tool_input.model_dump(mode="json")
    card = ActionCard.objects.create(
        organization_id=member.organization_id,
        user_id=member.user_id,
        thread_id=turn.thread_id,
        turn=turn,
        tool_call=tool_call,
        tool_name=tool.name,
        tool_input=input_json,
        description=description.text,
        snapshot_hash=snapshot_hash(tool.name, input_json, description.snapshot),
        trifecta_warning=warning,
        expires_at=timezone.now() + timedelta(seconds=settings.ASSISTANT_CARD_LIFETIME_SECONDS),
    )
    live.publish_card_proposed(card)
    result = {
        "status": "awaiting_confirmation",
        "card_id": str(card.id),
        "description": description.text,
        "note": "Nothing has happened yet: the person will confirm or cancel this on a card.",
    }
    if warning:
        result["warning"] = TRIFECTA_WARNING
    return result
