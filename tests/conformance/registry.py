"""Every door, once. A door module with no adapter here fails
test_every_door_is_registered: a new door does not pass without the promises."""

import importlib.util

from tests.conformance.doors import AiMemoryDoor, ApiDoor, BrowserDoor
from tests.conformance.panel_door import PanelDoor
from tests.conformance.remote_doors import McpDoor, TelegramDoor

DOORS = {door.name: door for door in (BrowserDoor, ApiDoor, AiMemoryDoor, McpDoor, TelegramDoor)}

# The modules (or template tags) that make each door, as the guard finds them on disk.
MODULES = {"browser": ("assistant_engine.web",), "api": ("assistant.api",),
           "ai": ("assistant_engine.surfaces.ai_memory",), "mcp": ("assistant_engine.surfaces.mcp",),
           "telegram": ("assistant_engine.surfaces.telegram",)}

# The panel (branch wt-panel): its adapter is ready and runs once its door exists.
if importlib.util.find_spec("assistant_engine.web.panel"):
    DOORS["panel"] = PanelDoor
    MODULES["panel"] = ("assistant_engine.web.panel", "assistant_engine.web.templatetags.assistant")
