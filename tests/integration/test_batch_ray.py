"""The Ray engine of a batch and the tool-pool build on Ray, on a local cluster of 2 CPUs with
the scripted LLM: the same records as the local engine, a re-run resumes, a question that
raises or times out becomes a record, a killed actor loses no question (and writes no id
twice), a question that kills every actor is recorded as lost while the rest are answered,
and a pool built on Ray holds the local build's rows, so a local re-sync embeds none."""

from __future__ import annotations

import functools
import json
import os
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="needs the Ray extra: pip install 'toolrag[ray]'")

from toolrag import ScriptedLLM, Settings, Toolbox, run_batch  # noqa: E402
from toolrag.batch import Question, read_records  # noqa: E402
from toolrag.models import make_embedding, ray_embed_batches  # noqa: E402
from toolrag.retrieval import ToolIndex  # noqa: E402

from ..conftest import REPO, final, react  # noqa: E402
from .test_cli import run_cli, scripted_env  # noqa: E402

ID = re.compile(r"\[(q\d+)\]")
TOOL_QUERY = "When did Fire Station 7 reach substantial completion?"


class Responder:
    """One scripted turn, decided by the question (any actor may get any question): ``tool``
    questions call the schedule tool then answer, ``raise`` ones fail, ``slow`` ones outlast
    the deadline, a ``kill`` question ends its process the first time (marker file) and a
    ``poison`` one every time."""

    def __init__(self, marker: Path | None = None) -> None:
        self.marker = marker

    def __call__(self, messages: Sequence[Any]) -> str:
        contents = [str(m.content) for m in messages]
        question = next((c for c in contents if ID.search(c)), "")
        found = ID.search(question)
        qid = found.group(1) if found else "?"
        if "kill" in question and self.marker is not None and not self.marker.exists():
            self.marker.write_text("killed once")
            os._exit(1)  # the actor dies mid-question
        if "poison" in question:
            os._exit(1)  # the actor dies on this question every time
        if "raise" in question:
            raise RuntimeError(f"scripted failure in {qid}")
        if "slow" in question:
            for _ in range(600):  # 30 s in slices, so the deadline can stop the thread
                time.sleep(0.05)
        if contents[-1].lstrip().startswith("Observation"):
            return final(f"Substantial completion of {qid} was reached on 2025-12-12.")
        if TOOL_QUERY in question:
            return react("get_project_schedule", {"project": "Cedar Valley Fire Station 7"})
        return final(f"No tool needed for {qid}.")


def scripted_toolbox(settings: Settings, marker: Path | None = None) -> Toolbox:
    """What each actor builds: the test's settings, an LLM playing ``Responder`` turns."""
    return Toolbox(settings, llm=ScriptedLLM([Responder(marker)] * 10_000))


def questions(n: int, extra: Sequence[tuple[str, str]] = ()) -> list[Question]:
    out = []
    for i in range(n):
        qid = f"q{i:02d}"
        if i % 2 == 0:
            out.append(Question(id=qid, query=f"[{qid}] {TOOL_QUERY}", expected_tools=[
                "get_project_schedule"], answer_keywords=["2025-12-12"]))  # fmt: skip
        else:
            out.append(Question(id=qid, query=f"[{qid}] Say hello.", expected_tools=[]))
    for qid, kind in extra:
        out.append(Question(id=qid, query=f"[{qid}] Please {kind} now."))
    return out


def deterministic(path: Path) -> dict[str, tuple[Any, ...]]:
    return {
        i: (r.answer, r.tools_called, r.ok, r.error_code, r.matched, r.tool_ok)
        for i, r in read_records(path).items()
    }


def ids_written(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """One local cluster of 2 CPUs for the module; its workers import this test package."""
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {
                "PYTHONPATH": str(REPO),
                "HF_HUB_OFFLINE": "1",
                "OMP_NUM_THREADS": "1",
                "TOKENIZERS_PARALLELISM": "false",
            }
        },
    )
    yield
    ray.shutdown()


RAY = {"cpus_per_actor": 0.5}


def test_ray_gives_the_local_records_and_resumes(
    cluster: None, sample_settings: Settings, tmp_path: Path
) -> None:
    qs = questions(38, extra=[("q90", "raise"), ("q91", "raise")])
    assert len(qs) == 40
    local_out, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    local = run_batch(scripted_toolbox(sample_settings), qs, local_out, timeout_s=60)
    factory = functools.partial(scripted_toolbox, sample_settings)
    summary = run_batch(
        None, qs, ray_out, timeout_s=60, engine="ray", actors=2, asker_factory=factory,
        threads_per_actor=2, ray_options=RAY,
    )  # fmt: skip
    assert deterministic(ray_out) == deterministic(local_out)
    assert sorted(ids_written(ray_out)) == sorted(q.id for q in qs)  # each id exactly once
    records = read_records(ray_out)
    assert records["q00"].tools_called == ["get_project_schedule"] and records["q00"].matched
    assert records["q01"].tools_called == [] and records["q01"].ok
    assert records["q90"].error_code == "RuntimeError" and "q90" in (records["q90"].error or "")
    assert (summary.answered, summary.failed, summary.skipped) == (38, 2, 0)
    assert summary.model_dump(exclude={"p50_s", "p95_s", "output"}) == local.model_dump(
        exclude={"p50_s", "p95_s", "output"}
    )

    seen: list[str] = []
    again = run_batch(
        None, qs, ray_out, timeout_s=60, engine="ray", actors=2, asker_factory=factory,
        progress=lambda r: seen.append(r.id), ray_options=RAY,
    )  # fmt: skip
    assert again.skipped == 38 and sorted(seen) == ["q90", "q91"]  # only the failures again
    assert len(ids_written(ray_out)) == 42


def test_a_raise_and_a_timeout_become_records_on_ray(
    cluster: None, sample_settings: Settings, tmp_path: Path
) -> None:
    out = tmp_path / "answers.parquet"  # Parquet: the spool is folded in at the end
    qs = questions(0, extra=[("q80", "raise"), ("q81", "slow")])
    # 12 s: a raise must come back well inside the deadline on a loaded CI machine (at 3 s it
    # once did not), while the slow question sleeps 30 s

    summary = run_batch(
        None, qs, out, timeout_s=12, engine="ray", actors=1, threads_per_actor=2,
        asker_factory=functools.partial(scripted_toolbox, sample_settings), ray_options=RAY,
    )  # fmt: skip
    records = read_records(out)
    assert records["q80"].error_code == "RuntimeError" and not records["q80"].ok
    assert records["q81"].error_code == "TIMEOUT" and "12 s" in (records["q81"].error or "")
    assert summary.failed == 2 and summary.total == 2
    assert out.is_file() and not out.with_name(out.name + ".jsonl").exists()


def test_a_killed_actor_loses_no_question(
    cluster: None, sample_settings: Settings, tmp_path: Path
) -> None:
    marker = tmp_path / "killed"
    qs = questions(10, extra=[("q95", "kill")])
    path = tmp_path / "questions.jsonl"  # read by Ray Data
    path.write_text("".join(q.model_dump_json() + "\n" for q in qs))
    out = tmp_path / "answers.jsonl"
    summary = run_batch(
        None, path, out, timeout_s=60, engine="ray", actors=2,
        asker_factory=functools.partial(scripted_toolbox, sample_settings, marker),
        ray_options=RAY,
    )  # fmt: skip
    assert marker.exists()  # an actor did die
    written = ids_written(out)
    assert sorted(written) == sorted(q.id for q in qs)  # every id, exactly once
    records = read_records(out)
    assert all(r.ok for r in records.values()), [r.error for r in records.values() if not r.ok]
    assert records["q95"].answer == "No tool needed for q95."
    assert summary.answered == 11


def test_a_question_that_kills_every_actor_is_recorded_lost_and_the_rest_answered(
    cluster: None, sample_settings: Settings, tmp_path: Path
) -> None:
    qs = questions(6, extra=[("q96", "poison")])
    out = tmp_path / "answers.jsonl"
    summary = run_batch(
        None, qs, out, timeout_s=60, engine="ray", actors=1,
        asker_factory=functools.partial(scripted_toolbox, sample_settings),
        ray_options={**RAY, "max_task_retries": 1},
    )  # fmt: skip
    assert sorted(ids_written(out)) == sorted(q.id for q in qs)  # every id, exactly once
    records = read_records(out)
    lost = records["q96"]
    assert (lost.ok, lost.error_code) == (False, "LOST")
    assert "No answer came back from the cluster" in (lost.error or "")
    assert lost.query == qs[-1].query  # the record names its question
    others = [r for i, r in records.items() if i != "q96"]
    assert all(r.ok for r in others), [(r.id, r.error) for r in others if not r.ok]
    assert (summary.answered, summary.failed) == (6, 1)


def test_the_tool_pool_built_on_ray_holds_the_local_rows(
    cluster: None, sample_settings: Settings, tmp_path: Path
) -> None:
    cards = Toolbox(sample_settings).cards()
    embed = make_embedding(sample_settings)
    local = ToolIndex(tmp_path / "local", embed)
    local_report = local.sync(cards, batch_size=8)
    on_ray = ToolIndex(
        tmp_path / "ray",
        embed,
        embed_batches=ray_embed_batches(sample_settings, actors=2, cpus_per_actor=0.5),
    )
    ray_report = on_ray.sync(cards, batch_size=8)
    assert ray_report.embedded == local_report.embedded == len(cards) > 8
    assert ray_report.requests_embedded == local_report.requests_embedded

    def rows(index: ToolIndex, table: str = "tools") -> dict[str, tuple[Any, ...]]:
        data = index._db.open_table(table).to_arrow().to_pylist()
        return {r["id"]: (r["hash"], r["text"], np.asarray(r["vector"])) for r in data}

    a, b = rows(local), rows(on_ray)
    assert a.keys() == b.keys() == {c.id for c in cards}
    for i in a:
        assert a[i][:2] == b[i][:2]
        assert np.allclose(a[i][2], b[i][2], atol=1e-5)

    again = ToolIndex(tmp_path / "ray", embed).sync(cards, batch_size=8)  # locally, afterwards
    assert (again.embedded, again.requests_embedded, again.unchanged) == (0, 0, len(cards))


def test_the_batch_command_switches_to_ray_with_one_flag(
    sample_settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text(questions(1)[0].model_dump_json() + "\n")
    turns = [
        react("get_project_schedule", {"project": "Cedar Valley Fire Station 7"}),
        final("Substantial completion was reached on 2025-12-12."),
    ]
    out = tmp_path / "answers.jsonl"
    env = scripted_env(sample_settings.index_dir, tmp_path, turns)
    args = ("batch", str(path), "-o", str(out), "--engine", "ray", "--actors", "1")
    proc = run_cli(*args, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Ray: a local cluster" in proc.stderr and "100% of 1" in proc.stdout
    assert read_records(out)["q00"].tools_called == ["get_project_schedule"]


def test_tools_index_on_ray_then_locally_embeds_nothing_twice(tmp_path: Path) -> None:
    tools = REPO / "tests" / "fixtures" / "tools_small.json"
    env = {"TOOLRAG_STATE_DIR": str(tmp_path / "state"), "HF_HUB_OFFLINE": "1"}
    index = ["tools", "index", str(tools), "--index-dir", str(tmp_path / "pool")]
    on_ray = run_cli(*index, "--engine", "ray", "--actors", "1", env=env)
    assert on_ray.returncode == 0, on_ray.stderr
    n = len(json.loads(tools.read_text()))
    assert f"{n} cards: {n} embedded ({n} added" in on_ray.stdout
    local = run_cli(*index, env=env)
    assert local.returncode == 0, local.stderr
    assert f"{n} cards: 0 embedded (0 added, 0 updated), {n} unchanged" in local.stdout


def test_the_content_indexes_built_on_ray_hold_the_local_rows(
    cluster: None, sample_index_dir: Path, tmp_path: Path
) -> None:
    """``toolrag index --engine ray`` on the sample domain: the files are read (OCR included),
    chunked and embedded by Ray actors, and the tables hold the local build's rows; a local
    sync afterwards writes none."""
    from ..conftest import DATA

    on_ray = Toolbox(Settings(data_dir=DATA, index_dir=tmp_path / "ray"))
    reports = on_ray.index(engine="ray", actors=2)
    assert [e for r in reports for e in r.errors] == []
    local = Toolbox(Settings(data_dir=DATA, index_dir=sample_index_dir))
    assert list(on_ray.collection_indexes) == ["documents", "blueprints", "schedules"]
    for ct in on_ray.collection_indexes:

        def rows(tb: Toolbox, ct: str = ct) -> dict[str, dict[str, Any]]:
            return {r["id"]: r for r in tb.collection_indexes[ct].table().to_arrow().to_pylist()}

        a, b = rows(local), rows(on_ray)
        assert a.keys() == b.keys() and a, ct
        for i, row in a.items():
            assert {k: v for k, v in row.items() if k != "vector"} == {
                k: v for k, v in b[i].items() if k != "vector"
            }
            assert np.allclose(row["vector"], b[i]["vector"], atol=1e-5)
    again = Toolbox(Settings(data_dir=DATA, index_dir=tmp_path / "ray")).index()
    assert all(r.chunks_written == 0 and not r.changed for r in again)
