"""Tools from MCP servers nobody here wrote: the reference servers ``mcp-server-time`` and
``mcp-server-git`` (PyPI) over stdio, named in a ``toolspecs/mcp.yaml``. Their tools load
through ``llama-index-tools-mcp``, become cards with side effects from their annotations (or the
config), are retrieved for fitting questions, and the agent calls them through the guard with
the scripted LLM: a time conversion and ``git log`` on a temporary repository."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolrag import ScriptedLLM, Toolbox
from toolrag.settings import Settings
from toolrag.tools.mcp_source import MCPServerConfig, side_effect_from_annotations

from ..conftest import REPO, final, react


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gitrepo")
    git = ["git", "-C", str(path), "-c", "user.email=qa@example.com", "-c", "user.name=QA"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for i, message in enumerate(["Add footing schedule", "Revise slab thickness to 6 in"]):
        (path / f"note{i}.txt").write_text(message)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", message], check=True)
    return path


@pytest.fixture(scope="module")
def toolbox_settings(tmp_path_factory: pytest.TempPathFactory, repo: Path) -> Settings:
    specs = tmp_path_factory.mktemp("toolspecs")
    shutil.copytree(REPO / "toolspecs" / "cards", specs / "cards")
    servers = {
        "servers": [
            {"name": "time", "command": [sys.executable, "-m", "mcp_server_time",
                                         "--local-timezone", "UTC"]},
            {"name": "git", "command": [sys.executable, "-m", "mcp_server_git",
                                        "--repository", str(repo)],
             "side_effects": {"git_commit": "delete"}},
        ]
    }  # fmt: skip
    (specs / "mcp.yaml").write_text(yaml.safe_dump(servers))
    tmp = tmp_path_factory.mktemp("mcpclient")
    return Settings(
        data_dir=REPO / "data",
        index_dir=tmp / "indexes",
        state_dir=tmp / "state",
        toolspecs_dir=specs,
        llm_provider="scripted",
    )


def test_tools_load_as_cards_with_side_effects(toolbox_settings: Settings) -> None:
    cards = {c.name: c for c in Toolbox(toolbox_settings).cards()}
    assert {"get_current_time", "convert_time", "git_log", "git_status", "git_commit"} <= set(cards)
    assert cards["convert_time"].side_effect == "read"  # from the server's annotations
    assert cards["git_reset"].side_effect == "delete"  # destructive_hint
    assert cards["git_create_branch"].side_effect == "write"
    assert cards["git_commit"].side_effect == "delete"  # the config overrides the annotations
    assert "mcp:git" in cards["git_log"].tags
    assert cards["convert_time"].parameters["required"] == [
        "source_timezone", "time", "target_timezone"
    ]  # fmt: skip


def test_mcp_tools_are_retrieved_for_fitting_questions(toolbox_settings: Settings) -> None:
    retriever = Toolbox(toolbox_settings).tool_retriever()

    def names(question: str) -> list[str]:
        return [t.metadata.get_name() for t in retriever.retrieve(question)]

    assert "convert_time" in names("What time is 9:30 in New York when converted to Tokyo time?")
    assert "git_log" in names("Show the recent commit history log of the git repository")


def test_the_agent_converts_a_time_through_the_guard(toolbox_settings: Settings) -> None:
    args = {"source_timezone": "America/New_York", "time": "09:30",
            "target_timezone": "Asia/Tokyo"}  # fmt: skip
    tb = Toolbox(toolbox_settings, llm=ScriptedLLM([react("convert_time", args), final("23:30.")]))
    answer = tb.ask("What time is 09:30 in New York in Tokyo?")
    step = answer.trace[0]
    assert step.tool == "convert_time" and step.success, step.observation
    data = json.loads(step.observation)["data"]
    converted = data if isinstance(data, dict) else json.loads(data)
    assert converted["target"]["timezone"] == "Asia/Tokyo"
    assert converted["target"]["datetime"][11:16] in ("22:30", "23:30")  # DST-dependent
    records = tb.guard.audit.tail(1) if tb.guard.audit else []
    assert records and records[0].tool == "convert_time" and records[0].status == "ok"


def test_the_agent_reads_git_log_and_a_gated_commit_waits(
    toolbox_settings: Settings, repo: Path
) -> None:
    turns: list[Any] = [
        react("git_log", {"repo_path": str(repo), "max_count": 5}),
        react("git_commit", {"repo_path": str(repo), "message": "sneaky"}),
        final("The last commit revised the slab thickness."),
        final("The last commit revised the slab thickness."),
    ]
    tb = Toolbox(toolbox_settings, llm=ScriptedLLM(turns))
    answer = tb.ask("What was the last commit in the repository?")
    log, commit = answer.trace[0], answer.trace[1]
    assert log.success and "Revise slab thickness to 6 in" in log.observation
    assert commit.error_code == "APPROVAL_DENIED"  # delete class, no approver
    count = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--count", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert count == "2"


def test_bad_server_configs_are_clear() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        MCPServerConfig(name="x")
    assert side_effect_from_annotations(None) == "delete"  # MCP defaults: destructive
