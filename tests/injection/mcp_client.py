"""The person's MCP client for the injection suite: its model (the obedient
one) calls the engine's tools over the MCP door (assistant_engine.surfaces.
mcp.tools.call_tool, what the server runs for each tools/call) and reads
every result, until it answers. No turn of ours runs: what guards the person
is the door's own trifecta state and its cards (the protocol itself is
covered by tests/surfaces and the doors' conformance suite)."""

from assistant_engine.organizations.members import Member
from assistant_engine.surfaces.mcp.tools import call_tool
from assistant_engine.tools.framework import UnknownTool
from tests.fakes.obedient_model import ObedientModel, Read

SITE = "https://assistant.example"
MAX_CALLS = 60  # a client's own bound, above the suite's longest injection


def mcp_client_session(member: Member, model: ObedientModel, task: str) -> str:
    """The client's final answer to `task`."""
    read = Read(texts=[task], task=task)
    for _ in range(MAX_CALLS):
        call, text = model.decide(read)
        if call is None:
            return text
        name, arguments = call
        try:
            result = call_tool(member, name, arguments, site_url=SITE)
            said = "\n".join(part.text for part in result.content)
        except UnknownTool as error:  # the protocol error a client's model reads
            said = str(error)
        read.texts.append(said)
        read.turn_uses.append(call)
        read.all_uses.append(call)
    return ""
