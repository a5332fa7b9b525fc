"""The Ray engine of a batch: the same records as the local engine, answered by a pool of actors.

Ray Data reads the questions (a list, a JSONL file or a Parquet file) and ``map_batches`` sends
them to ``actors`` actors. Each actor builds one toolbox when it starts (``asker_factory``: by
default the caller's toolbox class with its settings, so the same models and the same index
folder, which an answering toolbox only reads), warms it up, and answers its batches of
``threads_per_actor`` questions with :func:`~toolrag.batch.run.answer_one`, so a question's
exception or timeout becomes a record exactly as it does locally.

The driver writes the records as they stream back, through the same
:class:`~toolrag.batch.output.RecordSink` (flushed one by one, each id once): a retried task
that answers a question again is not written twice. Ray restarts an actor that dies
(``max_restarts``) and runs its task again (``max_task_retries``), so a killed actor loses no
question; a question whose task keeps failing past the retries still gets a record, with the
error code ``LOST``, and the rest of the batch goes on (Ray Data skips that block).
"""

from __future__ import annotations

import concurrent.futures
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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
)
from toolrag.errors import ToolragError
from toolrag.models.ray_pool import connect_ray

#: task retries after an actor dies before its questions are recorded as lost
MAX_TASK_RETRIES = 3


class _Answerer:
    """A Ray Data actor: one toolbox, built and warmed up once, answering batch after batch."""

    def __init__(self, asker_factory: Callable[[], Asker], timeout_s: float, threads: int) -> None:
        self.asker = asker_factory()
        self.asker.warm_up()
        self.timeout_s = timeout_s
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, threads))

    def __call__(self, batch: Any) -> dict[str, list[str]]:
        questions = [_question(row) for row in batch.to_pylist()]
        records = self.pool.map(lambda q: answer_one(self.asker, q, self.timeout_s), questions)
        return {"record": [r.model_dump_json() for r in records]}


def _question(row: dict[str, Any]) -> Question:
    # a column a row does not have reads as None (JSON) and a list column as an array (Parquet)
    return Question.model_validate({k: v for k, v in row.items() if v is not None})


def _dataset(ray: Any, questions: Sequence[Question] | Path) -> Any:
    if not isinstance(questions, Path):
        return ray.data.from_items([q.model_dump() for q in questions])
    if not questions.is_file():
        raise ToolragError(f"No questions file at {questions}.")
    if questions.suffix.lower() == ".parquet":
        return ray.data.read_parquet(str(questions))
    return ray.data.read_json(str(questions), lines=True)


def _ids(ray: Any, questions: Sequence[Question] | Path) -> list[str]:
    """Every question's id, checked unique (resuming relies on them)."""
    if isinstance(questions, Path) and questions.suffix.lower() == ".parquet":
        ids = [str(r["id"]) for r in _dataset(ray, questions).select_columns(["id"]).take_all()]
        if len(set(ids)) != len(ids):
            raise ToolragError(
                f"{questions}: an id appears twice.",
                hint="Give every question its own id: resuming a batch relies on them.",
            )
        return ids
    if isinstance(questions, Path):
        return [q.id for q in load_batch_questions(questions)]
    return [q.id for q in questions]


def run_batch_ray(
    asker_factory: Callable[[], Asker],
    questions: Sequence[Question] | Path,
    output: Path,
    *,
    address: str | None = None,
    actors: int = 2,
    threads_per_actor: int = 1,
    timeout_s: float = 300.0,
    progress: Progress | None = None,
    on_resume: Callable[[int], None] | None = None,
    echo: Callable[[str], None] | None = None,
    num_cpus: int | None = None,
    cpus_per_actor: float = 1.0,
    max_task_retries: int = MAX_TASK_RETRIES,
    dashboard: bool = False,
) -> BatchSummary:
    """Answer ``questions`` into ``output`` on Ray, skipping ids already answered (see the
    module's docstring); ``num_cpus`` and ``dashboard`` apply to a local cluster only."""
    ray = connect_ray(address, num_cpus=num_cpus, dashboard=dashboard, echo=echo)
    ids = _ids(ray, questions)
    previous = read_records(output)
    done = {i for i in ids if i in previous and previous[i].ok}
    todo = [i for i in ids if i not in done]
    if on_resume and done:
        on_resume(len(done))
    if isinstance(questions, Path):
        ds = _dataset(ray, questions)
        if done:
            ds = ds.filter(lambda row: str(row["id"]) not in done)
    else:  # already in memory: only the questions left go to the cluster
        ds = _dataset(ray, [q for q in questions if q.id not in done])
    queries: dict[str, str] = {}
    with RecordSink(output, previous, progress) as sink:
        if todo:
            answered = ds.map_batches(
                _Answerer,
                fn_constructor_kwargs={
                    "asker_factory": asker_factory,
                    "timeout_s": timeout_s,
                    "threads": threads_per_actor,
                },
                batch_size=max(1, threads_per_actor),
                batch_format="pyarrow",
                compute=ray.data.ActorPoolStrategy(size=max(1, actors)),
                num_cpus=cpus_per_actor,
                # applied when each actor is created (``max_restarts=`` itself is deprecated)
                ray_remote_args_fn=functools.partial(
                    dict, max_restarts=-1, max_task_retries=max_task_retries
                ),
            )
            # a question whose task still fails after the retries (its actor dies on it every
            # time) drops its own block, not the run: the other questions go on being answered
            answered.context.max_errored_blocks = -1
            lost_reason = "its Ray task failed past the retries"
            try:
                for batch in answered.iter_batches(batch_size=None, batch_format="pyarrow"):
                    for line in batch.column("record").to_pylist():
                        sink.write(BatchRecord.model_validate_json(line))
            except Exception as exc:  # every question still gets a record
                lost_reason = f"{type(exc).__name__}: {str(exc)[:300]}"
            missing = [i for i in todo if i not in sink.fresh]
            if missing:
                queries = _queries(questions, set(missing))
            for i in missing:
                sink.write(
                    BatchRecord(
                        id=i,
                        query=queries.get(i, ""),
                        ok=False,
                        error_code="LOST",
                        error=f"No answer came back from the cluster: {lost_reason}.",
                    )
                )
    return finish(ids, previous, sink, len(done))


def _queries(questions: Sequence[Question] | Path, ids: set[str]) -> dict[str, str]:
    if isinstance(questions, Path):
        if questions.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            rows = pq.read_table(questions, columns=["id", "query"]).to_pylist()
            return {str(r["id"]): str(r["query"]) for r in rows if str(r["id"]) in ids}
        questions = load_batch_questions(questions)
    return {q.id: q.query for q in questions if q.id in ids}


__all__ = ["MAX_TASK_RETRIES", "run_batch_ray"]
