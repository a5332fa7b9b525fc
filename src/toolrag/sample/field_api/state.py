"""The field API's writes, kept in a SQLite file so that nothing is lost on a restart.

RFI drafts, RFI status changes, cancelled inspections, change-order submissions and inspection
notes, plus the responses stored per ``Idempotency-Key``: a repeated key returns the first
response and writes nothing.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rfi_drafts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL, subject TEXT NOT NULL,
    question TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS rfi_status (
    number TEXT PRIMARY KEY, status TEXT NOT NULL, note TEXT, changed REAL NOT NULL);
CREATE TABLE IF NOT EXISTS cancelled_inspections (
    inspection_id TEXT PRIMARY KEY, reason TEXT NOT NULL, cancelled REAL NOT NULL);
CREATE TABLE IF NOT EXISTS change_order_submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, number TEXT NOT NULL, recipient TEXT NOT NULL,
    note TEXT, submitted REAL NOT NULL);
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, inspection_id TEXT NOT NULL, note TEXT NOT NULL,
    author TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, response TEXT NOT NULL);
"""


class FieldState:
    """The API's mutable state; ``path=None`` keeps it in memory (one process)."""

    def __init__(self, path: Path | None = None) -> None:
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            str(path) if path else ":memory:", check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.executescript(_SCHEMA)
        self.lock = threading.RLock()

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        with self.lock:
            return self._conn.execute(sql, params)

    def once(self, key: str | None, write: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Run ``write`` once per ``key`` (None: always) and return its response."""
        with self.lock:
            if key:
                row = self._conn.execute(
                    "SELECT response FROM replies WHERE key = ?", (key,)
                ).fetchone()
                if row:
                    stored: dict[str, Any] = json.loads(row[0])
                    return stored
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                response = write()
                if key:
                    self._conn.execute(
                        "INSERT INTO replies (key, response) VALUES (?, ?)",
                        (key, json.dumps(response, default=str)),
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            return response

    def now(self) -> float:
        return time.time()

    def close(self) -> None:
        self._conn.close()
