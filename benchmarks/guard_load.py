"""Load on the guard: 1,000 mixed tool calls across 8 concurrent workers.

The calls (fixed seed) mix reads of the sample field API (FastAPI on 127.0.0.1) and ``run_sql``
on the sample SQLite database, ``create_rfi_draft`` writes whose idempotency keys repeat (a pool
of 60 keys), ``submit_change_order`` (external: a person approves half of them) and
``cancel_inspection`` (delete: always denied), and injected faults: a tool that raises, one that
hangs past its timeout, one that returns 10 MB, and unknown tool names.

Reported, from the stores themselves rather than from the guard's own view:

- ``calls_per_s`` of the guarded run, and of the same calls made on the bare tools (baseline,
  same process, same workers) for the ratio;
- ``duplicates_written``: RFI drafts in the field API's database beyond one per distinct key
  (must be 0), and ``write_executions_beyond_first``: non-replayed successes beyond one per key;
- ``audit_records`` against ``calls`` (must be equal);
- ``gated_executed_without_approval``: change-order submissions in the database beyond the
  approvals granted, plus cancelled inspections (every cancel was denied) (must be 0).

    .venv/bin/python -m benchmarks.guard_load [--calls 1000] [--workers 8]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import sqlite3
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


def plan_calls(n: int, seed: int = 7) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    projects = [f"GRB-1{i:02d}" for i in range(1, 13)]
    mix: list[tuple[float, Any]] = [
        (0.20, lambda: ("list_rfis", {"project": rng.choice(projects)})),
        (0.15, lambda: ("get_site_status", {"project": rng.choice(projects)})),
        (0.20, lambda: ("run_sql", {"sql": rng.choice(SQL)})),
        (
            0.20,
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
            0.10,
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
    weights = [w for w, _ in mix]
    return [rng.choices(mix, weights)[0][1]() for _ in range(n)]


SQL = [
    "SELECT code, name FROM projects",
    "SELECT project_code, SUM(amount) FROM invoices GROUP BY project_code",
    "SELECT COUNT(*) FROM change_orders WHERE status = 'approved'",
]


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

            def guarded(call: tuple[str, dict[str, Any]]) -> None:
                name, arguments = call
                result = guard.call(name, arguments, run_id="load")
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
            by_name = {t.metadata.get_name(): t for t in tools}
            bare_calls = [c for c in calls if c[0] in by_name and c[0] != "hang"]

            def bare(call: tuple[str, dict[str, Any]]) -> None:
                # the bare tools may raise: catching that is the guard's job, not the baseline's
                with contextlib.suppress(Exception):
                    by_name[call[0]](**call[1])

            started = time.perf_counter()
            with ThreadPoolExecutor(args.workers) as pool:
                list(pool.map(bare, bare_calls))
            bare_s = time.perf_counter() - started

    writes = [(a, r) for n, a, r in results if n == "create_rfi_draft" and r.success]
    keys = {a["idempotency_key"] for a, _ in writes}
    executed = Counter(a["idempotency_key"] for a, r in writes if not r.idempotent_replay)
    status = Counter(
        "replayed" if r.idempotent_replay else str(r.error_code or "ok") for _, _, r in results
    )
    granted = sum(decisions)
    report = {
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
    Console().print(table)
    print(f"JSON written to {args.out}")


if __name__ == "__main__":
    main()
