"""Shared fixtures: real LanceDB on temporary folders, the real embedding model, the sample data.

The LLM is the only fake (the ``scripted`` LLM); tests marked ``local_llm`` use the real one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from toolrag import Settings, Toolbox

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's keys, config file or provider choice."""
    for var in list(os.environ):
        if var.startswith("TOOLRAG_") or var in ("OPENAI_API_KEY", "OPENAI_API_BASE"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TOOLRAG_CONFIG", str(tmp_path / "no-such-toolrag.toml"))


@pytest.fixture(scope="session")
def sample_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole sample domain indexed once per session (OCR included)."""
    index_dir = tmp_path_factory.mktemp("indexes")
    reports = Toolbox(Settings(data_dir=DATA, index_dir=index_dir)).index()
    errors = [e for r in reports for e in r.errors]
    assert not errors, errors
    return index_dir


@pytest.fixture
def sample_settings(sample_index_dir: Path) -> Settings:
    return Settings(data_dir=DATA, index_dir=sample_index_dir, llm_provider="scripted")


@pytest.fixture
def toolbox_factory(sample_settings: Settings) -> Iterator[object]:
    def make(turns: list[str]) -> Toolbox:
        return Toolbox(sample_settings, scripted_turns=turns)

    yield make


def react(tool: str, args: dict[str, object], thought: str = "I need a tool.") -> str:
    """One ReAct tool-call turn as the model would write it."""
    return f"Thought: {thought}\nAction: {tool}\nAction Input: {json.dumps(args)}"


def final(answer: str) -> str:
    return f"Thought: I can answer without using any more tools.\nAnswer: {answer}"
