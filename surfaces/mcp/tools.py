"""The assistant's tools over MCP: the same declarations, classes and rights as in a turn.

`read` and `write` tools run at once with the person's rights (a write in one
transaction, with the conservative untrusted context: the server can't know
what else the MCP client's model has read). `confirm` and `send` tools never
act here: they create the same pending card as in a turn, in a conversation
that holds the session's cards, and answer where the person confirms it.
"""

import json
from datetime import datetime
from typing import Any, Literal

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from mcp import types
from pydantic import BaseModel, Field

from assistant import proposals
from assistant.card_presentation import present
from assistant.models import ActionCard
from assistant.tools import framework
from assistant.tools.registry import all_tools, get_tool
from assistant.trifecta import Route, route_call
from conversations.models import Message, Thread, ToolCall
from conversations.selectors import threads_of
from conversations.services import message_append, thread_create
from organizations.members import Member
from surfaces.mcp.sessions import McpSessionState

CARDS_THREAD_TITLE = "Actions proposed over MCP"


class ProposedCard(BaseModel):
    """What a confirm or send tool answers over MCP: the card awaiting the person."""

    status: Literal["awaiting_confirmation"] = "awaiting_confirmation"
    cardId: str  # noqa: N815
    description: str
    hash: str = Field(description="The card's SHA-256 fingerprint, as shown to the person.")
    expiresAt: datetime  # noqa: N815
    confirmUrl: str = Field(description="Where the person confirms or cancels it in the product.")  # noqa: N815
    trifectaWarning: bool  # noqa: N815
    note: str = "Nothing has happened yet: the person confirms or cancels this card in the product."


def mcp_tools() -> list[types.Tool]:
    return [_mcp_tool(tool) for tool in all_tools()]


def _mcp_tool(tool: framework.Tool) -> types.Tool:
    hints = framework.annotations_for(tool)
    output = framework.output_schema(tool) if tool.runs_in_loop else ProposedCard.model_json_schema(
        mode="serialization")
    return types.Tool(
        name=tool.name, title=tool.title, description=framework.model_description(tool),
        input_schema=framework.input_schema(tool), output_schema=output,
        annotations=types.ToolAnnotations(
            title=tool.title, read_only_hint=hints.read_only_hint, destructive_hint=hints.destructive_hint,
            idempotent_hint=hints.idempotent_hint, open_world_hint=hints.open_world_hint,
        ),
    )


def call_tool(member: Member, state: McpSessionState, name: str, arguments: Any, *,
              site_url: str) -> types.CallToolResult:
    """One tools/call. UnknownTool propagates (the server answers a protocol
    error); anything the caller can correct is an error result."""
    tool = get_tool(name)
    try:
        parsed = framework.parse_input(tool, arguments)
    except framework.ToolInputError as error:
        return _error(str(error))
    route = route_call(tool.tool_class, state.taint, settings.ASSISTANT_TRIFECTA)
    state.add_taint(tool.tool_class, tool.flags)
    if route == Route.REFUSE:
        return _error(proposals.TRIFECTA_REFUSAL)
    try:
        if route == Route.RUN:
            result = framework.execute(tool, member, parsed, context=framework.ToolContext())
            state.add_taint(tool.tool_class, framework.result_marks(tool, result))
            return _result(tool, result)
        card = _propose(member, state, tool, parsed, warning=route == Route.PROPOSE_WITH_WARNING)
    except framework.ToolError as error:
        return _error(str(error) or type(error).__name__)
    return _card_result(card, site_url)


def _result(tool: framework.Tool, result: Any) -> types.CallToolResult:
    """Bounded as for the model. A result too long for the bound can't be
    given whole, nor as a partial structure the client would validate: it
    comes as its bounded text, marked as an error."""
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    bounded = framework.bound_for_model(text)
    if bounded != text:
        return _error(bounded)
    structured = result if tool.output is not None and isinstance(result, dict) else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=framework.bound_for_model(text))],
                                is_error=True)


def _propose(member: Member, state: McpSessionState, tool: framework.Tool, parsed, *, warning: bool) -> ActionCard:
    """The card, in the session's cards conversation, with the call that proposed it."""
    with transaction.atomic():
        thread = _cards_thread(member, state)
        message = message_append(member, thread=thread, role=Message.Role.ASSISTANT,
                                 content=f"Proposed over MCP: {tool.title}.")
        now = timezone.now()
        record = ToolCall.objects.create(message=message, position=0, tool_use_id=f"mcp_{message.id.hex}",
                                         name=tool.name, input=parsed.model_dump(mode="json"), created_at=now)
        result = proposals.propose(member, turn=None, tool=tool, tool_input=parsed, tool_call=record,
                                   warning=warning)
        record.result, record.finished_at = result, timezone.now()
        record.save(update_fields=["result", "finished_at"])
        return ActionCard.objects.get(id=result["card_id"])


def _cards_thread(member: Member, state: McpSessionState) -> Thread:
    """The session's cards conversation, row locked (appends take the next seq).

    A new one when the person deleted it, or is chatting in it (a turn
    appends there too)."""
    if state.thread_id is not None:
        # Lock the row: two calls of the session must not take the same seq.
        thread = threads_of(member).select_for_update().filter(id=state.thread_id).first()
        if thread is not None and thread.status == Thread.Status.IDLE:
            return thread
    thread = thread_create(member, title=CARDS_THREAD_TITLE)
    state.thread_id = thread.id
    return thread


def _card_result(card: ActionCard, site_url: str) -> types.CallToolResult:
    proposed = ProposedCard(
        cardId=str(card.id), description=card.description, hash=card.snapshot_hash, expiresAt=card.expires_at,
        confirmUrl=site_url.rstrip("/") + reverse("web-conversation", args=[card.thread_id]),
        trifectaWarning=card.trifecta_warning,
    )
    structured = proposed.model_dump(mode="json")
    # The card as every door shows it (warnings first, the whole description), then its data.
    text = present(card).as_text() + "\n\n" + json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)
