"""The feedback loop: every routing decision and its outcome in SQLite, a rating where the
caller gives one, and the promotion of confirmed decisions into few-shot examples."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from pathlib import Path

from pydantic import BaseModel

from toolrag.errors import InputError
from toolrag.routing.examples import Example, ExampleStore
from toolrag.routing.models import RouteResult

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
  id TEXT PRIMARY KEY, ts REAL NOT NULL, question TEXT NOT NULL, decision TEXT,
  valid INTEGER NOT NULL, calls_ok INTEGER, rating INTEGER, promoted INTEGER NOT NULL DEFAULT 0
);
"""


class DecisionRecord(BaseModel):
    id: str
    question: str
    decision: dict[str, object] | None
    valid: bool
    calls_ok: bool | None
    rating: int | None
    promoted: bool


class DecisionLog:
    """``decisions.sqlite``: one row per routed question."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._conn.executescript(_SCHEMA)

    def record(self, result: RouteResult) -> str:
        """Store a decision and its outcome; returns its id (for :meth:`rate`)."""
        decision_id = uuid.uuid4().hex[:12]
        calls_ok = all(r.success for r in result.results) if result.results else None
        decision = result.decision.model_dump_json() if result.decision else None
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO decisions (id, ts, question, decision, valid, calls_ok) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (decision_id, time.time(), result.question, decision, int(result.valid),
                 None if calls_ok is None else int(calls_ok)),
            )  # fmt: skip
        return decision_id

    def rate(self, decision_id: str, good: bool) -> None:
        """The user's verdict on a decision: good (1) or bad (-1)."""
        with self._lock, self._conn:
            cur = self._conn.execute(
                "UPDATE decisions SET rating = ? WHERE id = ?", (1 if good else -1, decision_id)
            )
        if cur.rowcount == 0:
            raise InputError(
                f"No routing decision {decision_id!r}.", hint="Use an id that route() returned."
            )

    def records(self) -> list[DecisionRecord]:
        rows = self._conn.execute(
            "SELECT id, question, decision, valid, calls_ok, rating, promoted FROM decisions "
            "ORDER BY ts"
        ).fetchall()
        return [
            DecisionRecord(
                id=r[0],
                question=r[1],
                decision=json.loads(r[2]) if r[2] else None,
                valid=bool(r[3]),
                calls_ok=None if r[4] is None else bool(r[4]),
                rating=r[5],
                promoted=bool(r[6]),
            )
            for r in rows
        ]

    def promote(self, store: ExampleStore, unrated: bool = False) -> tuple[int, list[str]]:
        """Turn confirmed decisions into examples: rated good, or with ``unrated`` also the
        unrated ones whose calls all succeeded. Decisions rated bad never qualify. Examples too
        close to a test question are refused (and reported). Returns (added, refusals)."""
        chosen = [
            r
            for r in self.records()
            if not r.promoted
            and r.valid
            and r.decision is not None
            and (r.rating == 1 or (unrated and r.rating is None and r.calls_ok))
        ]
        examples = [
            Example(query=r.question, calls=r.decision.get("calls", []), source="promoted")  # type: ignore[union-attr]
            for r in chosen
        ]
        added, refusals = store.add_many(examples, strict=False)
        with self._lock, self._conn:
            self._conn.executemany(
                "UPDATE decisions SET promoted = 1 WHERE id = ?", [(r.id,) for r in chosen]
            )
        return added, refusals
