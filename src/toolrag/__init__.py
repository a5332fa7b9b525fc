"""toolrag: answer questions over many kinds of content with retrieved tools on LlamaIndex.

The names below are the public API; everything else is internal and may move. See
``docs/architecture.md`` for the layers and ``docs/index.md`` for the guides.
"""

from toolrag.agent.loop import Answer, TraceStep
from toolrag.batch.questions import Question, load_questions
from toolrag.batch.run import BatchRecord, BatchSummary, load_batch_questions, run_batch
from toolrag.cards.card import ToolCard, load_yaml_cards
from toolrag.content.collection_index import FieldFilters
from toolrag.content.collection_spec import CollectionSpec, FieldSpec
from toolrag.content.index import ContentIndex
from toolrag.errors import ConfigError, IndexMissingError, InputError, ToolragError
from toolrag.evaluation.docs_eval import run_docs_eval
from toolrag.evaluation.retrieval import RetrievalQuery, RetrievalReport
from toolrag.evaluation.route_eval import run_route_eval
from toolrag.evaluation.tools_eval import run_tool_eval, run_tool_evals
from toolrag.events import AgentEvent
from toolrag.guard import ApprovalRequest, AuditLog, IdempotencyStore, ToolGuard
from toolrag.models.embeddings import make_embedding
from toolrag.models.llms import make_llm
from toolrag.models.scripted import ScriptedFunctionLLM, ScriptedLLM
from toolrag.profiles import AgentProfile
from toolrag.retrieval.index import Stages, ToolHit, ToolIndex
from toolrag.routing import ExampleStore, Router, RouteResult
from toolrag.routing.models import RouteDecision, ToolCallSpec
from toolrag.settings import Settings, load_settings
from toolrag.toolbox import Toolbox
from toolrag.tools.result import ErrorCode, Source, ToolResult

__all__ = [
    "AgentEvent",
    "AgentProfile",
    "Answer",
    "ApprovalRequest",
    "AuditLog",
    "BatchRecord",
    "BatchSummary",
    "CollectionSpec",
    "ConfigError",
    "ContentIndex",
    "ErrorCode",
    "ExampleStore",
    "FieldFilters",
    "FieldSpec",
    "IdempotencyStore",
    "IndexMissingError",
    "InputError",
    "Question",
    "RetrievalQuery",
    "RetrievalReport",
    "RouteDecision",
    "RouteResult",
    "Router",
    "ScriptedFunctionLLM",
    "ScriptedLLM",
    "Settings",
    "Source",
    "Stages",
    "ToolCallSpec",
    "ToolCard",
    "ToolGuard",
    "ToolHit",
    "ToolIndex",
    "ToolResult",
    "Toolbox",
    "ToolragError",
    "TraceStep",
    "load_batch_questions",
    "load_questions",
    "load_settings",
    "load_yaml_cards",
    "make_embedding",
    "make_llm",
    "run_batch",
    "run_docs_eval",
    "run_route_eval",
    "run_tool_eval",
    "run_tool_evals",
]
__version__ = "0.1.0"
