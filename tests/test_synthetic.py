"""LLM-written requests per tool card: parsing, the per-version cache, indexing, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolrag.cards import ToolCard, load_tool_list
from toolrag.errors import ConfigError
from toolrag.llms import ScriptedLLM
from toolrag.synthetic import SyntheticQueries, parse_requests

from .test_cli import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
REPLY = (
    """1. Do I need an umbrella in Oslo tomorrow?
2) "How windy is it in Lisbon right now?"
- Do I need an umbrella in Oslo tomorrow?
* call get_weather for Rome
Here is a request that goes on far too long to be one: """
    + "x" * 300
)


def test_parse_requests_drops_numbering_repeats_the_tool_name_and_long_lines() -> None:
    assert parse_requests(REPLY, 5, "get_weather") == [
        "Do I need an umbrella in Oslo tomorrow?",
        "How windy is it in Lisbon right now?",
    ]
    assert parse_requests(REPLY, 1, "get_weather") == ["Do I need an umbrella in Oslo tomorrow?"]


@pytest.fixture
def cards() -> list[ToolCard]:
    return load_tool_list(FIXTURES / "tools_small.json")


def test_requests_are_cached_per_card_version(cards: list[ToolCard], tmp_path: Path) -> None:
    llm = ScriptedLLM([REPLY, "Swap 100 euros into yen", "Will it hail in Bergen?"])
    store = SyntheticQueries(tmp_path / "s.sqlite", llm, per_card=2)
    assert store.fill(cards[:2]) == 2
    assert store.fill(cards[:2]) == 0 and llm.remaining == 1  # resumed: nothing to write
    weather = cards[0]
    assert "Requests:" not in weather.document()
    reader = SyntheticQueries(tmp_path / "s.sqlite")  # no LLM: reads what any model wrote
    augmented = reader.augment(cards)
    assert augmented[0].synthetic == [
        "Do I need an umbrella in Oslo tomorrow?",
        "How windy is it in Lisbon right now?",
    ]
    assert augmented[1].synthetic == ["Swap 100 euros into yen"]
    assert augmented[2:] == cards[2:]  # nothing cached: unchanged
    assert "Requests: Do I need an umbrella" in augmented[0].document()
    assert augmented[0].content_hash() != weather.content_hash()  # the index embeds it again
    changed = weather.model_copy(update={"description": weather.description + " Also hail."})
    assert reader.cached(changed) is None  # a new version of the card: new requests
    with pytest.raises(ConfigError, match="toolrag tools synth"):
        reader.generate(changed)
    assert store.generate(changed) == ["Will it hail in Bergen?"]
    # the prompt shows the card's document, without requests written for an older version
    prompt = llm.prompts[-1][-1].content or ""
    assert "Also hail." in prompt and "Requests: Do I need" not in prompt


def test_synth_cli_then_eval_with_the_requests(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(json.loads((FIXTURES / "tools_small.json").read_text())[:2]))
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps(["Will it snow in Denver?", "Turn 50 dollars into pesos"]))
    env = {
        "TOOLRAG_LLM_PROVIDER": "scripted",
        "TOOLRAG_SCRIPTED_TURNS_FILE": str(turns),
        "TOOLRAG_STATE_DIR": str(tmp_path / "state"),
    }
    proc = run_cli("tools", "synth", "--tools", str(tools), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "wrote requests for 2 card(s); 2 of 2 have them" in proc.stdout
    queries = tmp_path / "q.jsonl"
    query = {"id": "a", "query": "Will it snow in Denver?", "expected_tools": ["get_weather"]}
    queries.write_text(json.dumps(query) + "\n")
    proc = run_cli(
        "eval", "tools", "--tools", str(tools), "--queries", str(queries), "--strategy", "bm25",
        "--synthetic", "--json", "--misses", str(tmp_path / "m.jsonl"), env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["recall@1"] == 1.0  # "snow" and "Denver" are only in the written request


def test_the_toolbox_indexes_the_requests_written_for_its_tools(tmp_path: Path) -> None:
    from toolrag import Settings, Toolbox

    from .conftest import DATA

    state, idx = tmp_path / "state", tmp_path / "idx"
    settings = Settings(data_dir=DATA, index_dir=idx, state_dir=state, llm_provider="scripted")
    card = Toolbox(settings).cards()[0]
    store = SyntheticQueries(settings.synthetic_db, ScriptedLLM(["Which sheets show the lobby?"]))
    store.generate(card)
    indexed = Toolbox(settings).tool_index.cards[card.id]
    assert indexed.synthetic == ["Which sheets show the lobby?"]
    assert "Requests: Which sheets show the lobby?" in indexed.document()
