"""toolrag: answer questions over many kinds of content with retrieved tools on LlamaIndex."""

from toolrag.agent import Answer, TraceStep
from toolrag.errors import ToolragError
from toolrag.settings import Settings
from toolrag.toolbox import Toolbox
from toolrag.tools.result import Source, ToolResult

__all__ = ["Answer", "Settings", "Source", "ToolResult", "Toolbox", "ToolragError", "TraceStep"]
__version__ = "0.1.0"
