"""The public API: the names ``toolrag`` exports, pinned (as httpx pins its own), and each one
importable from the package root."""

from __future__ import annotations

import toolrag

PUBLIC = {
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
}


def test_the_exported_names_are_pinned() -> None:
    assert set(toolrag.__all__) == PUBLIC
    assert len(toolrag.__all__) == len(PUBLIC)  # no name listed twice


def test_every_exported_name_is_importable_from_the_root() -> None:
    missing = [name for name in toolrag.__all__ if not hasattr(toolrag, name)]
    assert missing == []


def test_the_scripted_llm_drives_a_toolbox() -> None:
    llm = toolrag.ScriptedLLM(["Answer: hello"])
    tb = toolrag.Toolbox(toolrag.Settings(llm_provider="scripted"), llm=llm)
    assert tb.llm is llm
