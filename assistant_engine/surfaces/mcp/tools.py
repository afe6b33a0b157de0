"""The assistant's tools over MCP: the same declarations, classes and rights as in a turn.

`read` and `write` tools run at once with the person's rights (a write in one
transaction, with the conservative untrusted context: the server can't know
what else the MCP client's model has read). `confirm` and `send` tools never
act here: they create the same pending card as in a turn, in a conversation
of surface `mcp` that holds every call (record.py), and answer where the
person confirms it.
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
from assistant.trifecta import Route, route_call
from assistant_engine.foundation.serializers import unstorable_text
from assistant_engine.organizations.members import Member, untrusted_writes_of
from assistant_engine.surfaces.mcp import record
from assistant_engine.tools import framework, model_text
from assistant_engine.tools.registry import all_tools, get_tool
from conversations.models import ToolCall


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
    card = ProposedCard.model_json_schema(mode="serialization")
    output = framework.output_schema(tool) if tool.runs_in_loop else card
    if tool.tool_class == "write" and output is not None:
        # After third-party content a write answers with its card (the organization's choice).
        output = {"type": "object", "anyOf": [output, card]}
    return types.Tool(
        name=tool.name, title=tool.title, description=framework.model_description(tool),
        input_schema=framework.input_schema(tool), output_schema=output,
        annotations=types.ToolAnnotations(
            title=tool.title, read_only_hint=hints.read_only_hint, destructive_hint=hints.destructive_hint,
            idempotent_hint=hints.idempotent_hint, open_world_hint=hints.open_world_hint,
        ),
    )


def call_tool(member: Member, name: str, arguments: Any, *, site_url: str) -> types.CallToolResult:
    """One tools/call, stored whole in the person's MCP conversation
    (record.py). UnknownTool propagates (the server answers a protocol error);
    anything the caller can correct is an error result."""
    tool = get_tool(name)
    # As the API: text PostgreSQL can't store (NUL, lone surrogates) is refused
    # before anything is written, so such a call is not recorded.
    problem = unstorable_text(arguments)
    if problem:
        return _error(f"Invalid input for {tool.name}: {problem}")
    now = timezone.now()
    with transaction.atomic():
        taint, sources = record.taint_locked(member, now)
        # Counted from the call, before it runs: as in a turn, a call taints whatever its outcome.
        record.add_reads(member, tool, tool.flags, now)
        call = record.call_started(member, record.conversation_locked(member, now), tool.name, arguments, now)
    try:
        parsed = framework.parse_input(tool, arguments)
        route = route_call(tool.tool_class, taint, settings.ASSISTANT_TRIFECTA,
                           untrusted_writes=untrusted_writes_of(member) if tool.tool_class == "write" else "confirm")
        if route == Route.REFUSE:
            raise framework.ToolError(proposals.TRIFECTA_REFUSAL)
        if route == Route.RUN:
            result = framework.execute(tool, member, parsed, context=framework.ToolContext())
            _read(member, tool, framework.result_marks(tool, result), result)
            record.call_finished(call, result, is_error=False)
            return _result(tool, result)
        card = _propose(member, call, tool, parsed, warning=route == Route.PROPOSE_WITH_WARNING,
                        sources=sources if taint.read_untrusted else None)
        _read(member, tool, framework.result_marks(tool, call.result), call.result)
    except framework.ToolError as error:
        text = str(error) or type(error).__name__
        record.call_finished(call, {"error": text}, is_error=True)
        return _error(text)
    except Exception:
        record.call_finished(call, {"error": "The tool failed unexpectedly."}, is_error=True)  # as the loop
        raise
    return _card_result(card, site_url)


def _read(member: Member, tool: framework.Tool, marks, result: Any) -> None:
    """What a call's result showed the client, and where its third-party content came from."""
    now = timezone.now()
    record.add_reads(member, tool, marks, now)
    if "untrusted" in tool.flags | marks:
        record.add_sources(member, framework.sources_of(tool, result))


def _result(tool: framework.Tool, result: Any) -> types.CallToolResult:
    """Bounded as for the model. A result too long for the bound can't be
    given whole, nor as a partial structure the client would validate: it
    comes as its bounded text, marked as an error."""
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    bounded = model_text.bound_for_model(text)
    if bounded != text:
        return _error(bounded)
    structured = result if tool.output is not None and isinstance(result, dict) else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=model_text.bound_for_model(text))],
                                is_error=True)


def _propose(member: Member, call: ToolCall, tool: framework.Tool, parsed, *, warning: bool,
             sources: list[str] | None) -> ActionCard:
    """The card, in the MCP conversation that holds the call that proposed it;
    `sources`: None before any third-party content, else where it came from."""
    with transaction.atomic():
        result = proposals.propose(member, turn=None, tool=tool, tool_input=parsed, tool_call=call, warning=warning,
                                   after_untrusted=sources is not None, sources=sources or ())
        record.call_finished(call, result, is_error=False)
        return ActionCard.objects.get(id=result["card_id"])


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
