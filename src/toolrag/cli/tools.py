"""``toolrag tools …``: the tool cards of the toolbox (or of a tool file), and their lint."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, get_args

import typer
import yaml
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from toolrag.cards.card import ToolCard, load_tool_list
from toolrag.cards.lint import LintFinding, lint_cards
from toolrag.errors import ToolragError
from toolrag.settings import load_settings

if TYPE_CHECKING:
    from toolrag.retrieval.index import ToolIndex
    from toolrag.settings import Settings

tools_app = typer.Typer(no_args_is_help=True, help="List, lint, index and search tool cards.")
out = Console()
err = Console(stderr=True)

ToolsFile = Annotated[
    Path | None,
    typer.Option(
        "--tools",
        help="A JSON tool list (name/description/parameters, OpenAI or MCP shapes); "
        "default: the toolbox's own tools with the YAML cards of toolspecs/cards/.",
    ),
]

WithRequests = Annotated[
    bool,
    typer.Option(help="With --tools: index the requests `toolrag tools synth` cached too."),
]


def _cards(tools: Path | None) -> list[ToolCard]:
    if tools is not None:
        return load_tool_list(tools)
    from toolrag.cli.approval import cli_toolbox

    return cli_toolbox(load_settings()).cards()


@contextlib.contextmanager
def pool_index(
    settings: Settings, tools: Path | None, synthetic: bool, index_dir: Path | None
) -> Iterator[ToolIndex]:
    """The ToolIndex a command searches: the toolbox's own (``tools`` None), or one over the
    ``tools`` file, with the requests `toolrag tools synth` cached when ``synthetic``, kept in
    ``index_dir`` (default: a temporary folder, removed on exit)."""
    from toolrag.retrieval.index import ToolIndex

    if tools is None:
        from toolrag.cli.approval import cli_toolbox

        yield cli_toolbox(settings).tool_index
        return
    from toolrag.cards.synthetic import SyntheticQueries
    from toolrag.models.embeddings import make_embedding

    cards = load_tool_list(tools)
    if synthetic:
        cards = SyntheticQueries(settings.synthetic_db).augment(cards)
    with tempfile.TemporaryDirectory(prefix="toolrag-pool-") as tmp:
        index = ToolIndex(index_dir or Path(tmp), make_embedding(settings))
        index.sync(cards)
        yield index


def _fail(exc: ToolragError) -> None:
    err.print(f"[red]error:[/red] {exc.one_line()}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


@tools_app.command("list")
def tools_list(
    tools: ToolsFile = None,
    as_json: Annotated[bool, typer.Option("--json", help="The cards as a JSON list.")] = False,
) -> None:
    """Print the tool cards: name, side effect, examples, and the first sentence."""
    try:
        cards = _cards(tools)
    except ToolragError as exc:
        _fail(exc)
        return
    if as_json:
        print(json.dumps([c.model_dump(mode="json") for c in cards], indent=2))
        return
    table = Table("name", "effect", "examples", "description", title=f"{len(cards)} tools")
    for c in cards:
        first = " ".join(c.description.split()).split(". ")[0][:90]
        table.add_row(c.name, c.side_effect, str(len(c.examples)), first)
    out.print(table)


@tools_app.command("lint")
def tools_lint(
    tools: ToolsFile = None,
    duplicates: Annotated[
        bool, typer.Option(help="Embed the descriptions to find near-duplicate tools.")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="The findings as a JSON list.")] = False,
) -> None:
    """Check every card against the tool-card contract; exit 1 when any error is found.

    Rules: verb_noun names, one verb per meaning across the pool, a 3-5 sentence description
    (what, when, returns, not), a description per parameter, 5-40 examples, near-duplicate
    descriptions (cosine >= 0.95), and deprecated_by naming a tool of the pool.
    """
    try:
        cards = _cards(tools)
        embed = None
        if duplicates:
            from toolrag.models.embeddings import make_embedding

            embed = make_embedding(load_settings())
        findings = lint_cards(cards, embed)
    except ToolragError as exc:
        _fail(exc)
        return
    if as_json:
        print(json.dumps([f.model_dump() for f in findings], indent=2))
    else:
        _print(findings, len(cards))
    if any(f.severity == "error" for f in findings):
        raise typer.Exit(1)


@tools_app.command("synth")
def tools_synth(
    tools: ToolsFile = None,
    per_card: Annotated[int, typer.Option(min=1, max=10, help="Requests per card.")] = 3,
    limit: Annotated[int, typer.Option(min=0, help="Cards to write for (0: all).")] = 0,
    export: Annotated[
        Path | None,
        typer.Option(
            help="Also write the requests as a YAML card overlay file (a `synthetic:` list per "
            "tool), to review and commit: toolspecs/cards/requests.yaml ships them with the "
            "toolbox, so a fresh clone's tool index has them without an LLM."
        ),
    ] = None,
) -> None:
    """Have the LLM write example requests for every card that has none cached (or whose
    cached reply held none: it is asked again).

    The requests are kept per card version and model in the state folder's synthetic.sqlite;
    a re-run goes on where it stopped. A larger --per-card than the cached requests were
    written with adds the missing ones (the LLM is shown those it wrote, so it writes new
    ones). `toolrag eval tools --synthetic` indexes them beside the cards (one vector per
    request). One LLM call per card: with the local model, about 3-10 s each.
    """
    from rich.progress import Progress

    from toolrag.cards.synthetic import SyntheticQueries
    from toolrag.models.llms import make_llm

    try:
        settings = load_settings()
        cards = _cards(tools)
        store = SyntheticQueries(settings.synthetic_db, make_llm(settings), per_card)
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task("writing requests", total=None)
            written = store.fill(
                cards,
                limit or None,
                on_progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    except ToolragError as exc:
        _fail(exc)
        return
    have = store.covered(cards)
    if export is not None:
        written_cards = [c for c in store.augment(cards) if c.synthetic]
        export.parent.mkdir(parents=True, exist_ok=True)
        export.write_text(
            "# LLM-written requests per tool (`toolrag tools synth --export`), laid over the\n"
            "# cards of the same name: the tool index embeds each as its own vector and the\n"
            "# gate is chosen from them (docs/tool-rag.md). Review them; edit or delete freely.\n"
            + yaml.safe_dump(
                [{"name": c.name, "synthetic": list(c.synthetic)} for c in written_cards],
                sort_keys=False,
                allow_unicode=True,
                width=100,
            ),
            encoding="utf-8",
        )
        out.print(f"exported the requests of {len(written_cards)} card(s) to {export}")
    out.print(
        f"wrote requests for {written} card(s); {have} of {len(cards)} have them ({store.path})",
        highlight=False,
    )


@tools_app.command("index")
def tools_index(
    tools: Annotated[Path, typer.Argument(help="A JSON tool list (as for --tools).")],
    index_dir: Annotated[
        Path, typer.Option(help="The index folder (`toolrag tools search --index-dir` reads it).")
    ],
    synthetic: WithRequests = False,
    engine: Annotated[
        str, typer.Option(help="local, or ray: embed on a Ray cluster (toolrag\\[ray] extra).")
    ] = "local",
    address: Annotated[
        str | None, typer.Option(help="With --engine ray: the cluster to join (default: local).")
    ] = None,
    actors: Annotated[int, typer.Option(help="With --engine ray: embedding actors.")] = 2,
) -> None:
    """Embed a tool file's cards into a LanceDB tool index: only new or changed cards, by
    their stable ids, so a re-run (with either engine) embeds nothing that is unchanged."""
    from toolrag.cards.synthetic import SyntheticQueries
    from toolrag.models.embeddings import make_embedding
    from toolrag.models.ray_pool import ray_embed_batches
    from toolrag.retrieval.index import ToolIndex

    try:
        if engine not in ("local", "ray"):
            raise ToolragError(f"Unknown engine {engine!r}.", hint="Use local or ray.")
        settings = load_settings()
        cards = load_tool_list(tools)
        if synthetic:
            cards = SyntheticQueries(settings.synthetic_db).augment(cards)
        echo = lambda line: err.print(line, highlight=False)  # noqa: E731
        on_ray = (
            ray_embed_batches(settings, actors, address, echo=echo) if engine == "ray" else None
        )
        report = ToolIndex(index_dir, make_embedding(settings), embed_batches=on_ray).sync(cards)
    except ToolragError as exc:
        _fail(exc)
        return
    out.print(
        f"{len(cards)} cards: {report.embedded} embedded ({report.added} added, "
        f"{report.updated} updated), {report.unchanged} unchanged, {report.removed} removed; "
        f"{report.requests_embedded} requests embedded",
        highlight=False,
    )


@tools_app.command("search")
def tools_search(
    question: Annotated[str, typer.Argument(help="The question or request to find tools for.")],
    tools: ToolsFile = None,
    k: Annotated[int, typer.Option(min=1, max=100, help="How many tools.")] = 5,
    strategy: Annotated[str, typer.Option(help="best (default), dense, bm25 or hybrid.")] = "best",
    floor: Annotated[
        float | None, typer.Option(help="Leave out tools whose cosine is below this.")
    ] = None,
    gate: Annotated[
        float | None,
        typer.Option(help="No tools at all when none of the k has a cosine of at least this."),
    ] = None,
    synthetic: WithRequests = False,
    index_dir: Annotated[
        Path | None,
        typer.Option(
            help="With --tools: keep the index in this folder, so the next search over the same "
            "file embeds only the cards that changed (default: a temporary folder)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The hits as a JSON list.")] = False,
) -> None:
    """The tools the ToolIndex retrieves for a question, best first: score, cosine, and why a
    tool ranks where its score would not put it: the question names it, or it is a
    prerequisite (a tool whose output another retrieved tool's parameter takes) of that tool."""
    from toolrag.retrieval.index import Strategy, ToolHit

    if strategy not in get_args(Strategy):
        err.print(f"[red]error:[/red] unknown strategy {strategy!r}: best, dense, bm25 or hybrid")
        raise typer.Exit(2)
    chosen: Strategy = strategy  # type: ignore[assignment]

    def search(index: ToolIndex) -> list[ToolHit]:
        return index.retrieve(question, k=k, strategy=chosen, floor=floor, gate=gate)

    try:
        with pool_index(load_settings(), tools, synthetic, index_dir) as index:
            hits = search(index)
    except ToolragError as exc:
        _fail(exc)
        return
    if as_json:
        print(json.dumps([h.model_dump(mode="json") for h in hits], indent=2))
        return
    table = Table("#", "tool", "score", "cosine", "why", title=escape(question[:100]))
    for n, h in enumerate(hits, start=1):
        cosine = "" if h.similarity is None else f"{h.similarity:.3f}"
        why = "named in the question" if h.named else ""
        if h.required_by:
            why = f"needed by {h.required_by}"
        table.add_row(str(n), escape(h.name), f"{h.score:.3f}", cosine, escape(why))
    out.print(table)
    if not hits:
        cut = {(True, False): "the floor", (False, True): "the gate", (True, True): "the cut"}
        below = cut.get((floor is not None, gate is not None))
        out.print(
            f"no tool fits (every cosine is below {below})" if below else "no tools found",
            highlight=False,
        )


def _print(findings: list[LintFinding], n_cards: int) -> None:
    for f in findings:  # one line each, so it reads the same in a narrow terminal or a log
        colour = "red" if f.severity == "error" else "yellow"
        out.print(
            f"{escape(f.tool)}: [{colour}]{f.severity}[/{colour}] {escape(f'[{f.rule}]')} "
            f"{escape(f.message)} [dim]Fix: {escape(f.fix)}[/dim]",
            highlight=False,
            soft_wrap=True,
        )
    errors = sum(f.severity == "error" for f in findings)
    out.print(
        f"{n_cards} cards: {errors} error(s), {len(findings) - errors} warning(s)",
        highlight=False,
    )
