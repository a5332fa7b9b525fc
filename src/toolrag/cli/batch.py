"""``toolrag batch QUESTIONS.jsonl -o ANSWERS.jsonl [--engine ray]``: answer a file of questions,
resumably, here or on a Ray cluster."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from toolrag.errors import ToolragError

err = Console(stderr=True)


def summary_table(summary: Any) -> Table:
    def pct(value: float | None, n: int) -> str:
        return "n/a" if value is None else f"{value:.0%} of {n}"

    table = Table("batch", "", title="batch summary")
    for label, value in (
        ("questions", summary.total),
        ("answered now", summary.answered),
        ("failed", summary.failed),
        ("resumed (already answered)", summary.skipped),
        ("answer accuracy (strict)", pct(summary.accuracy, summary.n_scored)),
        ("tool accuracy", pct(summary.tool_accuracy, summary.n_tool_scored)),
        ("no-tool questions left without a tool", pct(summary.no_tool_accuracy, summary.n_no_tool)),
        (
            "multi-tool questions with every tool",
            pct(summary.multi_tool_coverage, summary.n_multi_tool),
        ),
        ("p50 / p95 seconds", f"{summary.p50_s:.1f} / {summary.p95_s:.1f}"),
        ("prompt / output tokens", f"{summary.prompt_tokens} / {summary.completion_tokens}"),
    ):
        table.add_row(label, str(value))
    return table


def make_batch_command(
    settings_for: Callable[..., Any],
    field_api: Callable[[Path], contextlib.AbstractContextManager[None]],
) -> Callable[..., None]:
    """The ``batch`` command, given the CLI's settings loader and sample-API runner."""

    def batch(
        questions: Annotated[Path, typer.Argument(help="JSONL {id, query, expected_tools?, "
                                                       "answer_keywords?, answer_ids?} per line.")],
        output: Annotated[Path, typer.Option("-o", "--output", help="Answers JSONL (appended; "
                                                                    "a re-run resumes).")],
        concurrency: Annotated[int | None, typer.Option(
            help="Parallel questions (default: 1 for the local model, 4 for remote LLMs).")] = None,
        timeout: Annotated[float, typer.Option(help="Seconds allowed per question.")] = 300.0,
        limit: Annotated[int, typer.Option(help="Only the first N questions (0: all).")] = 0,
        sample_api: Annotated[bool, typer.Option(
            "--sample-api", help="Run the sample field API in the background for the REST tools.")
        ] = False,
        engine: Annotated[str, typer.Option(
            help="local (this process) or ray (a Ray cluster: pip install 'toolrag\\[ray]').")
        ] = "local",
        address: Annotated[str | None, typer.Option(
            help="With --engine ray: the cluster to join (default: start a local one).")] = None,
        actors: Annotated[int, typer.Option(
            help="With --engine ray: actors, each holding one toolbox.")] = 2,
        dashboard: Annotated[bool, typer.Option(
            "--dashboard", help="With --engine ray on a local cluster: start Ray's dashboard.")
        ] = False,
    ) -> None:  # fmt: skip
        """Answer every question of a JSONL file (or, on Ray, Parquet) with the agent: a record
        per question in the output file (JSONL, or Parquet by its suffix), a summary table at
        the end. Re-running skips ids already answered."""
        from toolrag.batch.run import load_batch_questions, run_batch
        from toolrag.cli.approval import cli_toolbox

        try:
            if engine not in ("local", "ray"):
                raise ToolragError(f"Unknown engine {engine!r}.", hint="Use local or ray.")
            settings = settings_for()
            # Ray Data reads the whole file itself; --limit and the local engine read it here
            qs: Any = questions
            if limit or engine == "local":
                qs = load_batch_questions(questions)[: limit or None]
            total = len(qs) if isinstance(qs, list) else _count(questions)
            api = field_api(settings.data_dir) if sample_api else contextlib.nullcontext()
            with api, _progress() as progress:
                task = progress.add_task("questions", total=total)
                summary = run_batch(
                    cli_toolbox(settings),
                    qs,
                    output,
                    concurrency=concurrency,
                    timeout_s=timeout,
                    progress=lambda record: progress.advance(task),
                    on_resume=lambda n: progress.advance(task, n),
                    engine="ray" if engine == "ray" else "local",
                    address=address,
                    actors=actors,
                    echo=lambda line: progress.console.print(line, highlight=False),
                    ray_options={"dashboard": dashboard} if engine == "ray" else None,
                )
        except ToolragError as exc:
            err.print(f"[red]error:[/red] {exc.one_line()}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from exc
        Console().print(summary_table(summary))
        err.print(f"answers written to {output}")

    return batch


def _count(path: Path) -> int:
    """How many questions a file holds, without parsing them (the progress bar's total)."""
    if not path.is_file():
        raise ToolragError(f"No questions file at {path}.")
    if path.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    with path.open(encoding="utf-8-sig") as fh:
        return sum(1 for line in fh if line.strip())


@contextlib.contextmanager
def _progress() -> Iterator[Progress]:
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
    ) as progress:
        yield progress
