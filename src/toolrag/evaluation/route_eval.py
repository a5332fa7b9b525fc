"""Router evaluation on any tool pool: each query's tools are retrieved from the pool (ToolIndex,
top ``k``), the router decides, and the decision is scored against the expected tools and
arguments.

- precision and recall over the (query, tool) pairs, overall and per tool;
- a confusion matrix of expected against predicted tools (``(none)`` for no tool), printed and
  saved as a PNG heatmap;
- accuracy on "no tool" queries (empty ``expected_tools``): right when nothing is called;
- argument accuracy where ground truth is given: the share of expected arguments the call got
  right. An expected value that is a list of options (BFCL's possible answers) accepts any of
  them, and ``""`` among the options means the argument may be left out.

The evaluated queries are registered as test questions in the example store, so no example
within cosine 0.9 of one of them is ever shown to the router.

Each query is routed in every mode before the next query (the modes share the prompt's tool
block, so a local model reuses its cache). With ``records``, every decision is appended to a
JSONL file as it is made and a later run with the same setup (model, tools, examples, ``k``,
router prompt) skips the decisions already there: a long evaluation resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import LLM
from llama_index.core.tools import FunctionTool, ToolMetadata
from pydantic import BaseModel, Field

from toolrag.cards.card import ToolCard
from toolrag.errors import ConfigError, InputError
from toolrag.evaluation.baselines import schema_model
from toolrag.retrieval.index import ToolIndex
from toolrag.routing import Example, ExampleStore, Router, ToolCallSpec
from toolrag.routing.examples import question_example
from toolrag.routing.router import INSTRUCTIONS, REPAIR, ExampleMode

NONE = "(none)"


class RouteQuery(BaseModel):
    id: str
    query: str
    expected_tools: list[str] = Field(default_factory=list)
    expected_args: dict[str, Any] = Field(default_factory=dict)


class RouteReport(BaseModel):
    examples: str
    n_queries: int
    precision: float
    recall: float
    no_tool_accuracy: float | None
    n_no_tool: int
    argument_accuracy: float | None
    n_argument_checks: int
    valid_rate: float
    repaired: int
    p50_s: float
    per_tool: dict[str, dict[str, float]]
    confusion: dict[str, dict[str, int]]
    gate: float | None = None
    offered_none: dict[str, int] = Field(
        default_factory=dict,
        description="Queries the retrieval offered no tools (the gate), by whether a tool was "
        "expected: {'answerable': n, 'no_tool': n}.",
    )

    def as_json(self) -> dict[str, Any]:
        return self.model_dump()


def load_route_queries(path: Path) -> list[RouteQuery]:
    if not path.is_file():
        raise InputError(
            f"Query file {path} does not exist.",
            hint="Pass a JSONL file of {id, query, expected_tools, expected_args?} objects.",
        )
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if line.strip():
            try:
                out.append(RouteQuery.model_validate_json(line))
            except ValueError as exc:
                raise InputError(
                    f"{path}:{n}: not a valid query line ({exc.__class__.__name__}).",
                    hint="Each line needs id, query and expected_tools.",
                ) from exc
    return out


def examples_from_queries(queries: Sequence[RouteQuery]) -> list[Example]:
    """Questions with known tools as few-shot examples (see :func:`question_example`)."""
    return [question_example(q.query, q.expected_tools, q.expected_args) for q in queries]


def _norm(value: Any) -> str:
    return (
        json.dumps(value, sort_keys=True).lower()
        if not isinstance(value, str)
        else value.strip().lower()
    )


def argument_hits(expected: dict[str, Any], got: dict[str, Any]) -> tuple[int, int]:
    """(right, checked) for one call's arguments."""
    right = checked = 0
    for name, want in expected.items():
        options = want if isinstance(want, list) else [want]
        optional = "" in options
        checked += 1
        if name not in got:
            right += int(optional)
            continue
        value = _norm(got[name])  # the expected value itself, or one of its options
        right += int(value == _norm(want) or any(_norm(o) == value for o in options if o != ""))
    return right, checked


def stub_tools(cards: Sequence[ToolCard]) -> list[FunctionTool]:
    """Cards as tools the router can be offered (schema from the card; never called)."""
    return [
        FunctionTool(
            fn=lambda **kw: None,
            metadata=ToolMetadata(
                name=c.name, description=c.description, fn_schema=schema_model(c)
            ),
        )
        for c in cards
    ]


def score(
    mode: str,
    queries: Sequence[RouteQuery],
    predicted: Sequence[list[ToolCallSpec]],
    valid: Sequence[bool],
    repaired: int,
    seconds: Sequence[float],
) -> RouteReport:
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    no_tool_right = no_tool_n = 0
    arg_right = arg_checked = 0
    for q, calls in zip(queries, predicted, strict=True):
        want, got = set(q.expected_tools), {c.tool for c in calls}
        for t in want & got:
            tp[t] += 1
            confusion[t][t] += 1
        for t in got - want:
            fp[t] += 1
        for t in want - got:
            fn[t] += 1
        missed, extra = sorted(want - got), sorted(got - want)
        for i, t in enumerate(missed):  # pair each missed tool with a wrong pick, or nothing
            confusion[t][extra[i] if i < len(extra) else NONE] += 1
        for t in extra[len(missed) :]:
            confusion[NONE][t] += 1
        if not want:
            no_tool_n += 1
            no_tool_right += int(not got)
            if not got:
                confusion[NONE][NONE] += 1
        if q.expected_args and len(q.expected_tools) == 1:
            call = next((c for c in calls if c.tool == q.expected_tools[0]), None)
            right, checked = argument_hits(q.expected_args, call.arguments if call else {})
            arg_right += right if call else 0
            arg_checked += checked
    tools = sorted(set(tp) | set(fp) | set(fn))
    per_tool = {
        t: {
            "precision": round(tp[t] / (tp[t] + fp[t]), 4) if tp[t] + fp[t] else 0.0,
            "recall": round(tp[t] / (tp[t] + fn[t]), 4) if tp[t] + fn[t] else 0.0,
            "support": tp[t] + fn[t],
        }
        for t in tools
    }
    all_tp, all_fp, all_fn = sum(tp.values()), sum(fp.values()), sum(fn.values())
    return RouteReport(
        examples=mode,
        n_queries=len(queries),
        precision=round(all_tp / (all_tp + all_fp), 4) if all_tp + all_fp else 0.0,
        recall=round(all_tp / (all_tp + all_fn), 4) if all_tp + all_fn else 0.0,
        no_tool_accuracy=round(no_tool_right / no_tool_n, 4) if no_tool_n else None,
        n_no_tool=no_tool_n,
        argument_accuracy=round(arg_right / arg_checked, 4) if arg_checked else None,
        n_argument_checks=arg_checked,
        valid_rate=round(sum(valid) / len(valid), 4) if valid else 0.0,
        repaired=repaired,
        p50_s=round(statistics.median(seconds), 2) if seconds else 0.0,
        per_tool=per_tool,
        confusion={k: dict(v) for k, v in confusion.items()},
    )


def setup_fingerprint(
    llm: LLM,
    cards: Sequence[ToolCard],
    examples: Sequence[Example],
    k_tools: int,
    k_examples: int,
    tool_grammar: bool = True,
) -> str:
    """What a recorded decision depends on, hashed: a record from another setup is not reused."""
    meta = llm.metadata
    payload = {
        "llm": [type(llm).__name__, meta.model_name, meta.context_window],
        "tools": sorted(
            (c.name, c.description, json.dumps(c.parameters, sort_keys=True)) for c in cards
        ),
        "examples": sorted(e.id for e in examples),
        "k": [k_tools, k_examples],
        "prompt": INSTRUCTIONS,
        "tool_grammar": tool_grammar,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def prompt_key(prompt: str) -> str:
    """The hash of a router prompt (tool blocks, chosen examples, instructions) and of its
    repair template: a recorded decision is reused only when today's router would send the
    same prompt."""
    return hashlib.sha256(f"{REPAIR}\0{prompt}".encode()).hexdigest()[:16]


def _load_records(
    path: Path | None, fingerprint: str
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The records of this setup by (mode, question id), oldest first: a question keeps one
    record per offer and prompt it was routed with (say with and without a gate)."""
    if path is None or not path.is_file():
        return {}
    done: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut short by an interrupted run
        if isinstance(rec, dict) and rec.get("setup") == fingerprint:
            done[(rec["mode"], rec["id"])].append(rec)
    return dict(done)


def run_route_eval(
    cards: Sequence[ToolCard],
    queries: Sequence[RouteQuery],
    modes: Sequence[ExampleMode],
    llm: LLM,
    embed: BaseEmbedding,
    work_dir: Path,
    examples: Sequence[Example] = (),
    k_tools: int = 5,
    k_examples: int = 8,
    records: Path | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    gate: float | None = None,
    tool_grammar: bool = True,
) -> list[RouteReport]:
    """Route every query once per example mode, in this process, over the same retrieval.

    ``records``: a JSONL file that keeps each decision (resume); ``on_progress(done, total)`` is
    called after each decision. ``gate``: the retrieval's gate (:meth:`ToolIndex.retrieve`);
    a question it offers no tools is answered without them (:meth:`Router.route`).
    ``tool_grammar``: the router's reply held to the offered tools' schemas (the default) or
    only to the decision's shape (:mod:`toolrag.routing.call_schema`)."""
    fingerprint = setup_fingerprint(llm, cards, examples, k_tools, k_examples, tool_grammar)
    recorded = _load_records(records, fingerprint)
    index = ToolIndex(work_dir / "index", embed, table="route_eval")
    index.sync(cards)
    tools = {t.metadata.get_name(): t for t in stub_tools(cards)}
    store = ExampleStore(work_dir / "examples.sqlite", embed)
    store.register_test_questions((q.id, q.query) for q in queries)
    store.seed(cards)
    store.add_many(examples, strict=False)
    routers = {
        mode: Router(llm, store, mode=mode, k_examples=k_examples, tool_grammar=tool_grammar)
        for mode in modes
    }
    # A recorded decision is reused only where today's retrieval offers the same tools and
    # today's router would send the same prompt: a change in retrieval, in the examples chosen
    # or in the prompt's format re-routes exactly the questions it touches. (Records written
    # before prompts were hashed carry no "prompt" and are checked on the offer alone.)
    offers = {
        q.id: [tools[h.name] for h in index.retrieve(q.query, k=k_tools, gate=gate)]
        for q in queries
    }
    plans = {(m, q.id): routers[m].plan(q.query, offers[q.id]) for q in queries for m in modes}
    prompts = {key: prompt_key(text) for key, (_, text) in plans.items()}
    done: dict[tuple[str, str], dict[str, Any]] = {}
    for key, recs in recorded.items():
        if key not in prompts:
            continue
        offered = [t.metadata.get_name() for t in offers[key[1]]]
        for rec in recs:  # the latest record of today's offer and prompt
            if rec.get("offered") == offered and rec.get("prompt", prompts[key]) == prompts[key]:
                done[key] = rec
    total = len(queries) * len(modes)
    count = sum((m, q.id) in done for q in queries for m in modes)
    if on_progress is not None:
        on_progress(count, total)
    if records is not None:
        records.parent.mkdir(parents=True, exist_ok=True)
    for q in queries:
        todo = [m for m in modes if (m, q.id) not in done]
        if not todo:
            continue
        offer = offers[q.id]
        for mode in todo:
            t0 = time.perf_counter()
            result = routers[mode].route(q.query, offer, plans[(mode, q.id)])
            calls = result.decision.calls if result.decision and result.valid else []
            rec = {
                "setup": fingerprint,
                "mode": mode,
                "id": q.id,
                "offered": [t.metadata.get_name() for t in offer],
                "prompt": prompts[(mode, q.id)],
                "calls": [c.model_dump(mode="json") for c in calls],
                "valid": result.valid,
                "repaired": result.repaired,
                "seconds": round(time.perf_counter() - t0, 3),
            }
            done[(mode, q.id)] = rec
            if records is not None:
                with records.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(rec) + "\n")
            count += 1
            if on_progress is not None:
                on_progress(count, total)
    none = [q for q in queries if not offers[q.id]]  # the gate said no tool fits
    offered_none = {
        "answerable": sum(bool(q.expected_tools) for q in none),
        "no_tool": sum(not q.expected_tools for q in none),
    }
    reports = []
    for mode in modes:
        recs = [done[(mode, q.id)] for q in queries]
        reports.append(
            score(
                mode,
                queries,
                [[ToolCallSpec.model_validate(c) for c in r["calls"]] for r in recs],
                [bool(r["valid"]) for r in recs],
                sum(bool(r["repaired"]) for r in recs),
                [float(r["seconds"]) for r in recs],
            )
        )
        reports[-1].gate = gate
        reports[-1].offered_none = dict(offered_none)
    return reports


def save_heatmap(report: RouteReport, path: Path, max_labels: int = 30) -> Path:
    """The confusion matrix as a PNG heatmap (the most frequent labels when there are many)."""
    try:
        import matplotlib
    except ImportError as exc:  # the ``plots`` extra
        raise ConfigError(
            "The heatmap needs matplotlib, which is not installed.",
            hint="Install the plots extra: pip install 'toolrag[plots]', or leave out --png.",
        ) from exc

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts: Counter[str] = Counter()
    for row, cols in report.confusion.items():
        counts[row] += sum(cols.values())
        for col, n in cols.items():
            counts[col] += n
    labels = [label for label, _ in counts.most_common(max_labels)]
    grid = [[report.confusion.get(r, {}).get(c, 0) for c in labels] for r in labels]
    ticks = list(range(len(labels)))
    size = max(4.0, 0.35 * len(labels) + 2)
    fig, ax = plt.subplots(figsize=(size, size))
    ax.imshow(grid, cmap="Blues")
    ax.set_xticks(ticks, labels, rotation=90, fontsize=7)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.set_xlabel("predicted tool")
    ax.set_ylabel("expected tool")
    ax.set_title(f"router confusion ({report.examples} examples)")
    for i, cells in enumerate(grid):
        for j, count in enumerate(cells):
            if count:
                ax.text(j, i, str(count), ha="center", va="center", fontsize=6)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
