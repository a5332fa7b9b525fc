"""`toolrag eval tools` on pools and query files as users bring them: queries that expect no
tool (scored with a relevance floor), tools listed twice, and queries without text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolrag.cards.card import load_tool_list
from toolrag.cli.main import app
from toolrag.errors import InputError
from toolrag.evaluation.retrieval import RetrievalQuery, evaluate, load_queries

FIXTURES = Path(__file__).parents[1] / "fixtures"
POOL, QUERIES = FIXTURES / "tools_small.json", FIXTURES / "queries_small.jsonl"


def _eval(tmp_path: Path, *extra: str, tools: Path = POOL, queries: Path = QUERIES) -> object:
    args = ["eval", "tools", "--tools", str(tools), "--queries", str(queries), "--json",
            "--misses", str(tmp_path / "misses.jsonl"), *extra]  # fmt: skip
    return CliRunner().invoke(app, args)


def test_no_tool_queries_are_scored_only_when_the_search_can_return_nothing() -> None:
    queries = [
        RetrievalQuery(id="a", query="a", expected=["x"]),
        RetrievalQuery(id="b", query="b", expected=[]),
        RetrievalQuery(id="c", query="c", expected=[]),
        RetrievalQuery(id="d", query="d", expected=[]),
    ]
    ranked = {"a": ["x"], "b": [], "c": ["y", "x"], "d": []}
    plain = evaluate("fake", 3, queries, lambda q, k: ranked[q][:k], ks=(1,))
    assert plain.n_queries == 1 and plain.n_no_tool == 3 and plain.no_tool_accuracy is None
    assert "no_tool_accuracy" not in plain.as_json()
    scored = evaluate("fake", 3, queries, lambda q, k: ranked[q][:k], ks=(1,), score_no_tool=True)
    # b and d got nothing back (right); c got tools: a miss, written with its top max(ks)
    assert scored.no_tool_accuracy == pytest.approx(2 / 3)
    assert scored.recall[1] == 1.0 and scored.n_queries == 1
    assert scored.misses == [{"id": "c", "query": "c", "expected": [], "got": ["y"]}]
    assert scored.as_json()["no_tool_accuracy"] == 0.6667 and scored.as_json()["n_no_tool"] == 3


def test_a_gated_search_is_scored_at_each_k_as_the_agent_would_be_offered_it() -> None:
    # a gate at 0.5 judges the k tools asked for together: q1's right tool comes first at a
    # cosine of 0.4, and only its second tool (0.6) opens the gate, so an agent offered one
    # tool gets none, and one offered two gets both
    cosines = {"q1": [("x", 0.4), ("y", 0.6)], "q2": [("z", 0.3), ("x", 0.7)]}

    def gated(query: str, k: int) -> list[str]:
        top = cosines[query][:k]
        return [n for n, _ in top] if any(c >= 0.5 for _, c in top) else []

    queries = [
        RetrievalQuery(id="1", query="q1", expected=["x"]),
        RetrievalQuery(id="2", query="q2", expected=[]),
    ]
    report = evaluate("fake", 3, queries, gated, ks=(1, 2), score_no_tool=True, each_k=True)
    assert report.recall == {1: 0.0, 2: 1.0}
    assert report.mrr == 1.0  # read from the one deep search, as before
    # q2 expects no tool: offered one it gets none, offered two (the largest k) it gets both
    assert report.no_tool_accuracy == 0.0
    assert report.misses == [{"id": "2", "query": "q2", "expected": [], "got": ["z", "x"]}]
    # a prefix of one deep search would have scored Recall@1 as 1.0
    prefix = evaluate("fake", 3, queries, gated, ks=(1, 2), score_no_tool=True)
    assert prefix.recall[1] == 1.0


def test_eval_tools_with_a_gate_agrees_with_eval_gate_at_each_k(tmp_path: Path) -> None:
    index = str(tmp_path / "index")
    common = ["--tools", str(POOL), "--queries", str(QUERIES), "--index-dir", index, "--json"]
    sweeps = {}
    for k in ("1", "5"):
        swept = CliRunner().invoke(app, ["eval", "gate", *common, "--k", k,
                                         "--start", "0.2", "--stop", "0.5"])  # fmt: skip
        assert swept.exit_code == 0, swept.output
        sweeps[k] = {p["at"]: p for p in json.loads(swept.stdout)["points"]}
    assert len({p["recall"] for p in sweeps["1"].values()}) > 1  # the cuts differ
    for at in list(sweeps["1"])[::3]:
        result = _eval(tmp_path, "--index-dir", index, "--gate", str(at), "--k", "1,5")
        row = json.loads(result.stdout)
        assert row["recall@1"] == sweeps["1"][at]["recall"], (at, row)
        assert row["recall@5"] == sweeps["5"][at]["recall"], (at, row)
        assert row["no_tool_accuracy"] == sweeps["5"][at]["no_tool"], (at, row)


def test_floor_scores_the_no_tool_query_for_toolrag_and_plain_objectindex(
    tmp_path: Path,
) -> None:
    # queries_small.jsonl: four answerable questions and "Tell me a joke", which no tool fits
    result = _eval(tmp_path, "--strategy", "all", "--floor", "0.2")
    assert result.exit_code == 0, result.output
    rows = {r["strategy"]: r for r in json.loads(result.stdout)}
    assert "note: bm25 left out" in result.stderr
    assert list(rows) == ["objectindex-default", "dense", "hybrid", "best"]
    for row in rows.values():
        assert row["n_no_tool"] == 1 and row["n_queries"] == 4
        assert row["no_tool_accuracy"] == 1.0  # the joke gets no tool
    assert rows["best"]["recall@5"] == 1.0  # and every answerable question keeps its tools
    # the floor really cuts: at 0.3 the plain ObjectIndex (name, description and schema in
    # one text, lower cosines) loses answerable tools that best keeps
    high = {r["strategy"]: r for r in json.loads(_eval(tmp_path, "--strategy", "all",
                                                       "--floor", "0.3").stdout)}  # fmt: skip
    assert high["objectindex-default"]["recall@5"] < high["best"]["recall@5"]
    # a floor below every cosine returns tools for the joke too: a miss, written down
    low = _eval(tmp_path, "--strategy", "best", "--floor", "-1")
    assert json.loads(low.stdout)["no_tool_accuracy"] == 0.0
    misses = [json.loads(x) for x in (tmp_path / "misses.jsonl").read_text().splitlines()]
    assert [m["id"] for m in misses if not m["expected"]] == ["q5"]


def test_without_a_floor_the_no_tool_queries_are_left_out_and_said_so(tmp_path: Path) -> None:
    result = _eval(tmp_path, "--strategy", "best")
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)
    assert row["n_queries"] == 4 and "no_tool_accuracy" not in row
    assert "1 query expects no tool; left out of the metrics" in result.stderr


def test_floor_with_bm25_alone_is_a_clear_error(tmp_path: Path) -> None:
    result = _eval(tmp_path, "--strategy", "bm25", "--floor", "0.2")
    assert result.exit_code == 2
    assert "--floor needs cosine scores, and bm25 has none" in result.stderr


def test_a_tool_listed_twice_with_other_content_is_kept_once_and_reported(
    tmp_path: Path,
) -> None:
    tools = json.loads(POOL.read_text())
    again = {"name": "get_weather", "description": "Weather history for a date and a place."}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([*tools, tools[0], again, again]))
    conflicts: list[str] = []
    cards = load_tool_list(path, conflicts)
    assert len(cards) == 5 and conflicts == ["get_weather"]  # the exact copy is no conflict
    assert next(c for c in cards if c.name == "get_weather").description == (
        tools[0].get("description") or tools[0]["function"]["description"]
    )
    result = _eval(tmp_path, "--strategy", "best", tools=path)
    assert result.exit_code == 0, result.output
    assert "1 tool name(s) listed more than once with different content" in result.stderr
    assert json.loads(result.stdout)["n_tools"] == 5


def test_a_query_without_text_is_an_input_error_that_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text(
        json.dumps({"id": "q1", "query": "weather in Oslo", "expected_tools": ["get_weather"]})
        + "\n\n"
        + json.dumps({"id": "q2", "query": "  ", "expected_tools": ["get_weather"]})
        + "\n"
    )
    with pytest.raises(InputError, match=r"queries\.jsonl:3: query 'q2' has no text"):
        load_queries(path, "expected_tools")
    result = _eval(tmp_path, queries=path)
    assert result.exit_code == 2 and "has no text" in result.stderr


def test_gate_keeps_or_drops_each_querys_tools_together(tmp_path: Path) -> None:
    # Cosines on the fixture: best's top tools get 0.32 / 0.51 / 0.43 / 0.39 for q1-q4 and
    # 0.07 for the joke (q5); q3's second tool, send_email, 0.26. Plain ObjectIndex's top
    # nodes score 0.32 / 0.41 / 0.296 / 0.27 and 0.07.
    result = _eval(tmp_path, "--strategy", "all", "--gate", "0.3")
    assert result.exit_code == 0, result.output
    rows = {r["strategy"]: r for r in json.loads(result.stdout)}
    assert "note: bm25 left out: it has no cosine for --gate to cut." in result.stderr
    assert rows["best"]["no_tool_accuracy"] == 1.0 and rows["best"]["recall@5"] == 1.0
    # q3 and q4 fall below the gate for plain ObjectIndex: 2 of 4 questions keep their tools
    assert rows["objectindex-default"]["no_tool_accuracy"] == 1.0
    assert rows["objectindex-default"]["recall@5"] == 0.5
    # a floor at the same cosine cuts send_email (0.26) from q3; the gate keeps it
    floored = json.loads(_eval(tmp_path, "--strategy", "best", "--floor", "0.3").stdout)
    assert floored["recall@5"] < 1.0 and floored["no_tool_accuracy"] == 1.0
    both = _eval(tmp_path, "--strategy", "bm25", "--gate", "0.3", "--floor", "0.1")
    assert both.exit_code == 2 and "--floor and --gate needs cosine scores" in both.stderr


def test_tools_search_with_a_gate(tmp_path: Path) -> None:
    args = ["tools", "search", "--tools", str(POOL), "--gate", "0.3", "--k", "3"]
    joke = CliRunner().invoke(app, [*args, "Tell me a joke"])
    assert joke.exit_code == 0, joke.output
    assert "no tool fits (every cosine is below the gate)" in joke.stdout
    money = CliRunner().invoke(app, [*args, "--json", "How many euros is 100 dollars?"])
    hits = json.loads(money.stdout)
    assert len(hits) == 3 and hits[0]["name"] == "convert_currency"
    assert min(h["similarity"] for h in hits) < 0.3  # the gate passed all three
    assert not any(h["named"] for h in hits)
    asked = "How many euros is 100 dollars? Then mail it with send_email"
    named = json.loads(CliRunner().invoke(app, [*args, "--json", asked]).stdout)
    assert [(h["name"], h["named"]) for h in named[:2]] == [
        ("send_email", True),  # first: the question names it
        ("convert_currency", False),
    ]
    table = CliRunner().invoke(app, [*args, asked])
    assert table.exit_code == 0 and "named in the question" in table.stdout
