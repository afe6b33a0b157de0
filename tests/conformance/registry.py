"""Every door, once. A door module with no adapter here fails
test_every_door_is_registered: a new door does not pass without the promises."""

from tests.conformance.doors import AiMemoryDoor, ApiDoor, BrowserDoor
from tests.conformance.remote_doors import McpDoor, TelegramDoor

DOORS = {door.name: door for door in (BrowserDoor, ApiDoor, AiMemoryDoor, McpDoor, TelegramDoor)}

# The module (or template tag) that makes each door, as the guard finds them on disk.
MODULES = {"browser": "web", "api": "assistant.api", "ai": "surfaces.ai_memory", "mcp": "surfaces.mcp",
           "telegram": "surfaces.telegram"}
