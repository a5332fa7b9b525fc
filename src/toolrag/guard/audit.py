"""The audit log: one SQLite row for every tool call, refused and replayed calls included.

Arguments are redacted before they are written (:mod:`toolrag.guard.redact`). ``toolrag audit
tail`` shows the latest rows and ``toolrag audit summary`` the calls, errors and p50/p95
latency per tool.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from toolrag.guard.redact import redact
from toolrag.guard.sqlite_wal import connect_wal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    agent TEXT NOT NULL,
    run_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    version TEXT NOT NULL,
    side_effect TEXT NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT NOT NULL,
    error_code TEXT,
    latency_ms REAL NOT NULL
)
"""


MAX_ARGUMENTS_CHARS = 8_000  # of redacted JSON per record

_COLUMNS = ("ts", "agent", "run_id", "tool", "version", "side_effect", "arguments", "status",
            "error_code", "latency_ms")  # fmt: skip


class AuditRecord(BaseModel):
    """One tool call as the audit log keeps it."""

    ts: float
    agent: str
    run_id: str
    tool: str
    version: str
    side_effect: str
    arguments: dict[str, Any]
    status: str  # ok | error | refused | denied | timeout | replayed
    error_code: str | None = None
    latency_ms: float


class ToolStats(BaseModel):
    tool: str
    calls: int
    errors: int
    refused: int
    p50_ms: float
    p95_ms: float


class AuditLog:
    """Append-only audit records in a SQLite file (safe across threads and processes)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._conn = connect_wal(self.path)
        self._conn.execute(_SCHEMA)
        self._lock = threading.Lock()

    def record(
        self,
        *,
        agent: str,
        run_id: str,
        tool: str,
        version: str,
        side_effect: str,
        arguments: dict[str, Any],
        status: str,
        error_code: str | None,
        latency_ms: float,
        sensitive: tuple[str, ...] = (),
    ) -> None:
        args = json.dumps(redact(arguments, sensitive), default=str, sort_keys=True)
        if len(args) > MAX_ARGUMENTS_CHARS:  # still valid JSON, so tail can read it
            args = json.dumps({"…": args[:MAX_ARGUMENTS_CHARS] + "…[cut]"})
        with self._lock:
            self._conn.execute(
                "INSERT INTO audit (ts, agent, run_id, tool, version, side_effect, arguments, "
                "status, error_code, latency_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (time.time(), agent, run_id, tool, version, side_effect, args, status,
                 error_code, round(latency_ms, 3)),
            )  # fmt: skip

    def tail(self, n: int = 20) -> list[AuditRecord]:
        """The latest ``n`` records, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM audit ORDER BY id DESC LIMIT ?",
                (n,),
            ).fetchall()
        return [
            AuditRecord.model_validate(
                {**dict(zip(_COLUMNS, r, strict=True)), "arguments": json.loads(r[6])}
            )
            for r in reversed(rows)
        ]

    def count(self, **where: str) -> int:
        clause = " AND ".join(f"{k} = ?" for k in where) or "1"
        with self._lock:
            row = self._conn.execute(
                f"SELECT COUNT(*) FROM audit WHERE {clause}",  # the keys are ours, values bound
                tuple(where.values()),
            ).fetchone()
        return int(row[0])

    def summary(self) -> list[ToolStats]:
        """Calls, errors, refusals and p50/p95 latency of executed calls, per tool."""
        with self._lock:
            rows = self._conn.execute("SELECT tool, status, latency_ms FROM audit").fetchall()
        by_tool: dict[str, list[tuple[str, float]]] = {}
        for tool, status, ms in rows:
            by_tool.setdefault(tool, []).append((status, ms))
        stats = []
        for tool, items in sorted(by_tool.items()):
            ran = sorted(ms for status, ms in items if status in ("ok", "error", "timeout"))
            stats.append(
                ToolStats(
                    tool=tool,
                    calls=len(items),
                    errors=sum(s in ("error", "timeout") for s, _ in items),
                    refused=sum(s in ("refused", "denied") for s, _ in items),
                    p50_ms=round(statistics.median(ran), 2) if ran else 0.0,
                    p95_ms=round(ran[min(len(ran) - 1, int(0.95 * len(ran)))], 2) if ran else 0.0,
                )
            )
        return stats

    def close(self) -> None:
        self._conn.close()
