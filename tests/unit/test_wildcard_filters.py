"""Filter values that mean "no filter" ("all", "any", "*"), left out before a read call runs."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.tools import FunctionTool

from toolrag.cards.card import ToolCard
from toolrag.guard import ToolGuard
from toolrag.guard.audit import AuditLog
from toolrag.guard.grounding.filters import FilterValues, Vocabulary, complete_filters
from toolrag.guard.grounding.narrow import call_with_named_filters
from toolrag.guard.grounding.wildcards import is_wildcard, wildcard_filters
from toolrag.tools.result import ToolResult

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "branch": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "state": {"type": "string", "default": "open"},
        "format": {"anyOf": [{"enum": ["book", "dvd", "all"]}, {"type": "null"}]},
        "reader": {"type": "string", "description": "Reader id, or 'any' for every reader."},
    },
    "required": ["title"],
}


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("branch", "all"),
        ("branch", "ALL"),
        ("branch", " Any "),
        ("branch", "*"),
        ("branch", "N/A"),
        ("branch", "none"),
        ("branch", "all branches"),
        ("branch_code", "every branch"),
        ("branch", ["all"]),
    ],
)
def test_words_for_every_value_are_wildcards(param: str, value: Any) -> None:
    assert is_wildcard(param, value)


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("branch", "All Saints Library"),  # a name that starts with "All"
        ("branch", "all the way"),
        ("branch", "all readers"),  # another parameter's noun
        ("branch", "Eastside"),
        ("branch", ""),
        ("branch", 0),
        ("branch", ["all", "Eastside"]),
        ("branch", "all " * 30),
    ],
)
def test_other_values_are_not(param: str, value: Any) -> None:
    assert not is_wildcard(param, value)


def test_an_optional_wildcard_is_left_out_and_a_value_the_parameter_takes_is_kept() -> None:
    args = {"title": "all", "branch": "all", "state": "open", "format": "all", "reader": "any"}
    # title is required; format lists "all"; reader's description quotes 'any'
    assert wildcard_filters(SCHEMA, args, {"format": ["book", "dvd", "all"]}) == {"branch": "all"}
    assert wildcard_filters(SCHEMA, {"state": "open"}) == {}
    # a known value (or alias) named "All" is a value, not a wildcard
    assert wildcard_filters(SCHEMA, {"branch": "all"}, {"branch": ["Main", "all"]}) == {}


def test_the_default_is_a_value_the_parameter_takes() -> None:
    schema = {"type": "object", "properties": {"state": {"type": "string", "default": "all"}}}
    assert wildcard_filters(schema, {"state": "all"}) == {}
    assert wildcard_filters(schema, {"state": "any"}) == {"state": "any"}


def test_completion_leaves_it_out_says_so_and_still_adds_what_the_question_names() -> None:
    vocabulary = Vocabulary(
        by_parameter={"branch": FilterValues.of({"EAST": ["Eastside"], "MAIN": ["Main"]})}
    )
    schema = {**SCHEMA, "properties": {k: SCHEMA["properties"][k] for k in ("title", "branch")}}
    done = complete_filters(
        "Which loans are overdue at all branches?",
        "loans",
        schema,
        {"title": "x", "branch": "all branches"},
        vocabulary,
    )
    assert done.arguments == {"title": "x"}
    assert done.dropped == {"branch": "all branches"}
    assert done.note() is not None and "branch='all branches'" in done.note()  # type: ignore[operator]
    # the model's "any" gives way to the branch the question names
    named = complete_filters(
        "Which loans are overdue at Eastside?", "loans", schema, {"branch": "any"}, vocabulary
    )
    assert named.arguments == {"branch": "EAST"}
    assert named.dropped == {"branch": "any"} and named.added == {"branch": "EAST"}


def _guard(tmp_path: Path, side_effect: str = "read") -> tuple[ToolGuard, list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []

    def loans(title: str, branch: str | None = None, idempotency_key: str = "") -> ToolResult:
        """Loans of a title, optionally at one branch."""
        calls.append({"title": title, "branch": branch})
        if branch not in (None, "Eastside", "Main"):
            return ToolResult.ok([])  # a branch named "all" holds nothing
        return ToolResult.ok([{"title": title, "branch": branch or "Eastside"}])

    tool = FunctionTool.from_defaults(fn=loans, name="loans")
    card = ToolCard(
        name="loans",
        description="Loans.",
        side_effect=side_effect,  # type: ignore[arg-type]
        parameters=tool.metadata.get_parameters_dict(),
    )
    audit = AuditLog(tmp_path / "audit.sqlite")
    return ToolGuard([tool], [card], vocabulary=Vocabulary(), audit=audit), calls


def _call(guard: ToolGuard, arguments: dict[str, Any]) -> Any:
    return asyncio.run(
        call_with_named_filters(
            guard, "loans", arguments, question="Loans of Dune in every branch?", run_id="r", step=1
        )
    )


def test_a_read_call_runs_without_the_wildcard_and_the_result_says_so(tmp_path: Path) -> None:
    guard, calls = _guard(tmp_path)
    done = _call(guard, {"title": "Dune", "branch": "all"})
    assert calls == [{"title": "Dune", "branch": None}]
    assert done.arguments == {"title": "Dune"}
    assert done.result.data and "branch='all'" in (done.result.suggestion or "")
    assert guard.audit is not None
    (record,) = guard.audit.tail()  # one audited call, with the arguments it ran with
    assert (record.tool, record.status) == ("loans", "ok")
    assert "branch" not in record.arguments


def test_an_action_keeps_the_model_s_arguments(tmp_path: Path) -> None:
    guard, calls = _guard(tmp_path, side_effect="write")
    _call(guard, {"title": "Dune", "branch": "all", "idempotency_key": "k"})
    assert calls and calls[0]["branch"] == "all"
