"""Which door a turn came through (credits.models.Door), told to its credit
reservation so the organization page can show the spend by door.

The conversation's own door wins when another door holds it: a Telegram chat,
the day's MCP conversation (MCP's tools call no model: the credits its
conversation spends are the turns asked in it), a conversation an /ai/ client
uploaded (esm-ai-memory). Else it is where the turn was asked: the API with a
token, a host page's panel (its component says so in a header: a statistic,
never a right), or the chat page.
"""

from conversations.models import API_ID_PREFIX, Thread
from credits.models import Door

HELD_BY = {"telegram": Door.TELEGRAM, "mcp": Door.MCP}
# Sent by the chat component in a host page's panel (static/assistant/chat.js).
PANEL_HEADER = "X-Assistant-Door"


def turn_door(thread: Thread, asked: str) -> str:
    """The door of a turn in `thread` asked through `asked` (a Door, or "" when not told)."""
    held = HELD_BY.get(thread.surface)
    if held is not None:
        return held
    uploaded_by_ai = bool(thread.client_json) or (
        bool(thread.external_id) and not thread.external_id.startswith(API_ID_PREFIX))
    return Door.AI_MEMORY if uploaded_by_ai else asked


def asked_door(request) -> str:
    """Where an /api/ request came from: a token (the API), else the browser's session (page or panel)."""
    if request.auth is not None:
        return Door.API
    return Door.PANEL if request.headers.get(PANEL_HEADER) == Door.PANEL else Door.BROWSER
