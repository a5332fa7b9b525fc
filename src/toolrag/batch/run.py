"""Batch question answering: a JSONL file of questions in, a JSONL (or Parquet) file of answer
records out, on this machine or on a Ray cluster (``engine="ray"``, :mod:`.ray_engine`).

- Resumable: a re-run reads the output file and skips every id that already has an answer
  (records that failed are tried again); each record is appended and flushed as soon as its
  question finishes, so a crash loses at most the questions in flight.
- Each question has a deadline (its worker thread is stopped past it) and any failure becomes
  a record with an error code, never a crash of the batch.
- Concurrency: one worker for the local model (it uses the machine's cores by itself), several
  for remote LLMs.
- The summary: accuracy against expected answers where questions give keywords, tool accuracy
  where they give expected tools, p50/p95 seconds and tokens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from toolrag.batch.output import RecordSink, read_records
from toolrag.batch.questions import Question
from toolrag.batch.records import (
    Asker,
    BatchRecord,
    BatchSummary,
    Progress,
    answer_one,
    finish,
    load_batch_questions,
    pending,
)
from toolrag.errors import ToolragError
from toolrag.models.llms import resolve_provider
from toolrag.settings import Settings

Engine = Literal["local", "ray"]


def run_batch(
    toolbox: Asker | None,
    questions: Sequence[Question] | Path,
    output: Path,
    concurrency: int | None = None,
    timeout_s: float = 300.0,
    progress: Progress | None = None,
    on_resume: Callable[[int], None] | None = None,
    *,
    engine: Engine = "local",
    address: str | None = None,
    actors: int = 2,
    threads_per_actor: int | None = None,
    asker_factory: Callable[[], Asker] | None = None,
    echo: Callable[[str], None] | None = None,
    ray_options: Mapping[str, Any] | None = None,
) -> BatchSummary:
    """Answer ``questions`` (a list, or a JSONL file; on Ray also Parquet) into ``output``
    (JSONL appended, or Parquet), skipping ids already answered.

    ``engine="ray"`` answers on a Ray cluster (:mod:`toolrag.batch.ray_engine`): ``actors``
    workers, each holding one toolbox built by ``asker_factory`` (default: the toolbox's class
    with its settings) and answering ``threads_per_actor`` questions at a time (default:
    ``concurrency``, else one for the local model and four for remote LLMs); ``address``
    connects to a running cluster, None starts a local one. ``echo`` gets a line for the
    cluster (its dashboard URL when it has one); ``ray_options`` are the Ray engine's other
    arguments (``num_cpus``, ``cpus_per_actor``, ``max_task_retries``, ``dashboard``)."""
    if engine == "ray":
        from toolrag.batch.ray_engine import run_batch_ray

        if asker_factory is None:
            if toolbox is None:
                raise ToolragError("run_batch on Ray needs a toolbox or an asker_factory.")
            asker_factory = functools.partial(type(toolbox), toolbox.settings)  # type: ignore[call-arg]
        if threads_per_actor is None:
            threads_per_actor = concurrency or (
                _default_concurrency(toolbox.settings) if toolbox is not None else 1
            )
        return run_batch_ray(
            asker_factory,
            questions,
            output,
            address=address,
            actors=actors,
            threads_per_actor=threads_per_actor,
            timeout_s=timeout_s,
            progress=progress,
            on_resume=on_resume,
            echo=echo,
            **(ray_options or {}),
        )
    if engine != "local":
        raise ToolragError(f"Unknown batch engine {engine!r}.", hint="Use local or ray.")
    if toolbox is None:
        raise ToolragError("run_batch needs a toolbox.")
    if isinstance(questions, Path):
        questions = load_batch_questions(questions)
    previous = read_records(output)
    todo = pending(questions, previous)
    skipped = len(questions) - len(todo)
    if on_resume and skipped:
        on_resume(skipped)
    if concurrency is None:
        concurrency = _default_concurrency(toolbox.settings)
    if todo:  # load the models and open the indexes before any deadline starts
        toolbox.warm_up()
    asker = toolbox

    with RecordSink(output, previous, progress) as sink:

        def work(question: Question) -> None:
            sink.write(answer_one(asker, question, timeout_s))

        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            list(pool.map(work, todo))
    return finish(questions, previous, sink, skipped)


def _default_concurrency(settings: Settings) -> int:
    return 1 if resolve_provider(settings) in ("local", "scripted") else 4


__all__ = [
    "Asker",
    "BatchRecord",
    "BatchSummary",
    "Engine",
    "answer_one",
    "finish",
    "load_batch_questions",
    "pending",
    "read_records",
    "run_batch",
]
