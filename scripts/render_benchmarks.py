"""Render the committed benchmark results (``benchmarks/results/*.json``, written by
:func:`benchmarks.results.write_result`) into the documentation.

- ``docs/benchmarks.md``: what lies between ``<!-- results:start -->`` and
  ``<!-- results:end -->`` becomes one section per result file (its headline figures, command,
  commit, date, machine and a link to the file);
- ``README.md``: what lies between ``<!-- glance:start -->`` and ``<!-- glance:end -->`` becomes
  the "at a glance" table (at most 10 rows), every figure linked to its result file.

    .venv/bin/python scripts/render_benchmarks.py [--check]

``--check`` writes nothing and exits 1 when either file is not up to date. A missing marker is
an error naming the file and the marker.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
DOCS = REPO / "docs" / "benchmarks.md"
README = REPO / "README.md"
GLANCE_ROWS = 10

Rows = list[tuple[str, str]]


class MarkerError(Exception):
    pass


# --- headline figures per benchmark --------------------------------------------------------------
def _f(value: Any, digits: int = 4) -> str:
    if value is None:  # not measured, or not applicable (no no-tool question in the run)
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _by_strategy(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["strategy"]: r for r in rows}


STRATEGY_LABELS = {
    "objectindex-default": "plain ObjectIndex",
    "bm25": "BM25",
    "dense": "dense",
    "hybrid": "hybrid (RRF)",
    "best": "best",
    "dense+requests": "dense + requests",
    "best+requests": "best + requests",
    "best+requests+translated": "best + requests + translated",
}


def _retrieval_rows(fig: dict[str, Any]) -> Rows:
    rows: Rows = []
    for key, label in (("results", "single-call"), ("results_multi_tool", "multi-tool")):
        for r in fig.get(key) or []:
            name = STRATEGY_LABELS.get(r["strategy"], r["strategy"])
            figures = f"R@1 {_f(r['recall@1'])}, R@5 {_f(r['recall@5'])}, MRR {_f(r['mrr'])}"
            if label == "single-call":
                figures += f", p50 {r['p50_ms']:.1f} ms"
            rows.append((f"{label}: {name} ({r['n_queries']:,} queries)", figures))
    return rows


def _tokens_rows(fig: dict[str, Any]) -> Rows:
    return [
        (
            f"prompt tokens, {r['pool']} tools (median of {r['questions']} questions)",
            f"all tools {_f(r['all_tools_median_tokens'])}, top-{r['k']} retrieved "
            f"{_f(r['retrieved_median_tokens'])}: {r['reduction']:.1%} fewer",
        )
        for r in fig["results"]
    ]


def _guard_load_rows(fig: dict[str, Any]) -> Rows:
    return [
        (
            f"calls/s, {fig['calls']:,} calls on {fig['workers']} workers",
            f"guarded {fig['calls_per_s']}, bare tools {fig['baseline_bare_tools']['calls_per_s']}",
        ),
        ("duplicates written", _f(fig["duplicates_written"])),
        ("audit records equal calls", _f(fig["audit_equals_calls"])),
        ("gated calls executed without approval", _f(fig["gated_executed_without_approval"])),
        *(
            [
                (
                    f"worst single input, of {fig['hostile_calls']} hostile calls mixed in",
                    f"{fig['worst_single_input_s']} s ({fig['worst_single_input']['kind']})",
                )
            ]
            if "worst_single_input_s" in fig
            else []
        ),
    ]


def _mcp_rows(fig: dict[str, Any]) -> Rows:
    return [
        (
            f"`{r['tool']}` p50 / p95 ({r['repeat']} calls)",
            f"MCP {fig.get('transport', 'stdio')} {r['mcp_stdio']['p50_ms']:.1f} / "
            f"{r['mcp_stdio']['p95_ms']:.1f} ms, in process {r['in_process']['p50_ms']:.1f} / "
            f"{r['in_process']['p95_ms']:.1f} ms (+{r['p50_overhead_ms']:.1f} ms)",
        )
        for r in fig["results"]
    ]


def _mcp_load_rows(fig: dict[str, Any]) -> Rows:
    idle, loaded = fig["tools_list_idle"], fig["tools_list_under_attack"]
    return [
        (
            "another client's `tools/list` p50 / p95 / max",
            f"idle {idle['p50_s']:.3f} / {idle['p95_s']:.3f} / {idle['max_s']:.3f} s, under "
            f"{fig['inputs']} slow inputs {loaded['p50_s']:.3f} / {loaded['p95_s']:.3f} / "
            f"{loaded['max_s']:.3f} s",
        ),
        ("inputs without their structured outcome", str(len(fig["outcomes_wrong"]))),
    ]


def _batch_scale_rows(fig: dict[str, Any]) -> Rows:
    batch = {k: v for k, v in fig["batch"].items() if k != "ratios"}
    ratios, pool = fig["batch"].get("ratios", {}), fig.get("pool_build", {})
    rows: Rows = [
        (
            f"questions/s, {batch['local']['questions']} questions (steady: first to last record)",
            ", ".join(
                f"{k.replace('_', ' ')} {v['questions_per_s']} ({v['steady_questions_per_s']:.2f})"
                for k, v in batch.items()
            ),
        )
    ]
    if ratios:
        rows.append(
            (
                "Ray 1 actor / local, seconds per question (steady)",
                f"{ratios['ray_1_actor_vs_local_s_per_question']} "
                f"({ratios['ray_1_actor_vs_local_s_per_question_steady']})",
            )
        )
        rows.append(
            (
                "Ray 2 actors / 1 actor, throughput (steady)",
                f"{ratios['ray_2_vs_1_actors_throughput']} "
                f"({ratios['ray_2_vs_1_actors_throughput_steady']})",
            )
        )
    if "ray_1_actor_extra_start_s" in ratios:
        rows.append(("start Ray adds before its first record (s)",
                     f"{ratios['ray_1_actor_extra_start_s']}"))  # fmt: skip
    if pool and "runs" in pool.get("local", {}):  # two pool sizes, and the marginal rate
        local, on_ray = pool["local"], pool["ray_2_actors"]
        sizes = " and ".join(str(r["cards"]) for r in local["runs"])
        rows.append(
            (
                f"pool build, {sizes} cards: cards/s (marginal)",
                ", ".join(
                    f"{label} {'/'.join(str(r['cards_per_s']) for r in p['runs'])} "
                    f"({p['marginal_cards_per_s']})"
                    for label, p in (("local", local), ("Ray 2 actors", on_ray))
                ),
            )
        )
        rows.append(("pool build, Ray 2 actors / local, marginal throughput",
                     f"{pool['ray_vs_local_marginal_throughput']}"))  # fmt: skip
    elif pool:
        rows.append(
            (
                f"pool build, {pool['cards']} cards: cards/s",
                f"local {pool['local']['cards_per_s']}, Ray 2 actors "
                f"{pool['ray_2_actors']['cards_per_s']}",
            )
        )
    lm = fig.get("local_model")
    if lm:
        rows.append(
            (
                f"local model, {lm['local']['questions']} questions: seconds (ok)",
                f"local {lm['local']['seconds']} ({lm['local']['ok']}), Ray 1 actor "
                f"{lm['ray_1_actor']['seconds']} ({lm['ray_1_actor']['ok']}); ratio "
                f"{lm.get('ray_1_actor_vs_local_s_per_question')}",
            )
        )
    return rows


def _doc_retrieval_rows(fig: dict[str, Any]) -> Rows:
    rows: Rows = []
    for corpus, c in fig["corpora"].items():
        s = c["strategies"]
        label = f"{corpus}{' (held)' if c.get('held') else ''}, {c['n_docs']} docs: R@10"
        rows.append(
            (
                label,
                ", ".join(f"{name} {r['recall@10']:.3f}" for name, r in s.items())
                + f"; weights {c['weights']['dense']:g}/{c['weights']['bm25']:g}",
            )
        )
    return rows


class _SetFigures(NamedTuple):
    """One set of a ``retrieval_all`` file: its toolrag default beside plain LlamaIndex."""

    kind: str  # "tools" or "documents"
    name: str
    held: bool
    n_items: int
    n_queries: int
    metric: str  # "R@5" or "R@10"
    toolrag: float
    plain: float
    dense: float
    bm25: float
    gain: float | None  # the file's margin, where it keeps one per set


def _retrieval_sets(fig: dict[str, Any]) -> list[_SetFigures]:
    """Every tool pool (``best`` against ObjectIndex, R@5), then every corpus (the default
    search, as the file names it, against VectorStoreIndex, R@10)."""
    out = []
    for name, t in (fig.get("tool_sets") or {}).items():
        by = _by_strategy(t["strategies"])
        r5 = {s: float(by[s]["recall@5"]) for s in ("best", "objectindex-default", "dense", "bm25")}
        out.append(_SetFigures(
            "tools", name, bool(t.get("held")), t["n_tools"], t["n_queries"], "R@5",
            r5["best"], r5["objectindex-default"], r5["dense"], r5["bm25"],
            t["margins"]["best_minus_objectindex_r5"],
        ))  # fmt: skip
    for name, c in (fig.get("doc_sets") or {}).items():
        r10 = {s: float(r["recall@10"]) for s, r in c["strategies"].items()}
        out.append(_SetFigures(
            "documents", name, bool(c.get("held")), c["n_docs"], c["n_queries"], "R@10",
            r10[c.get("default", "hybrid-auto")],  # the default then (0056: hybrid-rrf)
            r10["vectorstoreindex-default"], r10["dense"], r10["bm25"],
            None,
        ))  # fmt: skip
    return out


def _retrieval_all_rows(fig: dict[str, Any]) -> Rows:
    """One row per set: toolrag's default against plain LlamaIndex, and the issue's margins."""
    rows: Rows = []
    for f in _retrieval_sets(fig):
        if f.kind == "tools":
            ours, plain = "best", "ObjectIndex"
            plain_cell = f"{plain} {f.plain:.3f} ({f.gain:+.3f})"
        else:
            ours, plain = "default hybrid", "VectorStoreIndex"
            plain_cell = f"{plain} {f.plain:.3f}"
        rows.append((
            f"{f.kind}, {f.name}{' (held)' if f.held else ''}: {f.n_items:,} "
            f"{'tools' if f.kind == 'tools' else 'docs'}, {f.n_queries:,} queries, {f.metric}",
            f"{ours} {f.toolrag:.3f}, {plain_cell}, dense {f.dense:.3f}, BM25 {f.bm25:.3f}",
        ))  # fmt: skip
    return rows


def _ingest_rows(fig: dict[str, Any]) -> Rows:
    rows: Rows = []
    for fmt, r in fig["results"].items():
        ours, base, unit = r["toolrag"], r["baseline"], r["unit"]
        what, rate = f"{r['files']} files", f"{ours['files_per_s']} files/s"
        if unit != "file":
            what += f", {r['units']} {unit}s"
            rate += f", {ours['units_per_s']} {unit}s/s"
        if base.get("supported") is False:
            baseline = "plain LlamaIndex: not supported (no OCR)"
        else:
            baseline = (
                f"plain LlamaIndex {base['seconds']:.2f} s, {base['files_per_s']} files/s "
                f"(toolrag/baseline time x{r['ratio_toolrag_over_baseline_s']:.2f})"
            )
        rows.append((
            f"{fmt}: {what} (median of {fig['repeat']})",
            f"toolrag {ours['seconds']:.2f} s, {rate}, {ours['chunks']} chunks; {baseline}; "
            f"re-sync unchanged {ours['resync_unchanged_seconds']:.3f} s",
        ))  # fmt: skip
        if "toolrag_reader_auto" in r:
            auto = r["toolrag_reader_auto"]
            rows.append((
                f"{fmt} read as files (`reader: auto`)",
                f"toolrag {auto['seconds']:.2f} s, {auto['files_per_s']} files/s, "
                f"{auto['chunks']} chunks",
            ))  # fmt: skip
    return rows


def _overhead_rows(fig: dict[str, Any]) -> Rows:
    return [
        (
            f"{r['workload']} median",
            f"bare {r['raw_median_ms']:.3f} ms, guarded {r['guarded_median_ms']:.3f} ms "
            f"(x{r['median_ratio']:.2f}, +{r['overhead_us_median']:.0f} µs)",
        )
        for r in fig["results"]
    ]


def _demo_rows(fig: dict[str, Any]) -> Rows:
    return [
        ("answers strictly matched", f"{fig['matched']} of {fig['n']}"),
        ("expected tool called", f"{fig['tool_ok']} of {fig['n']}"),
        ("median seconds per question", _f(fig.get("median_seconds"), 1)),
    ]


def _gate_rows(fig: dict[str, Any]) -> Rows:
    chosen = fig["chosen"]
    picked = f"{chosen['gate']} ({chosen['requests']} requests, keeps {chosen['kept']})"
    rows: Rows = [("cosine gate chosen from written requests", picked)]
    if chosen.get("evidence"):
        e = chosen["evidence"]
        rows.append((
            "evidence gate (auto)",
            f"cosine/{e['cosine_scale']} + bm25/{e['lexical_scale']} >= {e['threshold']}; "
            f"keeps {chosen['evidence_kept']} of the requests, empties "
            f"{chosen['offtopic_emptied']} of the off-topic references",
        ))  # fmt: skip
    groups = [(name, data) for name, data in fig["sets"].items()]
    groups += [(f"pool {name}", data) for name, data in (fig.get("pools") or {}).items()]
    for name, data in groups:
        for label in ("none", "auto", "auto-cosine"):
            g = data["gates"].get(label)
            if g is None:
                continue
            rows.append((
                f"{name}: gate {label}",
                f"keeps tools for {_f(g['keep_tools'])} of {data['answerable']}, empties "
                f"{_f(g['no_tool_emptied'])} of {data['no_tool']} no-tool questions",
            ))  # fmt: skip
    return rows


def _pool_offers_rows(fig: dict[str, Any]) -> Rows:
    rows: Rows = []
    for pool, data in fig["pools"].items():
        gate = data["gate"]
        bar = gate["evidence"]["threshold"] if gate.get("evidence") else gate.get("gate")
        for setup in ("toolrag", "objectindex"):
            r = data.get(setup)
            if r is None:
                continue
            rows.append((
                f"{pool.replace('_', ' ')}: {setup}",
                f"all expected offered {_f(r['all_expected_offered'], 3)}, first offered "
                f"expected {_f(r['first_offered_expected'], 3)}, answerable emptied "
                f"{_f(r['answerable_emptied'], 3)}, distractors offered "
                f"{_f(r['distractors_offered_mean'], 2)}, no-tool emptied "
                f"{_f(r['no_tool_emptied'], 3)}"
                + (f" (gate {bar}, {data['cards_with_requests']} cards with requests)"
                   if setup == "toolrag" else ""),
            ))  # fmt: skip
    return rows


def _gate_sample_rows(fig: dict[str, Any]) -> Rows:
    """``gate_sample``: per pool and sample size, how far the gate chosen from a sample of
    written requests moves (over ``draws`` samples) from the gate chosen from all of them."""
    rows: Rows = []
    for pool, data in fig["pools"].items():
        full = data["full"]["evidence"]["threshold"]
        for limit, ways in data["limits"].items():
            cells = [
                f"{way}: median {r['threshold_median']}, {r['threshold_min']}-"
                f"{r['threshold_max']}, most off {r['off_full_max']}, kept of all "
                f"{_f(r['kept_all_mean'], 3)}"
                for way, r in ways.items()
            ]
            rows.append((
                f"{pool} ({data['written_requests']} requests, gate from all {full}, "
                f"{_f(data['ms_per_search'], 1)} ms a search): {limit} of them",
                "; ".join(cells),
            ))  # fmt: skip
    return rows


def _first_hour_rows(fig: dict[str, Any]) -> Rows:
    """``first_hour``: a folder and a database through init, index and ask, per setup."""
    rows: Rows = []
    for setup, r in fig["results"].items():
        rows.append((
            f"{setup} ({r['n']} questions, {len(fig['tools'])} tools)",
            f"answered {r['answered']} of {r['n_answer_scored']}, tools right "
            f"{_f(r['tool_accuracy'], 3)}, both parts called {_f(r['multi_tool_coverage'], 3)}, "
            f"no-tool {_f(r['no_tool_accuracy'], 3)}, p50 {_f(r['seconds_median'], 1)} s",
        ))  # fmt: skip
    return rows


def _agent_rows(fig: dict[str, Any]) -> Rows:
    rows: Rows = []
    for qset, per_setup in (fig.get("results_by_set") or {"all": fig["results"]}).items():
        for setup, r in per_setup.items():
            failed = r.get("failed") or 0  # questions the setup gave no answer to
            seconds = (
                "no answer given" if failed >= r["n"] else f"p50 {_f(r['seconds_median'], 1)} s"
            )
            rows.append((
                f"{qset}: {setup} ({r['n']} questions)",
                (f"failed {failed} of {r['n']}, " if failed else "")
                + f"answer {_f(r['answer_accuracy'], 3)}, tool {_f(r['tool_accuracy'], 3)}, "
                f"no-tool {_f(r.get('no_tool_accuracy'), 3)}, multi-tool "
                f"{_f(r.get('multi_tool_coverage'), 3)}, {seconds}"
                + (f", prompt tokens {_f(r.get('prompt_tokens_mean'), 0)}, cache hit "
                   f"{_f(r['cache_hit_share'], 3)}" if r.get("cache_hit_share") is not None
                   else ""),
            ))  # fmt: skip
    return rows


def _generic_rows(fig: dict[str, Any]) -> Rows:
    """The figures' top-level numbers, for a benchmark without rows of its own here."""
    return [
        (key, _f(value))
        for key, value in fig.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    ][:12]


def _fusion_rows(fig: dict[str, Any]) -> Rows:
    """``ablations.fusion_per_query``: each variant's R@5 / MRR per set."""
    return [
        (
            f"{key}: {p['n_tools']:,} tools, {p['n_queries']:,} queries, R@5 / MRR",
            ", ".join(f"{v} {r['recall@5']:.3f} / {r['mrr']:.3f}" for v, r in p["rows"].items()),
        )
        for key, p in fig["pools"].items()
    ]


def _pseudo_query_rows(fig: dict[str, Any]) -> Rows:
    """Per corpus: the rankings alone, then the ``auto`` fusion per pseudo-query source with
    the weights it chose (R@10 / MRR on the corpus's real queries)."""
    rows: Rows = [("standard errors to leave plain RRF", _f(fig["margin_se"], 1))]
    for name, c in fig["corpora"].items():
        cells = [f"{s} {r['recall@10']:.3f} / {r['mrr']:.3f}" for s, r in c["strategies"].items()]
        for source, r in c["sources"].items():
            w = r["weights"]
            cells.append(
                f"auto from {source} {r['recall@10']:.3f} / {r['mrr']:.3f} "
                f"({_f(w['dense'], 2)}, {_f(w['bm25'], 2)})"
            )
        label = f"{name}: {c['n_docs']:,} docs, {c['n_queries']} queries, R@10 / MRR"
        rows.append((label, "; ".join(cells)))
    return rows


def _sql_column_rows(fig: dict[str, Any]) -> Rows:
    """``ablations.sql_columns``: per database, the miswritten names run as the right column
    and as a wrong one, by the sure matches, every match and difflib's closest name."""
    rows: Rows = []
    for db, f in fig.items():
        cells = []
        for method in ("runs", "suggests", "difflib_0.8"):
            a = f[method]["all"]
            cells.append(f"{method} {a['right']} right / {a['wrong']} wrong")
        rows.append((f"{db}: {f['cases']} miswritten names", "; ".join(cells)))
    return rows


def _tool_grammar_rows(fig: dict[str, Any]) -> Rows:
    """``ablations.tool_grammar``: per set, the router held to the offered tools' schemas
    against the decision's shape alone."""
    rows: Rows = []
    for name, s in fig["sets"].items():
        cells = []
        for kind, r in s["reports"].items():
            args = "n/a" if r["argument_accuracy"] is None else f"{r['argument_accuracy']:.3f}"
            cells.append(
                f"{kind}: recall {r['recall']:.3f}, arguments {args}, valid "
                f"{r['valid_rate']:.2f}, repaired {r['repaired']}, p50 {r['p50_s']:.1f} s"
            )
        rows.append((f"{name}: {s['n_queries']} questions, {s['n_tools']} tools", "; ".join(cells)))
    return rows


HEADLINES: dict[str, Callable[[dict[str, Any]], Rows]] = {
    "tool_grammar": _tool_grammar_rows,
    "sql_columns": _sql_column_rows,
    "pseudo_queries": _pseudo_query_rows,
    "fusion_per_query": _fusion_rows,
    "demo": _demo_rows,
    "gate_auto": _gate_rows,
    "pool_offers": _pool_offers_rows,
    "gate_sample": _gate_sample_rows,
    "first_hour": _first_hour_rows,
    "agent": _agent_rows,
    "tool_retrieval": _retrieval_rows,
    "tool_tokens": _tokens_rows,
    "guard_load": _guard_load_rows,
    "mcp_latency": _mcp_rows,
    "mcp_load": _mcp_load_rows,
    "ingest": _ingest_rows,
    "batch_scale": _batch_scale_rows,
    "doc_retrieval": _doc_retrieval_rows,
    "retrieval_all": _retrieval_all_rows,
    "tool_overhead": _overhead_rows,
}


def headline_rows(record: dict[str, Any]) -> Rows:
    name = record["name"]
    for prefix in sorted(HEADLINES, key=len, reverse=True):
        if name == prefix or name.startswith(prefix + "_"):
            try:
                return HEADLINES[prefix](record["figures"])
            except (KeyError, TypeError):
                break
    return _generic_rows(record["figures"])


# --- docs/benchmarks.md --------------------------------------------------------------------------
def _machine(m: dict[str, Any]) -> str:
    parts = [f"{m.get('cores')} cores", str(m.get("cpu") or "unknown CPU")]
    parts.append(f"load {m['load_1m']}" if m.get("load_1m") is not None else "load unknown")
    parts.append(f"GPU {m['gpu']}" if m.get("gpu") else "no GPU")
    if m.get("platform"):
        parts.append(str(m["platform"]))
    return ", ".join(parts)


def _commit(record: dict[str, Any]) -> str:
    commit = record.get("commit") or "unknown"
    return f"`{commit}`" + (" (with uncommitted changes)" if record.get("dirty") else "")


def docs_section(record: dict[str, Any]) -> str:
    name = record["name"]
    lines = [f"### {name}", "", "| figure | value |", "|---|---|"]
    lines += [f"| {label} | {value} |" for label, value in headline_rows(record)]
    lines += [
        "",
        f"- command: `{record['command']}` ({_f(record['seconds'], 1)} s)",
        f"- commit {_commit(record)}, {record['date']}",
        f"- machine: {_machine(record['machine'])}",
        f"- result file: [benchmarks/results/{name}.json](../benchmarks/results/{name}.json)",
    ]
    if record.get("note"):  # what the file's writer added after the run (which code, settings)
        lines.append(f"- note: {' '.join(str(record['note']).split())}")
    return "\n".join(lines)


def render_docs(records: list[dict[str, Any]]) -> str:
    if not records:
        return "No result files yet: run a benchmark (`python -m benchmarks.<name>`)."
    return "\n\n".join(docs_section(r) for r in records)


# --- README.md at a glance -----------------------------------------------------------------------
def _link(value: str, name: str) -> str:
    return f"[{value}](benchmarks/results/{name}.json)"


def _held_rows(by_name: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The held-out pool and corpus of ``retrieval_all``: sets nothing was tuned on, each from
    the newest file that runs it. A set that a later file runs as a development set (held out
    once, tuned on since) is left out."""
    rows: list[tuple[str, str, str]] = []
    files = sorted(n for n in by_name if n.startswith("retrieval_all"))
    developed = {
        f.name for n in files for f in _retrieval_sets(by_name[n]["figures"]) if not f.held
    }
    newest: dict[str, tuple[str, str, Any]] = {}  # set: (date, file, its figures)
    for name in files:
        for f in _retrieval_sets(by_name[name]["figures"]):
            if f.held and f.name not in developed:
                date = str(by_name[name].get("date", ""))
                if f.name not in newest or date > newest[f.name][0]:
                    newest[f.name] = (date, name, f)
    for _, name, f in newest.values():
        if f.kind == "tools":
            what = f"tool retrieval, held-out pool ({f.name}, {f.n_items:,} tools"
            ours, plain = "best, no written requests", "plain ObjectIndex"
        else:
            what = f"document retrieval, held-out corpus ({f.name}, {f.n_items:,} docs"
            ours, plain = "default hybrid", "plain VectorStoreIndex"
        rows.append((
            f"{what}, {f.n_queries} questions): {f.metric}",
            _link(f"{f.toolrag:.3f}", name) + f" ({ours})",
            _link(f"{f.plain:.3f}", name) + f" ({plain}); "
            + _link(f"{f.bm25:.3f}", name) + " (BM25); "
            + _link(f"{f.dense:.3f}", name) + " (dense)",
        ))  # fmt: skip
    return rows


def glance_rows(by_name: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(what, toolrag, baseline) rows from the full runs' files that exist."""
    rows: list[tuple[str, str, str]] = []
    # the newest run of a question set with baselines beside toolrag (a toolrag-only run has
    # no ratio to show)
    compared = [
        r
        for n, r in by_name.items()
        if n.startswith("agent_sets") and len(r["figures"].get("results") or {}) > 1
    ]
    agent = max(compared, key=lambda r: r["date"], default=None)
    agent = by_name.get("agent", agent)
    if agent is not None:
        fig, name = agent["figures"], agent["name"]
        for qset, per_setup in (fig.get("results_by_set") or {}).items():
            ours = per_setup.get("toolrag")
            if ours is None:
                continue
            base = [(s, per_setup[s]) for s in ("all_tools", "objectindex") if s in per_setup]
            rows.append((
                f"agent, {qset} questions ({ours['n']}): strict answer accuracy",
                _link(_f(ours["answer_accuracy"], 3), name) + " (toolrag defaults)",
                "; ".join(_link(_f(r["answer_accuracy"], 3), name) + f" ({s})" for s, r in base),
            ))  # fmt: skip
    if "first_hour" in by_name:  # a user's own folder and database, not the sample's
        fig = by_name["first_hour"]["figures"]
        ours, plain = fig["results"]["toolrag"], fig["results"]["plain"]
        rows.append((
            f"agent, a user's own folder and database ({ours['n_answer_scored']} questions "
            "with an answer): answered strictly",
            _link(f"{ours['answered']} of {ours['n_answer_scored']}", "first_hour")
            + " (toolrag defaults)",
            _link(f"{plain['answered']} of {plain['n_answer_scored']}", "first_hour")
            + " (stock ReActAgent, all tools)",
        ))  # fmt: skip
    if "tool_retrieval" in by_name:
        fig = by_name["tool_retrieval"]["figures"]
        single = _by_strategy(fig["results"])
        multi = _by_strategy(fig.get("results_multi_tool") or [])
        ours = next(
            (s for s in ("best+requests+translated", "best+requests", "best") if s in single),
            None,
        )

        def cell(rows: dict[str, dict[str, Any]], strategy: str, key: str) -> str:
            if strategy not in rows:
                return ""
            label = STRATEGY_LABELS.get(strategy, strategy)
            return _link(f"{rows[strategy][key]:.4f}", "tool_retrieval") + f" ({label})"

        base = [s for s in ("objectindex-default", "bm25") if s in single]
        n = single[ours]["n_queries"] if ours else 0
        if ours:
            rows.append(
                (
                    f"BFCL tool retrieval, {n:,} single-call questions: R@5",
                    cell(single, ours, "recall@5"),
                    "; ".join(cell(single, s, "recall@5") for s in base),
                )
            )
            multi_ours = "best+requests" if "best+requests" in multi else "best"
            if multi_ours in multi:
                rows.append(
                    (
                        f"BFCL, {multi[multi_ours]['n_queries']} multi-tool requests: R@5",
                        cell(multi, multi_ours, "recall@5"),
                        "; ".join(cell(multi, s, "recall@5") for s in base if s in multi),
                    )
                )
    rows += _held_rows(by_name)
    if "tool_tokens" in by_name:
        for r in sorted(by_name["tool_tokens"]["figures"]["results"], key=lambda r: -r["pool"]):
            rows.append(
                (
                    f"prompt tokens of one agent step, {r['pool']} tools (median)",
                    _link(f"{r['retrieved_median_tokens']:,.0f}", "tool_tokens")
                    + f" (top {r['k']} retrieved, "
                    + _link(f"{r['reduction']:.1%}", "tool_tokens")
                    + " fewer)",
                    _link(f"{r['all_tools_median_tokens']:,.0f}", "tool_tokens") + " (all tools)",
                )
            )
    if "tool_overhead" in by_name:
        for r in by_name["tool_overhead"]["figures"]["results"]:
            if r["workload"] == "chinook-warm":
                rows.append(
                    (
                        "guard overhead, `run_sql` on Chinook (warm), median per call",
                        _link(f"{r['guarded_median_ms']:.3f} ms", "tool_overhead")
                        + " guarded (+"
                        + _link(f"{r['overhead_us_median']:.0f} µs", "tool_overhead")
                        + ")",
                        _link(f"{r['raw_median_ms']:.3f} ms", "tool_overhead") + " bare driver",
                    )
                )
    if "guard_load" in by_name:
        fig = by_name["guard_load"]["figures"]
        rows.append(
            (
                f"guard under load, {fig['calls']:,} mixed calls on {fig['workers']} workers",
                _link(f"{fig['calls_per_s']} calls/s", "guard_load")
                + ", "
                + _link(f"{fig['duplicates_written']} duplicates", "guard_load"),
                _link(f"{fig['baseline_bare_tools']['calls_per_s']} calls/s", "guard_load")
                + " bare tools",
            )
        )
    if "mcp_latency" in by_name:
        fig = by_name["mcp_latency"]["figures"]
        for r in fig["results"]:
            if r["tool"] == "run_sql":
                rows.append(
                    (
                        f"`tools/call` `run_sql` over MCP {fig.get('transport', 'stdio')}, p50",
                        _link(f"{r['mcp_stdio']['p50_ms']:.1f} ms", "mcp_latency"),
                        _link(f"{r['in_process']['p50_ms']:.1f} ms", "mcp_latency") + " in process",
                    )
                )
    return rows[:GLANCE_ROWS]


def render_glance(records: list[dict[str, Any]]) -> str:
    rows = glance_rows({r["name"]: r for r in records})
    if not rows:
        return "No result files yet: run a benchmark (`python -m benchmarks.<name>`)."
    lines = ["| what | toolrag | baseline |", "|---|---|---|"]
    lines += [f"| {what} | {ours} | {base} |" for what, ours, base in rows]
    lines += ["", "Every figure links to its result file; details in [docs/benchmarks.md]"]
    lines[-1] += "(docs/benchmarks.md)."
    return "\n".join(lines)


# --- markers -------------------------------------------------------------------------------------
def replace_between(path: Path, marker: str, body: str) -> tuple[str, str]:
    """The file's text and its text with what lies between ``<!-- marker:start -->`` and
    ``<!-- marker:end -->`` replaced by ``body``."""
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    if not path.exists():
        raise MarkerError(f"{path.relative_to(REPO)}: file not found (needs {start} ... {end})")
    text = path.read_text()
    for m in (start, end):
        if text.count(m) != 1:
            found = "missing" if m not in text else "found more than once"
            raise MarkerError(f"{path.relative_to(REPO)}: marker {m} {found}")
    head, rest = text.split(start)
    if end in head:
        raise MarkerError(f"{path.relative_to(REPO)}: marker {end} comes before {start}")
    tail = rest.split(end)[1]
    return text, f"{head}{start}\n{body}\n{end}{tail}"


def load_records() -> list[dict[str, Any]]:
    records = []
    for path in sorted(RESULTS.glob("*.json")):
        record = json.loads(path.read_text())
        record.setdefault("name", path.stem)
        records.append(record)
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="Write nothing; exit 1 if a file is not up to date."
    )
    args = parser.parse_args(argv)
    records = load_records()
    targets = ((DOCS, "results", render_docs(records)), (README, "glance", render_glance(records)))
    try:
        planned = [(path, *replace_between(path, marker, body)) for path, marker, body in targets]
    except MarkerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    stale = [path for path, old, new in planned if old != new]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPO)} is not up to date: run scripts/render_benchmarks.py")
        return 1 if stale else 0
    for path, _, new in planned:
        if path in stale:
            path.write_text(new)
            print(f"rendered {path.relative_to(REPO)}")
    print(f"{len(records)} result files; {len(stale)} file(s) changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
