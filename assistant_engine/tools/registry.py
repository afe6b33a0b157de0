"""The tools of the deployment: the toolsets named in settings.ASSISTANT_TOOLSETS.

The assistant reaches the host product only through this setting, never by
import, so `workspace` can depend on the tool framework (and the assistant on
both) and not the other way round.
"""

from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from assistant_engine.tools.framework import Tool, Toolset, UnknownTool

# A name from the model is echoed in the error: bound it.
_MAX_ECHOED_NAME = 64


def load_toolset(path: str) -> Toolset:
    try:
        toolset = import_string(path)
    except ImportError as exc:
        raise ImproperlyConfigured(f"ASSISTANT_TOOLSETS: cannot import {path!r} ({exc}).") from exc
    if not isinstance(toolset, Toolset):
        kind = type(toolset).__name__
        raise ImproperlyConfigured(f"ASSISTANT_TOOLSETS: {path!r} is a {kind}, not a Toolset.")
    return toolset


@lru_cache(maxsize=8)
def _tools_by_name(paths: tuple[str, ...]) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    declared_in: dict[str, str] = {}
    for path in paths:
        for tool in load_toolset(path).tools:
            if tool.name in tools:
                # Silently keeping one would let a product shadow another's tool.
                raise ImproperlyConfigured(
                    f"ASSISTANT_TOOLSETS: tool {tool.name!r} is declared by both "
                    f"{declared_in[tool.name]!r} and {path!r}."
                )
            tools[tool.name] = tool
            declared_in[tool.name] = path
    return tools


def _current() -> dict[str, Tool]:
    # Keyed by the setting's value, so override_settings in tests takes effect.
    return _tools_by_name(tuple(settings.ASSISTANT_TOOLSETS))


def all_tools() -> list[Tool]:
    """Every declared tool, in declaration order."""
    return list(_current().values())


def get_tool(name: str) -> Tool:
    """The tool called `name`; UnknownTool (a ToolError the model can read) otherwise."""
    tools = _current()
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is None:
        shown = str(name)[:_MAX_ECHOED_NAME]
        raise UnknownTool(f"No tool named {shown!r}. Available tools: {', '.join(tools) or 'none'}.")
    return tool


def check_toolsets() -> None:
    """Load every toolset now, so a bad setting fails at start-up rather than at a turn."""
    _current()
