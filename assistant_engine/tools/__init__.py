"""The tool framework: declare tools once, derive the rest. Below the
assistant (which runs them) and the doors (MCP serves them); it imports none of them.

Host products declare a `Toolset` of `Tool`s (see `framework`); the assistant
finds them through settings.ASSISTANT_TOOLSETS (see `registry`).
"""

from assistant_engine.tools.framework import (
    PROPOSE_CLASSES,
    RUN_CLASSES,
    TOOL_CLASSES,
    Annotations,
    ContextTitle,
    Description,
    Tool,
    ToolContext,
    ToolError,
    ToolInput,
    ToolInputError,
    ToolNotFound,
    Toolset,
    UnknownTool,
    WrongToolClass,
    annotations_for,
    describe,
    execute,
    input_schema,
    output_schema,
    parse_input,
    perform,
    result_marks,
    tool_spec,
    tool_specs,
)
from assistant_engine.tools.model_text import bound_for_model, error_for_model, result_for_model

__all__ = [
    "PROPOSE_CLASSES",
    "RUN_CLASSES",
    "TOOL_CLASSES",
    "Annotations",
    "ContextTitle",
    "Description",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolInput",
    "ToolInputError",
    "ToolNotFound",
    "Toolset",
    "UnknownTool",
    "WrongToolClass",
    "annotations_for",
    "bound_for_model",
    "describe",
    "error_for_model",
    "execute",
    "input_schema",
    "output_schema",
    "parse_input",
    "perform",
    "result_for_model",
    "result_marks",
    "tool_spec",
    "tool_specs",
]
