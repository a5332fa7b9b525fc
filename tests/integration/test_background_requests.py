"""Example requests written for a user's own tools without a separate command: in the
background by default (a process of its own), or during `toolrag index`, and picked up by the
tool index at the next question."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.tools import FunctionTool
from pydantic import SecretStr

from toolrag import Settings, Toolbox
from toolrag.cards import background
from toolrag.models.scripted import ScriptedLLM


def count_pallets(warehouse: str) -> int:
    """Count the pallets stored in one warehouse today."""
    return len(warehouse)


def ship_parcel(address: str, weight_kg: float) -> str:
    """Book a courier to ship a parcel of the given weight to an address."""
    return f"booked {weight_kg} kg to {address}"


REQUESTS = [
    "How many pallets are in the Leeds warehouse?\nPallet count for depot 4?\nPallets at Hull",
    "Send a 2 kg box to 10 Main St\nShip this parcel to Paris\nCourier for a 5 kg package",
]


def _settings(tmp_path: Path, **extra: object) -> Settings:
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)
    (tmp_path / "specs").mkdir(exist_ok=True)
    return Settings(
        data_dir=tmp_path / "data",
        index_dir=tmp_path / "indexes",
        state_dir=tmp_path / "state",
        toolspecs_dir=tmp_path / "specs",
        **extra,  # type: ignore[arg-type]
    )


def _toolbox(settings: Settings, llm: ScriptedLLM | None = None) -> Toolbox:
    tools = [
        FunctionTool.from_defaults(fn=count_pallets),
        FunctionTool.from_defaults(fn=ship_parcel),
    ]
    return Toolbox(settings, llm=llm, embed=MockEmbedding(embed_dim=8), tools=tools)


def _written(tb: Toolbox) -> dict[str, list[str]]:
    own = ("count_pallets", "ship_parcel")
    return {c.name: list(c.synthetic) for c in tb.tool_index.cards.values() if c.name in own}


def test_settings_reach_the_writer_process_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(
        tmp_path, api_key=SecretStr("sk-secret"), tool_gate=0.3, llm_provider="openai_like"
    )
    env = background.settings_env(settings)
    assert env["TOOLRAG_API_KEY"] == "sk-secret"  # the value, not pydantic's mask
    assert env["TOOLRAG_TOOLSPECS_DIR"] == str(tmp_path / "specs")
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    again = Settings()  # what the child process reads
    for name in ("state_dir", "collections_file", "tool_gate", "llm_provider", "toolspecs_dir"):
        assert getattr(again, name) == getattr(settings, name), name
    assert again.api_key is not None and again.api_key.get_secret_value() == "sk-secret"


def test_index_mode_writes_requests_that_the_tool_index_then_uses(tmp_path: Path) -> None:
    llm = ScriptedLLM(REQUESTS)
    tb = _toolbox(_settings(tmp_path, write_requests="index"), llm)
    assert {c.name for c in tb.missing_requests()} >= {"count_pallets", "ship_parcel"}
    tb.index()
    assert tb.requests_status and "wrote example requests for 2 of 2" in tb.requests_status
    assert _written(tb) == {
        "count_pallets": REQUESTS[0].split("\n"),
        "ship_parcel": REQUESTS[1].split("\n"),
    }
    assert not tb.missing_requests()
    # a second index writes nothing: the requests are cached per card version
    tb.index()
    assert tb.requests_status is None and llm.remaining == 0


def test_index_chooses_the_gate_from_the_requests_and_keeps_it_beside_the_tool_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`toolrag index` chooses the automatic gate once the requests are written, so the first
    question does not; a new process reads it back. A fixed gate, or a writer still at work,
    chooses nothing then."""
    goods = ["pallets", "crates", "drums", "coils", "bales", "kegs", "rolls", "sacks"]
    tools = [
        FunctionTool.from_defaults(
            fn=count_pallets, name=f"count_{g}", description=f"Count the {g} in one warehouse."
        )
        for g in goods
    ]
    many = [f"How many {g} are in Leeds?\n{g} at depot 4\nCount {g} in Hull" for g in goods]

    def make(settings: Settings, llm: ScriptedLLM | None = None) -> Toolbox:
        return Toolbox(settings, llm=llm, embed=MockEmbedding(embed_dim=8), tools=tools)

    tb = make(_settings(tmp_path, write_requests="index"), ScriptedLLM(many))
    tb.index()
    assert tb.gate_status is not None, tb.requests_status
    assert tb.gate_status.startswith("tool gate ("), tb.gate_status
    assert "chosen from 24 written requests" in tb.gate_status
    assert (tmp_path / "indexes" / "tools_gate.json").is_file()
    again = make(_settings(tmp_path, write_requests="off"))  # another process
    assert again.gate == tb.gate and again.gate.gate is not None

    fixed = make(
        _settings(tmp_path / "fixed", write_requests="index", tool_gate=0.3), ScriptedLLM(many)
    )
    fixed.index()
    assert fixed.gate_status is None
    assert not (tmp_path / "fixed" / "indexes" / "tools_gate.json").exists()
    few = _toolbox(_settings(tmp_path / "few", write_requests="index"), ScriptedLLM(REQUESTS))
    few.index()
    assert few.gate_status is not None and few.gate_status.startswith("no tool gate chosen: 6 ")
    monkeypatch.setattr(background, "start", lambda settings, cards: 4242)
    busy = make(
        _settings(tmp_path / "busy", llm_provider="openai_like", write_requests="background")
    )
    busy.index()
    assert busy.requests_status and "pid 4242" in busy.requests_status
    assert busy.gate_status is None  # chosen from the requests once they are written


def test_off_or_a_scripted_provider_writes_nothing(tmp_path: Path) -> None:
    tb = _toolbox(_settings(tmp_path, write_requests="off"), ScriptedLLM([]))
    tb.index()
    assert tb.requests_status is None
    scripted = _toolbox(_settings(tmp_path / "s", llm_provider="scripted"))
    scripted.index()
    assert scripted.requests_status is None
    assert not background.log_file(scripted.settings).exists()  # no process was started


def test_the_background_writer_runs_in_its_own_process_and_is_picked_up(tmp_path: Path) -> None:
    """The process gets the cards and the settings (a scripted LLM from a turns file here),
    writes into the cache, touches the done marker; the toolbox's next question rebuilds its
    tool index with the requests. A second start while one runs does nothing."""
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps(REQUESTS))
    settings = _settings(tmp_path, llm_provider="scripted", scripted_turns_file=turns)
    tb = _toolbox(settings)
    tb.index()
    before = _written(tb)
    assert before == {"count_pallets": [], "ship_parcel": []}
    missing = [c for c in tb.missing_requests() if c.name in before]

    with background._lock(settings):  # a writer is running: no second one starts
        assert background.running(settings)
        assert background.start(settings, missing) is None

    assert background.start(settings, missing) is not None
    marker = background.done_marker(settings)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    log = background.log_file(settings).read_text()
    assert marker.exists(), log
    assert json.loads(marker.read_text())["written"] == 2, log

    tb._pick_up_requests()  # what each question does first
    assert _written(tb) == {
        "count_pallets": REQUESTS[0].split("\n"),
        "ship_parcel": REQUESTS[1].split("\n"),
    }


@pytest.mark.parametrize("value", ["sometimes"])
def test_an_unknown_mode_is_refused(tmp_path: Path, value: str) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        _settings(tmp_path, write_requests=value)
