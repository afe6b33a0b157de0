"""What the server remembers of one MCP session: whose it is, what it has read, where its cards go.

An MCP session (the `Mcp-Session-Id` of the streamable HTTP transport) lives
in the memory of the process that serves it (the SDK's session manager), so
its state does too: no table for it. The trifecta guard follows the session
as it follows a turn: once the session has read private data and third-party
content, a `send` card carries the warning (or is refused, with `block`).
A request without a session (the session-less 2026-07-28 protocol) can't
show what came before it, so it starts from the conservative taint: both.
"""

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from uuid import UUID

from assistant.trifecta import CLEAN, TAINTED, Taint, taint_after
from organizations.members import Member

# Sessions remembered per process, least recently used dropped first. The
# SDK ends idle sessions on its own; this only bounds memory.
MAX_SESSIONS = 10_000


class SessionOwnerMismatch(Exception):
    """A session opened by one person was used with another person's token."""


@dataclass
class McpSessionState:
    organization_id: int
    user_id: int
    taint: Taint = CLEAN
    # The conversation that holds this session's cards; created at its first proposal.
    thread_id: UUID | None = None
    # Two calls of one session may run at once: a read-modify-write of the
    # taint must not lose one of them (a lost "private" would hide a trifecta).
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add_taint(self, tool_class: str, flags) -> None:
        with self.lock:
            self.taint = taint_after(self.taint, tool_class, flags)


_states: "OrderedDict[str, McpSessionState]" = OrderedDict()
# Calls of one session run in worker threads: the table is shared.
_lock = threading.Lock()


def state_for(session_id: str | None, member: Member) -> McpSessionState:
    if not session_id:
        return McpSessionState(organization_id=member.organization_id, user_id=member.user_id, taint=TAINTED)
    with _lock:
        state = _states.get(session_id)
        if state is None:
            state = _states[session_id] = McpSessionState(member.organization_id, member.user_id)
            while len(_states) > MAX_SESSIONS:
                _states.popitem(last=False)
        elif (state.organization_id, state.user_id) != (member.organization_id, member.user_id):
            raise SessionOwnerMismatch
        _states.move_to_end(session_id)
        return state
