"""Load on the guard: 1,000 mixed tool calls across 8 concurrent workers.

The calls (fixed seed) mix reads of the sample field API (FastAPI on 127.0.0.1) and ``run_sql``
on the sample SQLite database, ``create_rfi_draft`` writes whose idempotency keys repeat (a pool
of 60 keys), ``submit_change_order`` (external: a person approves half of them) and
``cancel_inspection`` (delete: always denied), and injected faults: a tool that raises, one that
hangs past its timeout, one that returns 10 MB, and unknown tool names; and hostile inputs
(issue 52): 64 KB of ``"a."`` to ``run_sql`` and to a REST tool, the same just under the
argument limit, 800 spaces between two sentences, a 5 MB argument, arguments nested 64 and
5,000 levels deep, a thousand argument keys, unknown extra arguments, the SQL memory bombs
``printf('%.*c', 200000000, 'x')`` and a recursive CTE that doubles a string, and a CTE that
shadows ``sqlite_master`` to get past the table scope.

Reported, from the stores themselves rather than from the guard's own view:

- ``calls_per_s`` of the guarded run, and of the same calls made on the bare tools (baseline,
  same process, same workers) for the ratio;
- ``duplicates_written``: RFI drafts in the field API's database beyond one per distinct key
  (must be 0), and ``write_executions_beyond_first``: non-replayed successes beyond one per key;
- ``audit_records`` against ``calls`` (must be equal);
- ``gated_executed_without_approval``: change-order submissions in the database beyond the
  approvals granted, plus cancelled inspections (every cancel was denied) (must be 0);
- per-call latency under the load: p50/p95, the worst per kind of input, and
  ``worst_single_input_s``, the longest any one call took, with its kind and input (a slow
  pattern holds the GIL, so it shows as the worst and in its neighbours' latencies too); and
  ``per_kind_alone_s``, each kind once more on its own after the load (fresh tools and guard:
  a cold SQL verdict cache, its own audit log and key store), what the input costs without
  the others around it.

    .venv/bin/python -m benchmarks.guard_load [--calls 1000] [--workers 8]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import random
import sqlite3
import statistics
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from llama_index.core.tools import BaseTool, FunctionTool
from rich.console import Console
from rich.table import Table

from benchmarks.results import result_name, write_result
from toolrag.cards import ToolCard, load_document
from toolrag.guard import ApprovalRequest, AuditLog, IdempotencyStore, ToolGuard
from toolrag.sample import running_server
from toolrag.tools import ToolResult
from toolrag.tools.rest import OpenAPIToolSpec, load_rest_configs
from toolrag.tools.sql import SQLSpecConfig, SQLToolSpec, build_sqlite

ROOT = Path(__file__).resolve().parents[1]


def raise_error(x: str = "") -> ToolResult:
    """Injected fault: the backend crashes."""
    raise ConnectionResetError("backend went away")


def hang(x: str = "") -> ToolResult:
    """Injected fault: never answers."""
    while True:
        time.sleep(0.01)


def flood(x: str = "") -> ToolResult:
    """Injected fault: 10 MB of output."""
    return ToolResult.ok({"blob": "z" * 10_000_000})


SQL = [
    "SELECT code, name FROM projects",
    "SELECT project_code, SUM(amount) FROM invoices GROUP BY project_code",
    "SELECT COUNT(*) FROM change_orders WHERE status = 'approved'",
]


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


A_DOTS = "a." * 32_768  # 64 KB
A_DOTS_UNDER = "a." * 9_900  # under the guard's 20,000-character argument limit, over the SQL cap
SPACES = "Find the open RFIs on GRB-101." + " " * 800 + "Then list the weather delays there."
PRINTF_BOMB = "SELECT printf('%.*c', 200000000, 'x') AS s"
CTE_DOUBLING = (
    "WITH RECURSIVE t(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM t "
    "WHERE n < 40) SELECT length(s) FROM t"
)
SCOPE_BYPASS = (
    "SELECT * FROM sqlite_master WHERE EXISTS (WITH sqlite_master AS (SELECT 1) "
    "SELECT 1 FROM sqlite_master)"
)
#: kind: (tool, arguments), each planned with the same small weight
HOSTILE: dict[str, tuple[str, dict[str, Any]]] = {
    "sql_a_dots_64kb": ("run_sql", {"sql": A_DOTS}),
    "rest_a_dots_64kb": ("list_rfis", {"project": A_DOTS}),
    "sql_a_dots_under_limit": ("run_sql", {"sql": A_DOTS_UNDER}),
    "rest_a_dots_under_limit": ("list_rfis", {"project": A_DOTS_UNDER}),
    "sql_800_spaces": ("run_sql", {"sql": SPACES}),
    "rest_800_spaces": ("list_rfis", {"project": SPACES}),
    "write_800_spaces": (
        "create_rfi_draft",
        {
            "project": "GRB-101",
            "subject": "Door hardware",
            "question": SPACES,
            "idempotency_key": "load-hostile-spaces",
        },
    ),
    "rest_5mb_argument": ("list_rfis", {"project": "x" * 5_000_000}),
    "nested_64": ("run_sql", {"sql": nested(64)}),
    "nested_5000": ("list_rfis", {"project": nested(5_000)}),
    "thousand_keys": (
        "get_site_status",
        {f"k{i}": i for i in range(1_000)} | {"project": "GRB-101"},
    ),
    "unknown_extra_args": ("run_sql", {"sql": SQL[0], "zzz": "a." * 4_000, "mode": "raw"}),
    "sql_printf_bomb": ("run_sql", {"sql": PRINTF_BOMB}),
    "sql_cte_doubling": ("run_sql", {"sql": CTE_DOUBLING}),
    "sql_scope_bypass": ("run_sql", {"sql": SCOPE_BYPASS}),
}


def plan_calls(n: int, seed: int = 7) -> list[tuple[str, str, dict[str, Any]]]:
    """``n`` calls as (kind, tool, arguments): the kind is the tool's name for ordinary calls
    and faults, a :data:`HOSTILE` key for the hostile inputs (about 15% of the calls)."""
    rng = random.Random(seed)
    projects = [f"GRB-1{i:02d}" for i in range(1, 13)]
    mix: list[tuple[float, Any]] = [
        (0.17, lambda: ("list_rfis", {"project": rng.choice(projects)})),
        (0.13, lambda: ("get_site_status", {"project": rng.choice(projects)})),
        (0.17, lambda: ("run_sql", {"sql": rng.choice(SQL)})),
        (
            0.17,
            lambda: (
                "create_rfi_draft",
                {
                    "project": "GRB-101",
                    "subject": "Door hardware",
                    "question": "Which lever set applies?",
                    "idempotency_key": f"load-{rng.randrange(60)}",
                },
            ),
        ),
        (
            0.09,
            lambda: (
                "submit_change_order",
                {
                    "change_order": "CO-101-02",
                    "recipient": "owner",
                    "note": f"n{rng.randrange(10**9)}",
                },
            ),
        ),
        (0.05, lambda: ("cancel_inspection", {"inspection_id": "INSP-101-06"})),
        (0.04, lambda: ("raise_error", {})),
        (0.02, lambda: ("hang", {})),
        (0.02, lambda: ("flood", {})),
        (0.02, lambda: ("get_wether", {"city": "Oslo"})),
    ]
    mix += [(0.01, lambda kind=kind: (kind, *HOSTILE[kind])) for kind in HOSTILE]
    weights = [w for w, _ in mix]
    planned = [rng.choices(mix, weights)[0][1]() for _ in range(n)]
    return [c if len(c) == 3 else (c[0], c[0], c[1]) for c in planned]


def describe(tool: str, arguments: dict[str, Any]) -> str:
    """A call in at most 120 characters: the tool and the start of its arguments' JSON."""
    try:
        text = json.dumps(arguments, ensure_ascii=False)
    except (RecursionError, ValueError):
        text = repr(arguments)[:200]
    size = f" ({len(text):,} chars)" if len(text) > 80 else ""
    return f"{tool}({text[:80]}{'...' if len(text) > 80 else ''}){size}"


def build(tmp: Path, field_url: str) -> tuple[list[BaseTool], list[ToolCard]]:
    db = tmp / "construction.sqlite"
    build_sqlite(ROOT / "data" / "db" / "seed.sql", db)
    sql = SQLToolSpec.from_url(f"sqlite:///{db}", SQLSpecConfig(name="construction"))
    config = load_rest_configs(ROOT / "toolspecs" / "rest.yaml")[0].model_copy(
        update={"base_url": field_url, "base_url_env": None}
    )
    rest = OpenAPIToolSpec(config, load_document(ROOT / "toolspecs" / config.document))
    tools: list[BaseTool] = [*sql.to_tool_list(), *rest.to_tool_list()]
    tools += [FunctionTool.from_defaults(fn=f) for f in (raise_error, hang, flood)]
    effects = rest.side_effects()
    cards = [
        ToolCard(
            name=t.metadata.get_name(),
            side_effect=effects.get(t.metadata.get_name(), "read"),
            timeout_s=0.3 if t.metadata.get_name() == "hang" else None,
        )
        for t in tools
    ]
    return tools, cards


def count(db: Path, sql: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(sql).fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "guard_load.json")
    args = parser.parse_args()
    calls = plan_calls(args.calls)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        field_db = tmp / "field.sqlite"
        with running_server(ROOT / "data", state_path=field_db) as url:
            tools, cards = build(tmp, url)
            decisions: list[bool] = []
            lock = threading.Lock()

            def approver(request: ApprovalRequest) -> bool:
                if request.tool != "submit_change_order":
                    return False  # no cancellation is ever approved
                with lock:  # a person approves every other change-order submission
                    yes = len(decisions) % 2 == 0
                    decisions.append(yes)
                return yes

            audit = AuditLog(tmp / "audit.sqlite")
            guard = ToolGuard(
                tools,
                cards,
                audit=audit,
                store=IdempotencyStore(tmp / "idem.sqlite"),
                approver=approver,
                default_timeout_s=10.0,
                inline_tools=[t.metadata.get_name() for t in tools[:-3]],  # own deadlines
            )
            results: list[tuple[str, dict[str, Any], ToolResult]] = []
            latencies: list[tuple[float, str, str, dict[str, Any]]] = []
            raised: Counter[str] = Counter()

            def guarded(call: tuple[str, str, dict[str, Any]]) -> None:
                kind, name, arguments = call
                started = time.perf_counter()
                try:
                    result = guard.call(name, arguments, run_id="load")
                except Exception as exc:  # the guard must not raise: counted, reported
                    with lock:
                        raised[f"{kind}: {type(exc).__name__}"] += 1
                    return
                finally:
                    spent = time.perf_counter() - started
                    with lock:
                        latencies.append((spent, kind, name, arguments))
                with lock:
                    results.append((name, arguments, result))

            started = time.perf_counter()
            with ThreadPoolExecutor(args.workers) as pool:
                list(pool.map(guarded, calls))
            guarded_s = time.perf_counter() - started
            drafts = count(field_db, "SELECT COUNT(*) FROM rfi_drafts")
            submissions = count(field_db, "SELECT COUNT(*) FROM change_order_submissions")
            cancelled = count(field_db, "SELECT COUNT(*) FROM cancelled_inspections")
            audit_records = audit.count()

            # baseline: the same calls on the bare tools (no guard: no audit, no dedup store,
            # no timeout thread), same workers; the hanging fault is left out (it never ends)
            # and the hostile inputs, which the bare tools would meet unguarded
            by_name = {t.metadata.get_name(): t for t in tools}
            bare_calls = [c for c in calls if c[1] in by_name and c[1] != "hang"]

            def bare(call: tuple[str, str, dict[str, Any]]) -> None:
                # the bare tools may raise: catching that is the guard's job, not the baseline's
                with contextlib.suppress(Exception):
                    by_name[call[1]](**call[2])

            started = time.perf_counter()
            logging.disable(logging.ERROR)  # the bare tools' own tracebacks (a 5 MB URL...)
            try:
                with ThreadPoolExecutor(args.workers) as pool:
                    list(pool.map(bare, bare_calls))
            finally:
                logging.disable(logging.NOTSET)
            bare_s = time.perf_counter() - started

            # each kind of input once more, alone, on tools and a guard of their own (cold SQL
            # verdict cache, own audit log and key store, no approver): what the input itself
            # costs, without the load around it
            (tmp / "alone").mkdir()
            alone_tools, alone_cards = build(tmp / "alone", url)
            alone_guard = ToolGuard(
                alone_tools,
                alone_cards,
                audit=AuditLog(tmp / "alone" / "audit.sqlite"),
                store=IdempotencyStore(tmp / "alone" / "idem.sqlite"),
                default_timeout_s=10.0,
                inline_tools=[t.metadata.get_name() for t in alone_tools[:-3]],
            )
            alone: dict[str, float] = {}
            for kind, name, arguments in calls:
                if kind not in alone:
                    started = time.perf_counter()
                    with contextlib.suppress(Exception):  # counted above (guard_raised)
                        alone_guard.call(name, arguments, run_id="alone")
                    alone[kind] = time.perf_counter() - started

    writes = [(a, r) for n, a, r in results if n == "create_rfi_draft" and r.success]
    keys = {a["idempotency_key"] for a, _ in writes}
    executed = Counter(a["idempotency_key"] for a, r in writes if not r.idempotent_replay)
    status = Counter(
        "replayed" if r.idempotent_replay else str(r.error_code or "ok") for _, _, r in results
    )
    granted = sum(decisions)
    worst = max(latencies, key=lambda x: x[0])
    per_kind: dict[str, float] = {}
    for spent, kind, _, _ in latencies:
        per_kind[kind] = max(per_kind.get(kind, 0.0), spent)
    ordered = sorted(spent for spent, *_ in latencies)
    report: dict[str, Any] = {
        "benchmark": "guard_load",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "calls": len(calls),
        "workers": args.workers,
        "calls_per_s": round(len(calls) / guarded_s, 1),
        "seconds": round(guarded_s, 2),
        "baseline_bare_tools": {
            "calls": len(bare_calls),
            "calls_per_s": round(len(bare_calls) / bare_s, 1),
            "seconds": round(bare_s, 2),
        },
        "duplicates_written": drafts - len(keys),
        "write_executions_beyond_first": sum(c - 1 for c in executed.values()),
        "distinct_write_keys": len(keys),
        "write_calls": sum(1 for n, _, _ in results if n == "create_rfi_draft"),
        "audit_records": audit_records,
        "audit_equals_calls": audit_records == len(calls),
        "gated_calls": sum(
            1 for n, _, _ in results if n in ("submit_change_order", "cancel_inspection")
        ),
        "approvals_granted": granted,
        "gated_executed_without_approval": max(0, submissions - granted) + cancelled,
        "statuses": dict(sorted(status.items())),
        "hostile_calls": sum(1 for kind, _, _ in calls if kind in HOSTILE),
        "guard_raised": dict(sorted(raised.items())),
        "latency_s": {
            "p50": round(statistics.median(ordered), 4),
            "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 4),
            "max": round(ordered[-1], 4),
        },
        "worst_single_input_s": round(worst[0], 3),
        "worst_single_input": {"kind": worst[1], "call": describe(worst[2], worst[3])},
        "per_kind_worst_s": {
            k: round(v, 3) for k, v in sorted(per_kind.items(), key=lambda kv: -kv[1])
        },
        "per_kind_alone_s": {
            k: round(v, 3) for k, v in sorted(alone.items(), key=lambda kv: -kv[1])
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    name = result_name(
        "guard_load",
        calls=args.calls if args.calls != 1000 else 0,
        workers=args.workers if args.workers != 8 else 0,
    )
    write_result(name, report)
    table = Table("metric", "value", title="guard under load")
    for key in ("calls", "workers", "calls_per_s", "duplicates_written",
                "write_executions_beyond_first", "audit_records",
                "gated_executed_without_approval"):  # fmt: skip
        table.add_row(key, str(report[key]))
    table.add_row(
        "baseline calls/s (bare tools)", str(report["baseline_bare_tools"]["calls_per_s"])
    )
    table.add_row("audit records = calls", str(report["audit_equals_calls"]))
    table.add_row("hostile calls", str(report["hostile_calls"]))
    table.add_row("guard raised", str(sum(raised.values())))
    table.add_row(
        "worst single input",
        f"{report['worst_single_input_s']} s, {worst[1]}: {report['worst_single_input']['call']}",
    )
    for kind, spent in list(report["per_kind_worst_s"].items())[:5]:
        table.add_row(f"  worst {kind} (under load)", f"{spent} s")
    for kind, spent in list(report["per_kind_alone_s"].items())[:5]:
        table.add_row(f"  {kind} alone", f"{spent} s")
    Console().print(table)
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
