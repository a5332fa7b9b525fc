"""LLM-written requests per tool card: parsing, the per-version cache, indexing, the CLI."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from toolrag import ScriptedLLM
from toolrag.cards.card import ToolCard, load_tool_list
from toolrag.cards.synthetic import MAX_CHARS, SyntheticQueries, parse_requests
from toolrag.errors import ConfigError

from .test_cli import run_cli

FIXTURES = Path(__file__).parents[1] / "fixtures"
REPLY = """1. Do I need an umbrella in Oslo tomorrow?
2) "How windy is it in Lisbon right now?"
- Do I need an umbrella in Oslo tomorrow?
* call get_weather for Rome
Here is a request that goes on far too long to be one: """ + " ".join(f"word{i}" for i in range(60))


def test_parse_requests_drops_numbering_repeats_the_tool_name_and_long_lines() -> None:
    assert parse_requests(REPLY, 5, "get_weather") == [
        "Do I need an umbrella in Oslo tomorrow?",
        "How windy is it in Lisbon right now?",
    ]
    assert parse_requests(REPLY, 1, "get_weather") == ["Do I need an umbrella in Oslo tomorrow?"]


def test_a_long_line_keeps_its_sentences_that_fit_and_a_loop_is_cut() -> None:
    # the local model wrote only such lines for 10 of BFCL's cards, so they had no request
    head = (
        'Open a ticket named "Login fails" with a severity of "High" and the description '
        '"Users cannot log in after the update, and the page shows an error." '
    )
    sentence = "Then assign it to the web team and notify the on-call engineer. "
    long = head + sentence * 4
    assert len(head + sentence * 2) <= MAX_CHARS < len(head + sentence * 3)
    loop = "What is the mode of these numbers: [3, 5, 7, 3, 9, " + "5, 7, 3, 9, " * 60
    got = parse_requests(f"1. {long}\n2. {loop}\n3. What is 10000 + 2222?", 5, "open_ticket")
    assert got == [
        (head + sentence * 2).strip(),  # the whole sentences that fit
        "What is the mode of these numbers: [3, 5, 7, 3, 9, 5, 7, 3, 9,",  # the loop twice
        "What is 10000 + 2222?",  # a short line keeps its repeated digits
    ]
    assert all(len(r) <= MAX_CHARS for r in got)


def test_parse_requests_keeps_a_one_word_name_used_as_a_word() -> None:
    # A user asks "what is the sum of 3 and 4" of a tool called ``sum``: only the name quoted
    # as a name, or written as an identifier, names the tool (as in a question, tool_names).
    reply = """1. What is the sum of 3 and 4?
2. Use the 'sum' tool to add 1 and 2.
3. Add up 7.5 and 2.25, then tell me the summary.
4. Call `Sum` with 5 and 6."""
    assert parse_requests(reply, 5, "sum") == [
        "What is the sum of 3 and 4?",
        "Add up 7.5 and 2.25, then tell me the summary.",
    ]
    # an identifier-shaped name counts wherever it stands as a word, in any case
    assert parse_requests("Run Get_Weather for Rome\nWill it rain in Rome?", 5, "get_weather") == [
        "Will it rain in Rome?"
    ]
    # a name of another shape still counts wherever its text appears
    assert parse_requests("Get weather in Rome\nWill it rain?", 5, "get weather") == [
        "Will it rain?"
    ]


@pytest.fixture
def cards() -> list[ToolCard]:
    return load_tool_list(FIXTURES / "tools_small.json")


def test_requests_are_cached_per_card_version(cards: list[ToolCard], tmp_path: Path) -> None:
    llm = ScriptedLLM([REPLY, "Swap 100 euros into yen", "Will it hail in Bergen?"])
    store = SyntheticQueries(tmp_path / "s.sqlite", llm, per_card=2)
    assert store.fill(cards[:2]) == 2
    assert store.fill(cards[:2]) == 0 and llm.remaining == 1  # resumed: nothing to write
    weather = cards[0]
    reader = SyntheticQueries(tmp_path / "s.sqlite")  # no LLM: reads what any model wrote
    augmented = reader.augment(cards)
    assert augmented[0].synthetic == [
        "Do I need an umbrella in Oslo tomorrow?",
        "How windy is it in Lisbon right now?",
    ]
    assert augmented[1].synthetic == ["Swap 100 euros into yen"]
    assert augmented[2:] == cards[2:]  # nothing cached: unchanged
    # the document and its version stay: only the requests are embedded (one vector each)
    assert augmented[0].document() == weather.document()
    assert augmented[0].content_hash() == weather.content_hash()
    assert augmented[0].requests_hash() != weather.requests_hash()
    changed = weather.model_copy(update={"description": weather.description + " Also hail."})
    assert reader.cached(changed) is None  # a new version of the card: new requests
    with pytest.raises(ConfigError, match="toolrag tools synth"):
        reader.generate(changed)
    assert store.generate(changed) == ["Will it hail in Bergen?"]
    # the prompt shows the card's document, without requests written for an older version
    prompt = llm.prompts[-1][-1].content or ""
    assert "Also hail." in prompt and "Do I need" not in prompt
    assert store.generate(augmented[0].model_copy(update={"synthetic": []})) == (
        augmented[0].synthetic
    )  # the key is the card's version, whatever requests it carries


def test_a_card_with_reviewed_requests_is_not_written_for(
    cards: list[ToolCard], tmp_path: Path
) -> None:
    reviewed = cards[0].model_copy(update={"synthetic": ["Is it sunny in Rome?"]})
    llm = ScriptedLLM(["Swap 100 euros into yen"])
    store = SyntheticQueries(tmp_path / "s.sqlite", llm, per_card=1)
    assert store.fill([reviewed, cards[1]]) == 1 and llm.remaining == 0
    assert store.cached(reviewed) is None and store.cached(cards[1]) == ["Swap 100 euros into yen"]


def test_a_larger_per_card_adds_requests_to_the_cached_ones(
    cards: list[ToolCard], tmp_path: Path
) -> None:
    path = tmp_path / "s.sqlite"
    # a cache written before the store kept how many requests were asked for
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE requests (card_hash TEXT, model TEXT, name TEXT, requests TEXT, "
            "PRIMARY KEY (card_hash, model))"
        )
        db.execute(
            "INSERT INTO requests VALUES (?, 'scripted', 'get_weather', ?)",
            (cards[0].content_hash(), json.dumps(["Do I need an umbrella in Oslo tomorrow?"])),
        )
    db.close()
    assert SyntheticQueries(path).cached(cards[0]) == ["Do I need an umbrella in Oslo tomorrow?"]
    with sqlite3.connect(path) as db:  # a reader leaves the older file as it was
        assert "asked" not in {row[1] for row in db.execute("PRAGMA table_info(requests)")}
    db.close()
    more = "Do I need an umbrella in Oslo tomorrow?\nIs it snowing in Tromso?\nHow hot is Cairo?"
    llm = ScriptedLLM([more, "Swap 100 euros into yen"])
    store = SyntheticQueries(path, llm, per_card=3)
    assert SyntheticQueries(path, ScriptedLLM([]), per_card=1).fill(cards[:1]) == 0  # has 1
    assert store.fill(cards[:2]) == 2
    prompt = llm.prompts[0][-1].content or ""
    assert "Do I need an umbrella in Oslo tomorrow?" in prompt and "Write 2 more" in prompt
    assert store.cached(cards[0]) == [
        "Do I need an umbrella in Oslo tomorrow?",  # kept, and not written twice
        "Is it snowing in Tromso?",
        "How hot is Cairo?",
    ]
    # the second card's reply held one request of three: a re-run does not ask again
    assert store.cached(cards[1]) == ["Swap 100 euros into yen"]
    assert store.fill(cards[:2]) == 0 and store.generate(cards[1]) == ["Swap 100 euros into yen"]


def test_synth_cli_then_eval_with_the_requests(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    pool = json.loads((FIXTURES / "tools_small.json").read_text())
    tools.write_text(json.dumps([pool[0], pool[2]]))  # get_weather, send_email
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps(["Will it be sunny in Rome tomorrow?", "Tell Ana it will snow"]))
    env = {
        "TOOLRAG_LLM_PROVIDER": "scripted",
        "TOOLRAG_SCRIPTED_TURNS_FILE": str(turns),
        "TOOLRAG_STATE_DIR": str(tmp_path / "state"),
    }
    proc = run_cli("tools", "synth", "--tools", str(tools), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "wrote requests for 2 card(s); 2 of 2 have them" in proc.stdout
    queries = tmp_path / "q.jsonl"
    query = {
        "id": "a",
        "query": "Tell Ana it will snow in Denver",
        "expected_tools": ["send_email"],
    }
    queries.write_text(json.dumps(query) + "\n")
    recall = {}
    for flag in ("--synthetic", None):
        proc = run_cli(
            "eval", "tools", "--tools", str(tools), "--queries", str(queries),
            "--strategy", "dense", "--json", "--misses", str(tmp_path / "m.jsonl"),
            *([flag] if flag else []), env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        recall[flag] = json.loads(proc.stdout)["recall@1"]
    # "snow in Denver" reads like weather; the request written for send_email wins it back
    assert recall == {"--synthetic": 1.0, None: 0.0}


def test_the_toolbox_indexes_the_requests_written_for_its_tools(tmp_path: Path) -> None:
    from toolrag import Settings, Toolbox

    from ..conftest import DATA

    state, idx = tmp_path / "state", tmp_path / "idx"
    # the sample's toolspecs without the requests it ships (toolspecs/cards/requests.yaml)
    toolspecs = tmp_path / "toolspecs"
    shutil.copytree(DATA.parent / "toolspecs", toolspecs)
    shipped = yaml.safe_load((toolspecs / "cards" / "requests.yaml").read_text())
    (toolspecs / "cards" / "requests.yaml").unlink()
    settings = Settings(
        data_dir=DATA, index_dir=idx, state_dir=state, toolspecs_dir=toolspecs,
        llm_provider="scripted",
    )  # fmt: skip
    card = Toolbox(settings).cards()[0]
    assert not card.synthetic
    store = SyntheticQueries(settings.synthetic_db, ScriptedLLM(["Which sheets show the lobby?"]))
    store.generate(card)
    index = Toolbox(settings).tool_index
    assert index.cards[card.id].synthetic == ["Which sheets show the lobby?"]
    rows = index._requests_table().to_arrow().select(["id", "text"]).to_pylist()
    assert rows == [{"id": card.id, "text": "Which sheets show the lobby?"}]
    # requests a YAML card gives were reviewed: they win over the cache
    (toolspecs / "cards" / "requests.yaml").write_text(yaml.safe_dump(shipped))
    card = Toolbox(settings).cards()[0]
    assert card.synthetic and card.synthetic != ["Which sheets show the lobby?"]
    assert SyntheticQueries(settings.synthetic_db).augment([card])[0].synthetic == card.synthetic


def test_a_card_whose_reply_held_no_request_is_not_covered(
    cards: list[ToolCard], tmp_path: Path
) -> None:
    # the second reply names the tool on every line, so nothing of it is kept
    second = cards[1].name
    llm = ScriptedLLM(["Will it hail in Bergen?", f"1. call {second} now\n2. run {second}"])
    store = SyntheticQueries(tmp_path / "s.sqlite", llm, per_card=2)
    assert store.fill(cards[:2]) == 2
    assert store.cached(cards[1]) == []
    assert store.covered(cards[:2]) == 1
    # the next run asks again for that card only
    store.llm = ScriptedLLM(["Is it windy in Bergen?"])
    assert store.fill(cards[:2]) == 1
    assert store.cached(cards[1]) == ["Is it windy in Bergen?"]
    assert store.covered(cards[:2]) == 2 and store.fill(cards[:2]) == 0


def test_parse_requests_drops_code_and_introductions_and_unwraps_emphasis() -> None:
    # what the local model wrote for a shop database's run_sql
    reply = """Here are three requests:
1. **Which customer spent the most last month?**
   ```sql
   SELECT customer_id, SUM(total)
     customer_id, city
   );
   ```
SELECT customer_id, COUNT(*) AS total_orders
**Total number of orders placed by each customer:**
);
### How many orders were placed in May?
These requests demonstrate different types of SQL operations such as counting.
Select every customer from London"""
    assert parse_requests(reply, 5, "run_sql") == [
        "Which customer spent the most last month?",
        "How many orders were placed in May?",
        "Select every customer from London",
    ]
