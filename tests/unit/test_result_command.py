"""A result file's command names the ``TOOLRAG_*`` settings its run's environment set (so one
command reproduces a run made with a setting switched off), never a secret."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchmarks import results


def test_the_command_names_the_settings_the_environment_set(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(results, "ROOT", tmp_path)  # not a git checkout: no commit read
    monkeypatch.setattr(results, "RESULTS", tmp_path / "results")
    for name in [k for k in os.environ if k.startswith("TOOLRAG_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOOLRAG_LOCAL_DRAFT_TOKENS", "0")
    monkeypatch.setenv("TOOLRAG_AGENT_MODE", "router+react")
    monkeypatch.setenv("TOOLRAG_SQL_URL", "sqlite:///my data.db")
    monkeypatch.setenv("TOOLRAG_PG_URL", "postgresql://me:hunter2@db:5432/x")
    monkeypatch.setenv("TOOLRAG_OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("TOOLRAG_SERVER_TOKEN", "t0ken")
    path = results.write_result("demo_x", {}, module="agent", argv=["--sets", "fresh"])
    command = json.loads(path.read_text())["command"]
    assert command == (
        "TOOLRAG_AGENT_MODE=router+react TOOLRAG_LOCAL_DRAFT_TOKENS=0 "
        "TOOLRAG_PG_URL='postgresql://***@db:5432/x' TOOLRAG_SQL_URL='sqlite:///my data.db' "
        "python -m benchmarks.agent --sets fresh"
    )
