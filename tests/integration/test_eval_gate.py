"""Choosing a gate or a floor for a pool (`toolrag eval gate`): each cut scored by hand on
made-up rankings, and the command on fixture pools, where every cut it reports must be what
`toolrag eval tools --gate G` / `--floor F` measures when run with that cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolrag.cli.main import app
from toolrag.errors import InputError
from toolrag.evaluation.cuts import RankedQuery, choose, cut_grid, offered, score_cut, sweep

from ..conftest import DATA

FIXTURES = Path(__file__).parents[1] / "fixtures"
POOL, QUERIES = FIXTURES / "tools_small.json", FIXTURES / "queries_small.jsonl"

# two answerable questions and two that no tool fits; (tool, cosine), best first
RANKED = [
    RankedQuery(id="a", expected=["x"], hits=[("y", 0.50), ("x", 0.20), ("z", 0.10)]),
    RankedQuery(id="b", expected=["x", "z"], hits=[("x", 0.30), ("z", 0.25), ("y", 0.05)]),
    RankedQuery(id="c", expected=[], hits=[("y", 0.28), ("x", 0.15)]),
    RankedQuery(id="d", expected=[], hits=[("z", 0.12), ("x", None)]),
]


def test_a_gate_keeps_or_drops_the_top_k_together_and_a_floor_cuts_each_tool() -> None:
    hits = RANKED[0].hits
    assert offered(hits, "gate", 0.45, k=2) == ["y", "x"]  # y reaches it: x stays too
    assert offered(hits, "gate", 0.55, k=2) == []
    assert offered(hits, "floor", 0.15, k=2) == ["y", "x"]
    assert offered(hits, "floor", 0.45, k=2) == ["y"]
    # a floor refills from below the first k; a gate looks at the first k only
    assert offered(hits, "floor", 0.05, k=1) == ["y"]
    assert offered([("u", 0.1), ("v", 0.9)], "gate", 0.5, k=1) == []
    assert offered([("u", 0.1), ("v", 0.9)], "floor", 0.5, k=1) == ["v"]
    assert offered([("u", None)], "gate", -1.0, k=1) == []  # no cosine never clears a cut


def test_each_cut_is_scored_by_hand() -> None:
    # gate 0.26, k=2: a (0.50) and b (0.30) keep their top 2; c (0.28) keeps tools, d does not
    p = score_cut(RANKED, "gate", 0.26, k=2)
    assert (p.answered, p.no_tool, p.balanced) == (1.0, 0.5, 0.75)
    assert p.recall == 1.0  # a: x among y, x; b: x and z
    # gate 0.29: c loses its tools too
    p = score_cut(RANKED, "gate", 0.29, k=2)
    assert (p.answered, p.no_tool, p.balanced, p.recall) == (1.0, 1.0, 1.0, 1.0)
    # floor 0.29: a keeps y only (x's 0.20 is below), b keeps x only: recall (0 + 1/2) / 2
    p = score_cut(RANKED, "floor", 0.29, k=2)
    assert (p.answered, p.no_tool, p.recall) == (1.0, 1.0, 0.25)
    # gate 0.35: b is left without tools
    p = score_cut(RANKED, "gate", 0.35, k=2)
    assert (p.answered, p.no_tool, p.balanced, p.recall) == (0.5, 1.0, 0.75, 0.5)


def test_choose_prefers_balanced_accuracy_then_recall_then_the_lower_cut() -> None:
    points = [score_cut(RANKED, "gate", at, k=2) for at in (0.1, 0.26, 0.29, 0.3, 0.35)]
    assert choose(points).at == 0.29  # 0.29 and 0.30 both score 1.0: the lower one
    # keep: the most no-tool questions emptied among cuts that keep tools for all answerable
    assert choose(points, keep=1.0).at == 0.29
    assert choose(points[:2], keep=1.0).at == 0.26
    # no cut keeps that share: the lowest cut, which offers the most
    assert choose([points[-1]], keep=0.9).at == 0.35


def test_sweep_reports_every_cut_and_a_held_out_choice() -> None:
    result = sweep("fake", RANKED, "gate", cut_grid(0.1, 0.4, 0.05), k=2)
    assert [p.at for p in result.points] == [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4]
    assert (result.n_answerable, result.n_no_tool, result.recall_uncut) == (2, 2, 1.0)
    assert result.chosen.at == 0.3 and result.chosen.balanced == 1.0
    # chosen on a and c (every cut from 0.3 keeps a's tools and empties c: the lowest, 0.3),
    # scored on b and d: b (0.30) keeps its tools, d (0.12) gets none
    assert result.held_out is not None
    assert (result.held_out.at, result.held_out.balanced) == (0.3, 1.0)


def test_sweep_needs_both_kinds_of_question_and_a_sane_grid() -> None:
    with pytest.raises(InputError, match="expected_tools: \\[\\]"):
        sweep("fake", RANKED[:2], "gate", [0.1], k=2)
    with pytest.raises(InputError, match="name expected_tools"):
        sweep("fake", RANKED[2:], "gate", [0.1], k=2)
    with pytest.raises(InputError, match="positive --step"):
        cut_grid(0.5, 0.1, 0.05)
    with pytest.raises(InputError):
        cut_grid(0.1, 0.5, 0)
    assert cut_grid(0.1, 0.2, 0.05) == [0.1, 0.15, 0.2]


def test_without_no_tool_questions_keep_chooses_the_highest_cut_that_keeps_the_share() -> None:
    # a's best cosine is 0.50, b's 0.30: every gate up to 0.30 keeps both, up to 0.50 keeps a
    result = sweep("fake", RANKED[:2], "gate", cut_grid(0.1, 0.6, 0.05), k=2, keep=1.0)
    assert result.n_no_tool == 0
    assert all(p.no_tool is None and p.balanced is None for p in result.points)
    assert (result.chosen.at, result.chosen.answered) == (0.3, 1.0)  # not the lowest, 0.1
    half = sweep("fake", RANKED[:2], "gate", cut_grid(0.1, 0.6, 0.05), k=2, keep=0.5)
    assert (half.chosen.at, half.chosen.answered, half.chosen.recall) == (0.5, 0.5, 0.5)
    # chosen on a alone (0.50 keeps it), scored on b, whose 0.30 falls below it
    assert result.held_out is not None
    assert (result.held_out.at, result.held_out.answered) == (0.5, 0.0)
    assert result.held_out.no_tool is None
    with pytest.raises(InputError, match=r"--keep 0\.98"):
        sweep("fake", RANKED[:2], "gate", [0.1], k=2)


def _run(*args: str) -> object:
    return CliRunner().invoke(app, [*args])


def _bfcl_subset(tmp_path: Path) -> tuple[Path, Path]:
    """About 190 BFCL tools (every tool the fixture's 40 questions expect, then the first
    others) and those questions, with six that no tool of the pool fits."""
    pool = json.loads((FIXTURES / "bfcl_pool.json").read_text())
    expected = {t for q in pool["queries"] for t in q["expected_tools"]}
    tools = [t for t in pool["tools"] if t["name"] in expected]
    tools += [t for t in pool["tools"] if t["name"] not in expected][:150]
    none_fits = [
        "Tell me a joke.",
        "What is the capital of France?",
        "Write a haiku about rain.",
        "Who painted the Mona Lisa?",
        "Recommend a good novel.",
        "How are you today?",
    ]
    rows = pool["queries"] + [
        {"id": f"none-{n}", "query": q, "expected_tools": []} for n, q in enumerate(none_fits)
    ]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path / "tools.json", tmp_path / "queries.jsonl"


def test_eval_gate_matches_eval_tools_at_each_cut(tmp_path: Path) -> None:
    tools, queries = _bfcl_subset(tmp_path)
    common = ["--tools", str(tools), "--queries", str(queries),
              "--index-dir", str(tmp_path / "index"), "--json", "--k", "10"]  # fmt: skip
    misses = str(tmp_path / "misses.jsonl")
    for cut, grid in (([], ("0.2", "0.5")), (["--floor"], ("0.3", "0.6"))):
        sweep_run = _run("eval", "gate", *common, *cut, "--start", grid[0], "--stop", grid[1])
        assert sweep_run.exit_code == 0, sweep_run.output
        result = json.loads(sweep_run.stdout)
        assert (result["n_answerable"], result["n_no_tool"]) == (40, 6)
        points = result["points"]
        # the grid spans cuts that answer more and cuts that leave more without tools
        assert points[0]["answered"] > points[-1]["answered"], points
        assert points[0]["no_tool"] < points[-1]["no_tool"], points
        for point in points[::2]:
            option = "--floor" if cut else "--gate"
            measured = _run("eval", "tools", *common, option, str(point["at"]), "--misses", misses)
            row = json.loads(measured.stdout)
            assert row["recall@10"] == point["recall"], (cut, point, row)
            assert row["no_tool_accuracy"] == point["no_tool"], (cut, point, row)


def test_eval_gate_scores_plain_objectindex_like_eval_tools(tmp_path: Path) -> None:
    # the fixture's five tools: every search returns all of them, cut by LlamaIndex's scores
    index = str(tmp_path / "index")
    common = ["--tools", str(POOL), "--queries", str(QUERIES), "--index-dir", index, "--json"]
    gate = _run("eval", "gate", *common, "--strategy", "all", "--start", "0.1", "--stop", "0.4")
    assert gate.exit_code == 0, gate.output
    sweeps = {s["strategy"]: s for s in json.loads(gate.stdout)}
    assert list(sweeps) == ["objectindex-default", "dense", "hybrid", "best"]
    best = sweeps["best"]
    assert (best["n_answerable"], best["n_no_tool"], best["k"]) == (4, 1, 5)
    assert best["chosen"]["balanced"] == 1.0  # a cut separates the joke from the others
    assert best["held_out"] is None  # one no-tool question cannot be split in two halves
    misses = str(tmp_path / "misses.jsonl")
    plain = sweeps["objectindex-default"]["points"]
    assert len({p["recall"] for p in plain}) > 1  # the cuts differ
    for point in plain:
        measured = _run("eval", "tools", *common, "--strategy", "objectindex-default",
                        "--gate", str(point["at"]), "--misses", misses)  # fmt: skip
        row = json.loads(measured.stdout)
        assert (row["recall@5"], row["no_tool_accuracy"]) == (point["recall"], point["no_tool"])


def test_eval_gate_prints_the_setting_to_use_and_errors_in_one_line(tmp_path: Path) -> None:
    common = ["--tools", str(POOL), "--index-dir", str(tmp_path / "index")]
    result = _run("eval", "gate", *common, "--queries", str(QUERIES), "--keep", "1.0")
    assert result.exit_code == 0, result.output
    assert "best: TOOLRAG_TOOL_GATE=" in result.stdout and "keeps at least 1" in result.stdout
    answerable = tmp_path / "answerable.jsonl"
    no_tool = '"expected_tools": []'
    answerable.write_text(QUERIES.read_text().replace(no_tool, '"expected_tools": ["get_weather"]'))
    only = _run("eval", "gate", *common, "--queries", str(answerable))
    assert only.exit_code == 2
    assert only.stderr.startswith("error: Without questions no tool fits")
    assert "--keep 0.98" in only.stderr  # ... a share to keep chooses it
    kept = _run("eval", "gate", *common, "--queries", str(answerable), "--keep", "1.0", "--json")
    assert kept.exit_code == 0, kept.output
    assert json.loads(kept.stdout)["n_no_tool"] == 0
    nothing = _run("eval", "gate", *common)
    assert nothing.exit_code == 2 and nothing.stderr.startswith("error: Nothing to choose")
    bad = _run("eval", "gate", *common, "--queries", str(QUERIES), "--strategy", "bm25")
    assert bad.exit_code == 2 and "A cut needs cosines" in bad.stderr


def test_eval_gate_on_the_sample_toolbox_finds_a_gate_for_its_no_tool_questions(
    sample_index_dir: Path, tmp_path: Path
) -> None:
    env = {
        "TOOLRAG_INDEX_DIR": str(sample_index_dir),
        "TOOLRAG_DATA_DIR": str(DATA),
        "TOOLRAG_STATE_DIR": str(tmp_path / "state"),
    }
    questions = DATA / "questions"
    args = ["eval", "gate", "--queries", str(questions / "test.jsonl"),
            "--queries", str(questions / "no_tool.jsonl"), "--keep", "0.98", "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    best = json.loads(result.stdout)
    assert (best["strategy"], best["n_answerable"], best["n_no_tool"]) == ("best", 61, 24)
    chosen = best["chosen"]
    # the toolbox's own index: some gate keeps tools for 98% of the test questions and leaves
    # most of the questions none of its tools can serve without any
    assert chosen["answered"] >= 0.98 and chosen["no_tool"] >= 0.5, chosen
    # and no other gate that keeps 98% leaves more of them without tools
    kept = [p for p in best["points"] if p["answered"] >= 0.98]
    assert max(p["no_tool"] for p in kept) == chosen["no_tool"]
    assert any(p["answered"] < 0.98 for p in best["points"])  # the sweep went past it


def _pool_with_requests(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The fixture's five tools, and a state folder whose synthetic.sqlite holds requests the
    scripted LLM wrote for four of them (as `toolrag tools synth --tools` would)."""
    from toolrag import ScriptedLLM
    from toolrag.cards.card import load_tool_list
    from toolrag.cards.synthetic import SyntheticQueries

    written = {
        "get_weather": "Is it going to be windy in Lisbon this evening?\nHow cold is Oslo now?",
        "convert_currency": "What are 250 Swiss francs in pounds?\nTurn 40 dollars into yen",
        "send_email": "Mail the minutes to the whole team\nWrite to Ana that I am late",
        "book_flight": "Get me a seat to Madrid on Friday\nFly me from Rome to Oslo in June",
    }
    state = tmp_path / "state"
    state.mkdir()
    for card in load_tool_list(POOL):
        if card.name in written:
            llm = ScriptedLLM([written[card.name]])
            SyntheticQueries(state / "synthetic.sqlite", llm, per_card=2).generate(card)
    return POOL, {"TOOLRAG_STATE_DIR": str(state)}


def test_a_cards_requests_are_withheld_only_within_the_block(tmp_path: Path) -> None:
    from toolrag import Settings
    from toolrag.cards.card import load_tool_list
    from toolrag.cards.synthetic import SyntheticQueries
    from toolrag.models.embeddings import make_embedding
    from toolrag.retrieval.index import REQUEST_WEIGHT, ToolIndex

    _, env = _pool_with_requests(tmp_path)
    cards = SyntheticQueries(Path(env["TOOLRAG_STATE_DIR"]) / "synthetic.sqlite").augment(
        load_tool_list(POOL)
    )
    embed = make_embedding(Settings())
    plain = ToolIndex(tmp_path / "plain", embed)
    plain.sync([c.model_copy(update={"synthetic": []}) for c in cards])
    index = ToolIndex(tmp_path / "requests", embed)
    index.sync(cards)
    weather = next(c for c in cards if c.name == "get_weather")
    assert [text for tid, text in index.written_requests() if tid == weather.id] == [
        "Is it going to be windy in Lisbon this evening?",
        "How cold is Oslo now?",
    ]
    assert len(index.written_requests()) == 8  # four cards, two requests each

    def cosine(ix: ToolIndex, question: str) -> float:
        hits = ix.retrieve(question, k=5, strategy="dense")
        return next(h.similarity for h in hits if h.name == "get_weather") or 0.0

    question = "How cold is Oslo now?"
    document = cosine(plain, question)
    blended = cosine(index, question)  # its own request matches: cosine 1 blended in
    assert blended == pytest.approx((document + REQUEST_WEIGHT) / (1 + REQUEST_WEIGHT), abs=2e-4)
    with index.requests_withheld(weather.id):
        assert cosine(index, question) == pytest.approx(document / (1 + REQUEST_WEIGHT), abs=2e-4)
    assert cosine(index, question) == blended  # restored


def test_eval_gate_chooses_from_the_written_requests_without_labelled_questions(
    tmp_path: Path,
) -> None:
    tools, env = _pool_with_requests(tmp_path)
    args = ["eval", "gate", "--tools", str(tools), "--requests", "--start", "0.1", "--stop",
            "0.9", "--index-dir", str(tmp_path / "index")]  # fmt: skip
    result = CliRunner().invoke(app, [*args, "--keep", "0.75", "--json"], env=env)
    assert result.exit_code == 0, result.output
    sweep_ = json.loads(result.stdout)
    assert (sweep_["strategy"], sweep_["n_answerable"], sweep_["n_no_tool"]) == ("best", 8, 0)
    points, chosen = sweep_["points"], sweep_["chosen"]
    assert all(p["no_tool"] is None for p in points)
    # the highest gate that still offers tools to 6 of the 8 requests
    assert chosen["answered"] >= 0.75
    assert all(p["answered"] < 0.75 for p in points if p["at"] > chosen["at"])
    assert points[-1]["answered"] < 0.75  # the grid went past it
    text = CliRunner().invoke(app, [*args, "--keep", "0.75"], env=env)
    assert f"best: TOOLRAG_TOOL_GATE={chosen['at']:g} (keeps at least 0.75; the highest" in (
        text.stdout
    )
    # the requests add to labelled questions
    both = CliRunner().invoke(app, [*args, "--queries", str(QUERIES), "--json"], env=env)
    assert both.exit_code == 0, both.output
    assert (json.loads(both.stdout)["n_answerable"], json.loads(both.stdout)["n_no_tool"]) == (
        12,
        1,
    )
    plain = CliRunner().invoke(app, [*args, "--strategy", "objectindex-default"], env=env)
    assert plain.exit_code == 2 and "Plain ObjectIndex indexes no written requests" in (
        plain.stderr
    )
    every = CliRunner().invoke(
        app, [*args, "--keep", "0.75", "--strategy", "all", "--json"], env=env
    )
    assert every.exit_code == 0, every.output
    assert [r["strategy"] for r in json.loads(every.stdout)] == ["dense", "hybrid", "best"]
    assert "plain ObjectIndex left out" in every.stderr
    empty = {"TOOLRAG_STATE_DIR": str(tmp_path / "empty")}
    none = CliRunner().invoke(app, [*args, "--keep", "0.9"], env=empty)
    assert none.exit_code == 2 and "holds no LLM-written requests" in none.stderr
