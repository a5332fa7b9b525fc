"""The fresh and held-out (unseen) question sets: every answer recomputed from the raw data by
scripts/verify_questions.py, no id or query shared with the older sets, every kind represented.

Failure messages name question ids only, never an unseen question's text or answer."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from toolrag.batch.questions import load_questions

from ..conftest import DATA, REPO

QUESTIONS = DATA / "questions"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    path = REPO / "scripts" / "verify_questions.py"
    spec = importlib.util.spec_from_file_location("verify_questions", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8-sig").splitlines() if x.strip()]


def _new(script: ModuleType) -> list[dict[str, Any]]:
    return [q for name in script.FILES for q in _read(QUESTIONS / name)]


def _older(script: ModuleType) -> list[dict[str, Any]]:
    return [
        q
        for path in sorted(QUESTIONS.glob("*.jsonl"))
        if path.name not in script.FILES
        for q in _read(path)
    ]


def _key(query: Any) -> str:
    return re.sub(r"\s+", " ", str(query)).strip().casefold()


def test_answers_agree_with_the_data(script: ModuleType) -> None:
    assert script.verify(DATA) == []


def test_sets_load_as_questions(script: ModuleType) -> None:
    for name in script.FILES:
        loaded = load_questions(QUESTIONS / name)
        assert loaded, name
        assert len({q.id for q in loaded}) == len(loaded), name


def test_no_id_or_query_shared_with_older_sets(script: ModuleType) -> None:
    new, older = _new(script), _older(script)
    assert older, "no older question sets found"
    old_ids = {q["id"] for q in older}
    old_queries = {_key(q["query"]) for q in older}
    assert sorted(q["id"] for q in new if q["id"] in old_ids) == []
    assert sorted(q["id"] for q in new if _key(q["query"]) in old_queries) == []
    repeated = [k for k, n in Counter(_key(q["query"]) for q in new).items() if n > 1]
    assert len(repeated) == 0, "a query repeats within the new sets"
    assert len({q["id"] for q in new}) == len(new)


def test_kinds_meet_their_minimums_and_unseen_has_each(script: ModuleType) -> None:
    new = _new(script)
    counts = Counter(str(q["kind"]) for q in new)
    for kind, least in script.MIN_KINDS.items():
        assert counts[kind] >= least, kind
    assert set(counts) == set(script.MIN_KINDS)
    multi = [q for q in new if q["kind"] == "multi_tool"]
    assert sum(len(q["expected_tools"]) >= 3 for q in multi) >= script.MIN_THREE_TOOL
    assert len(new) >= 48
    unseen = Counter(str(q["kind"]) for q in _read(QUESTIONS / script.HELD_OUT))
    assert set(unseen) == set(script.MIN_KINDS)
    fresh_share = 1 - sum(unseen.values()) / len(new)
    assert 0.70 <= fresh_share <= 0.80


def test_verify_catches_a_changed_fact(script: ModuleType, tmp_path: Path) -> None:
    """A copy of the data with one subcontract amount changed fails that question."""
    copy = tmp_path / "data"
    shutil.copytree(DATA, copy, ignore=shutil.ignore_patterns("*.png", "*.pdf"))
    seed = copy / "db" / "seed.sql"
    text = seed.read_text(encoding="utf-8")
    row = re.search(r"\('SC-112-02', [^\n]*", text)
    assert row
    seed.write_text(text.replace(row[0], row[0].replace(".00,", "1.00,", 1)), encoding="utf-8")
    problems = script.verify(copy)
    assert any(p.startswith("fq-008 ") for p in problems), problems
