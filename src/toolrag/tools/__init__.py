"""Tools: the result envelope, the validating tool-spec base, and the content tools."""

from toolrag.tools.base import GuardedToolSpec
from toolrag.tools.result import ErrorCode, Source, ToolResult

__all__ = ["ErrorCode", "GuardedToolSpec", "Source", "ToolResult"]
