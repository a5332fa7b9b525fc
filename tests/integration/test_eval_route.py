"""``toolrag eval route`` with the scripted LLM on a small fixture whose metrics are computed by
hand: precision/recall overall and per tool, the confusion matrix and its PNG, "no tool"
accuracy and argument accuracy (list-valued expectations accept any option)."""

from __future__ import annotations

import json
from pathlib import Path

from toolrag.evaluation.route_eval import RouteQuery, argument_hits, score
from toolrag.routing import ToolCallSpec

from ..conftest import REPO
from .test_cli import run_cli

FIXTURES = REPO / "tests" / "fixtures"
QUERIES = [
    {"id": "q1", "query": "Will it rain in Paris tomorrow?", "expected_tools": ["get_weather"],
     "expected_args": {"city": "Paris"}},
    {"id": "q2", "query": "How many euros is 100 dollars?", "expected_tools": ["convert_currency"]},
    {"id": "q3", "query": "Convert the quarterly report to PDF and then email it to my manager",
     "expected_tools": ["convert_document_to_pdf", "send_email"]},
    {"id": "q4", "query": "Reserve a plane ticket from Boston to Denver on May 3",
     "expected_tools": ["book_flight"],
     "expected_args": {"origin": "Boston", "destination": "Denver",
                       "date": ["2025-05-03", "May 3"]}},
    {"id": "q5", "query": "Tell me a joke", "expected_tools": []},
]  # fmt: skip


def _call(*calls: tuple[str, dict[str, object]]) -> str:
    return json.dumps(
        {"action": "call_tools", "calls": [{"tool": t, "arguments": a} for t, a in calls]}
    )


REPLIES = [
    _call(("get_weather", {"city": "paris"})),
    _call(("get_weather", {"city": "Dollar City"})),  # wrong tool for q2
    _call(("convert_document_to_pdf", {"path": "report.docx"}), ("send_email", {"to": "boss"})),
    _call(("book_flight", {"origin": "Boston", "destination": "Denver", "date": "May 3"})),
    json.dumps({"action": "answer_directly", "message": "Why did the crane sing? It had pitch."}),
]


def test_argument_hits_accept_options_and_optional_arguments() -> None:
    assert argument_hits({"unit": ["cm", ""]}, {}) == (1, 1)  # "" = may be left out
    assert argument_hits({"unit": ["cm", ""]}, {"unit": "CM"}) == (1, 1)
    assert argument_hits({"a": [1, 2], "b": "x"}, {"a": 3, "b": "x"}) == (1, 2)
    assert argument_hits({"ids": [1, 2]}, {"ids": [1, 2]}) == (1, 1)  # a list value itself
    assert argument_hits({"ids": [[1, 2], [2, 1]]}, {"ids": [2, 1]}) == (1, 1)  # list options


def test_score_by_hand() -> None:
    queries = [RouteQuery.model_validate(q) for q in QUERIES]
    predicted = [
        [ToolCallSpec(tool="get_weather", arguments={"city": "paris"})],
        [ToolCallSpec(tool="get_weather")],
        [ToolCallSpec(tool="convert_document_to_pdf"), ToolCallSpec(tool="send_email")],
        [ToolCallSpec(tool="book_flight", arguments={"origin": "Boston", "date": "2025-05-03"})],
        [],
    ]
    report = score("none", queries, predicted, [True] * 5, 0, [1.0] * 5)
    assert report.precision == 0.8 and report.recall == 0.8  # 4 right of 5 called, 5 expected
    assert report.per_tool["get_weather"] == {"precision": 0.5, "recall": 1.0, "support": 1}
    assert report.per_tool["convert_currency"]["recall"] == 0.0
    assert report.confusion["convert_currency"] == {"get_weather": 1}
    assert report.confusion["(none)"] == {"(none)": 1}
    assert report.no_tool_accuracy == 1.0 and report.n_no_tool == 1
    assert report.argument_accuracy == 0.75 and report.n_argument_checks == 4  # 1 + 2 of 3


def test_eval_route_cli_on_the_fixture(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps(REPLIES))
    png = tmp_path / "confusion.png"
    proc = run_cli(
        "eval", "route", "--tools", str(FIXTURES / "tools_small.json"), "--queries",
        str(queries), "--examples", "none", "--png", str(png), "--json",
        env={"TOOLRAG_LLM_PROVIDER": "scripted", "TOOLRAG_SCRIPTED_TURNS_FILE": str(turns),
             "TOOLRAG_STATE_DIR": str(tmp_path / "state")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["precision"] == 0.8 and report["recall"] == 0.8
    assert report["no_tool_accuracy"] == 1.0
    assert report["argument_accuracy"] == 1.0 and report["n_argument_checks"] == 4
    assert report["valid_rate"] == 1.0
    heatmap = png.with_name("confusion_none.png")
    assert heatmap.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_route_resumes_from_its_records(tmp_path: Path) -> None:
    """A run stopped after two queries, then resumed: the second run routes only the other
    three (its script has only their replies) and the report is the whole one."""
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    records = tmp_path / "records.jsonl"

    def run(replies: list[str], *extra: str) -> dict[str, object]:
        turns = tmp_path / "turns.json"
        turns.write_text(json.dumps(replies))
        proc = run_cli(
            "eval", "route", "--tools", str(FIXTURES / "tools_small.json"), "--queries",
            str(queries), "--examples", "none", "--png", str(tmp_path / "c.png"),
            "--records", str(records), "--json", *extra,
            env={"TOOLRAG_LLM_PROVIDER": "scripted", "TOOLRAG_SCRIPTED_TURNS_FILE": str(turns),
                 "TOOLRAG_STATE_DIR": str(tmp_path / "state")},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return dict(json.loads(proc.stdout))

    first = run(REPLIES[:2], "--limit", "2")
    assert first["n_queries"] == 2 and first["precision"] == 0.5
    report = run(REPLIES[2:])
    assert report["n_queries"] == 5
    assert report["precision"] == 0.8 and report["recall"] == 0.8
    assert report["argument_accuracy"] == 1.0 and report["no_tool_accuracy"] == 1.0
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [r["id"] for r in lines] == ["q1", "q2", "q3", "q4", "q5"]
    assert len({r["setup"] for r in lines}) == 1

    # Retrieval changed for q1 since its decision was recorded: only q1 is routed again.
    lines[0]["offered"] = ["book_flight"]
    records.write_text("".join(json.dumps(r) + "\n" for r in lines))
    again = run(REPLIES[:1])
    assert {k: v for k, v in again.items() if k != "p50_s"} == {
        k: v for k, v in report.items() if k != "p50_s"
    }
    redone = [json.loads(line)["id"] for line in records.read_text().splitlines()]
    assert redone == ["q1", "q2", "q3", "q4", "q5", "q1"]

    # The prompt q2 was routed with differs from today's (another tool format, other examples,
    # a changed repair template): only q2 is routed again.
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert all(len(r["prompt"]) == 16 for r in lines)
    lines[1]["prompt"] = "0" * 16
    records.write_text("".join(json.dumps(r) + "\n" for r in lines))
    run(REPLIES[1:2])
    redone = [json.loads(line)["id"] for line in records.read_text().splitlines()]
    assert redone == ["q1", "q2", "q3", "q4", "q5", "q1", "q2"]

    # With a gate only the joke (best cosine about 0.07) is offered no tools: the model
    # answers it without routing, and every other decision is reused. A later run without
    # the gate finds the joke's earlier record again: each offer keeps its own.
    gated = run(["Why did the crane sing? It had pitch."], "--gate", "0.3")
    assert gated["gate"] == 0.3 and gated["offered_none"] == {"answerable": 0, "no_tool": 1}
    assert report["gate"] is None and report["offered_none"] == {"answerable": 0, "no_tool": 0}
    same = ("p50_s", "gate", "offered_none")
    assert {k: v for k, v in gated.items() if k not in same} == {
        k: v for k, v in report.items() if k not in same
    }
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [r["id"] for r in lines[7:]] == ["q5"] and lines[-1]["offered"] == []
    assert lines[-1]["calls"] == [] and lines[-1]["valid"]
    run([])  # nothing routed again: the script has no replies
    assert len(records.read_text().splitlines()) == 8
