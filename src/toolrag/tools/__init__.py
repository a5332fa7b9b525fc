"""Tools: the result envelope, the validating tool-spec base, and the content tools."""

from toolrag.tools.base import GuardedToolSpec
from toolrag.tools.compute import ComputeToolSpec
from toolrag.tools.prompting import CompactReActFormatter, tool_schema
from toolrag.tools.result import ErrorCode, Source, ToolResult

__all__ = [
    "CompactReActFormatter",
    "ComputeToolSpec",
    "ErrorCode",
    "GuardedToolSpec",
    "Source",
    "ToolResult",
    "tool_schema",
]
