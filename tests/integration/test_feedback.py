"""The feedback loop: routed decisions are logged with their outcome, rated, and the good ones
promoted into few-shot examples (never one that leaks a test question)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from toolrag import Settings, Toolbox
from toolrag.batch.questions import load_questions
from toolrag.errors import InputError

from ..conftest import DATA
from .test_cli import run_cli, scripted_env

SCHEDULE = "get_project_schedule"


def _decision(project: str, tool: str = SCHEDULE, **arguments: str) -> str:
    call = {"tool": tool, "arguments": {"project": project, **arguments}}
    return json.dumps({"action": "call_tools", "calls": [call]})


def test_decisions_are_logged_rated_and_promoted(toolbox_factory: Callable[..., Toolbox]) -> None:
    test_question = load_questions(DATA / "questions" / "test.jsonl")[0].query
    # the third question asks for the Summit Ridge Hotel's structural sheets: a code it does not
    # give would be sent back to the repair round (toolrag.guard.grounding.values), its name is
    # grounded
    sheets = _decision("Summit Ridge Hotel", "search_blueprints", query="structural")
    tb = toolbox_factory([_decision("GRB-104"), _decision("GRB-101"), sheets])
    seeded = len(tb.example_store)
    assert seeded > 0 and {e.source for e in tb.example_store._examples} >= {"card", "questions"}
    good = tb.route("Show me the milestone dates of the Fire Station 7 job")
    bad = tb.route("What are the milestones for GRB-101?")
    leak = tb.route(test_question)
    assert good.valid and good.results[0].success and good.id
    records = {r.id: r for r in tb.decisions.records()}
    assert records[good.id].calls_ok is True and records[good.id].rating is None
    tb.rate_decision(good.id, True)
    tb.rate_decision(bad.id, False)
    tb.rate_decision(leak.id, True)
    with pytest.raises(InputError):
        tb.rate_decision("no-such-id", True)
    added, refused = tb.decisions.promote(tb.example_store)
    assert added == 1  # the good one; the bad one never, the leaking one refused
    assert len(refused) == 1 and "cosine" in refused[0]
    promoted = [e for e in tb.example_store._examples if e.source == "promoted"]
    assert [e.query for e in promoted] == ["Show me the milestone dates of the Fire Station 7 job"]
    assert promoted[0].calls[0].arguments == {"project": "GRB-104"}
    assert tb.decisions.promote(tb.example_store) == (0, [])  # promoted once only
    # The promoted example is now chosen for a similar question.
    picked = tb.example_store.select("milestone dates of the Fire Station 7 project", k=1)
    assert picked[0][1].source == "promoted"


def test_route_and_examples_cli(sample_settings: Settings, tmp_path: Path) -> None:
    env = scripted_env(sample_settings.index_dir, tmp_path, [_decision("GRB-104")])
    proc = run_cli("route", "Milestone dates of the Fire Station 7 job?", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["valid"] and result["decision"]["calls"][0]["tool"] == SCHEDULE
    assert result["results"][0]["success"] is True
    rated = run_cli("examples", "rate", result["id"], "--good", env=env)
    assert rated.returncode == 0, rated.stderr
    promoted = run_cli("examples", "promote", env=env)
    assert promoted.returncode == 0 and "1 examples added" in promoted.stdout
    missing = run_cli("examples", "rate", "nope", env=env)
    assert missing.returncode == 2 and "No routing decision" in missing.stderr
