"""The CLI: one-line errors for bad input, and `ask --json` printing only JSON on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolrag import Settings

from ..conftest import DATA, TEST_ENV, final, react


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TOOLRAG_") and k != "OPENAI_API_KEY"
    }
    full_env.update({**TEST_ENV, **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "toolrag.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=300,
        check=False,
    )


def scripted_env(index_dir: Path, tmp_path: Path, turns: list[str]) -> dict[str, str]:
    """Environment for a CLI run on the sample indexes with the scripted LLM playing ``turns``."""
    path = tmp_path / "turns.json"
    path.write_text(json.dumps(turns))
    return {
        "TOOLRAG_INDEX_DIR": str(index_dir),
        "TOOLRAG_DATA_DIR": str(DATA),
        "TOOLRAG_STATE_DIR": str(tmp_path / "state"),
        "TOOLRAG_LLM_PROVIDER": "scripted",
        "TOOLRAG_SCRIPTED_TURNS_FILE": str(path),
    }


def assert_one_line_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert needle in lines[0]


def test_empty_question(tmp_path: Path) -> None:
    proc = run_cli(
        "ask", "  ", env={"TOOLRAG_INDEX_DIR": str(tmp_path), "TOOLRAG_LLM_PROVIDER": "scripted"}
    )
    assert_one_line_error(proc, "question is empty")


def test_missing_index(tmp_path: Path) -> None:
    proc = run_cli(
        "ask",
        "When is the hotel finished?",
        env={"TOOLRAG_INDEX_DIR": str(tmp_path / "nothing"), "TOOLRAG_LLM_PROVIDER": "scripted"},
    )
    assert_one_line_error(proc, "toolrag index")


def test_missing_data_dir(tmp_path: Path) -> None:
    proc = run_cli("index", "--data-dir", str(tmp_path / "nope"), "--index-dir", str(tmp_path))
    assert_one_line_error(proc, "does not exist")


def test_ask_json_prints_only_json(sample_settings: Settings, tmp_path: Path) -> None:
    turns = tmp_path / "turns.json"
    turns.write_text(
        json.dumps(
            [
                react("get_project_schedule", {"project": "Cedar Valley Fire Station 7"}),
                final("Substantial completion was reached on 2025-12-12."),
            ]
        )
    )
    proc = run_cli(
        "ask",
        "When did Fire Station 7 reach substantial completion?",
        "--json",
        env={
            "TOOLRAG_INDEX_DIR": str(sample_settings.index_dir),
            "TOOLRAG_DATA_DIR": str(DATA),
            "TOOLRAG_LLM_PROVIDER": "scripted",
            "TOOLRAG_SCRIPTED_TURNS_FILE": str(turns),
        },
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)  # stdout is exactly one JSON object
    assert set(payload) == {"answer", "sources", "trace", "approvals", "run_id"}
    assert "2025-12-12" in payload["answer"]
    assert payload["trace"][0]["tool"] == "get_project_schedule"
    assert payload["trace"][0]["arguments"] == {"project": "Cedar Valley Fire Station 7"}
    assert payload["sources"][0]["file"] == "schedules/GRB-104.csv"


def test_ask_prints_brackets_from_the_model_and_the_tools_as_written(
    sample_settings: Settings, tmp_path: Path
) -> None:
    """rich read "[M-104-10]" as markup and dropped it from the sources line."""
    args = {"project": "Cedar Valley Fire Station 7", "query": "substantial completion"}
    turns = [react("get_project_schedule", args), final("[bold]2025-12-12[/bold] [see M-104-10]")]
    env = scripted_env(sample_settings.index_dir, tmp_path, turns)
    proc = run_cli(
        "ask", "When did Fire Station 7 reach [substantial] completion?", "--trace", env=env
    )
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())  # rich wraps long lines
    assert "Q: When did Fire Station 7 reach [substantial] completion?" in out
    assert "A: [bold]2025-12-12[/bold] [see M-104-10]" in out
    assert "schedules/GRB-104.csv [M-104-10]" in out
    assert '"query": "substantial completion"' in out


def test_ask_with_a_gate_says_no_tool_fits(sample_settings: Settings, tmp_path: Path) -> None:
    env = scripted_env(sample_settings.index_dir, tmp_path, [final("Paris.")])
    # the question's best cosine with a sample tool is about 0.14
    proc = run_cli(
        "ask", "What is the capital of France?", "--trace", env={**env, "TOOLRAG_TOOL_GATE": "0.2"}
    )
    assert proc.returncode == 0, proc.stderr
    assert "A: Paris." in proc.stdout
    assert "Tools retrieved: none (no tool fits the question)" in proc.stdout


@pytest.mark.parametrize("args", [["--help"], ["config", "show"]])
def test_help_and_config(args: list[str]) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 0 and proc.stdout


def test_audit_tail_and_summary(tmp_path: Path) -> None:
    from toolrag.guard import AuditLog

    env = {"TOOLRAG_STATE_DIR": str(tmp_path)}
    missing = run_cli("audit", "tail", env=env)
    assert missing.returncode == 1 and "No audit log" in missing.stderr
    log = AuditLog(tmp_path / "audit.sqlite")
    for ms, status in [(3.0, "ok"), (5.0, "ok"), (40.0, "timeout")]:
        log.record(
            agent="toolrag/default", run_id="run-1", tool="list_rfis", version="1",
            side_effect="read", arguments={"note": "mail ann@example.com"}, status=status,
            error_code="TIMEOUT" if status == "timeout" else None, latency_ms=ms,
        )  # fmt: skip
    log.record(
        agent="toolrag/reader", run_id="run-2", tool="cancel_inspection", version="1",
        side_effect="delete", arguments={"inspection_id": "INSP-101-06"}, status="denied",
        error_code="APPROVAL_DENIED", latency_ms=0.2,
    )  # fmt: skip
    tail = run_cli("audit", "tail", "-n", "2", "--json", env=env)
    assert tail.returncode == 0, tail.stderr
    rows = [json.loads(line) for line in tail.stdout.splitlines()]
    assert [r["status"] for r in rows] == ["timeout", "denied"]
    assert rows[0]["arguments"] == {"note": "mail [REDACTED-EMAIL]"}
    summary = run_cli("audit", "summary", "--json", env=env)
    stats = {s["tool"]: s for s in map(json.loads, summary.stdout.splitlines())}
    assert stats["list_rfis"]["calls"] == 3 and stats["list_rfis"]["errors"] == 1
    assert stats["list_rfis"]["p50_ms"] == 5.0 and stats["list_rfis"]["p95_ms"] == 40.0
    assert stats["cancel_inspection"]["refused"] == 1
    table = run_cli("audit", "summary", env=env)
    assert "list_rfis" in table.stdout and "p95" in table.stdout
