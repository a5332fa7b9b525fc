"""The idempotency store: a repeated key replays the stored result instead of writing twice.

A SQLite file, so it survives restarts and is shared by threads and processes. The first caller
of a key claims it with one atomic ``INSERT OR IGNORE``; a concurrent caller with the same key
waits for that result and replays it (``idempotent_replay: true``). Only successful results are
kept: a failed write releases its key so that a retry can run. The same key with other arguments
is a conflict, never a replay.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolrag.guard.sqlite_wal import connect_wal

_SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    args_hash TEXT NOT NULL,
    state TEXT NOT NULL,
    result TEXT,
    owner TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
)
"""


def args_hash(arguments: dict[str, Any]) -> str:
    """A stable hash of the arguments, the idempotency key itself left out."""
    payload = {k: v for k, v in arguments.items() if k != "idempotency_key"}
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass
class Claim:
    """The outcome of :meth:`IdempotencyStore.claim`: ``owned`` (run the tool, then
    ``complete`` or ``release``), ``replay`` (the stored result JSON) or ``conflict``."""

    owned: bool = False
    replay: str | None = None
    conflict: str | None = None


class IdempotencyStore:
    """Keys of write calls and their results, in a SQLite file."""

    def __init__(self, path: Path, poll_s: float = 0.02) -> None:
        self.path = Path(path)
        self._conn = connect_wal(self.path)
        self._conn.execute(_SCHEMA)
        self._lock = threading.Lock()
        self.poll_s = poll_s
        self._owner = f"{os.getpid()}"

    def claim(self, key: str, tool: str, arguments: dict[str, Any], wait_s: float) -> Claim:
        """Claim ``key`` for one run of ``tool``; wait up to ``wait_s`` for a concurrent owner.

        A pending claim older than ``wait_s`` (its owner crashed or was stopped at its
        timeout) is taken over.
        """
        digest = args_hash(arguments)
        deadline = time.monotonic() + wait_s
        while True:
            now = time.time()
            with self._lock:
                inserted = self._conn.execute(
                    "INSERT OR IGNORE INTO idempotency (key, tool, args_hash, state, owner, "
                    "created, updated) VALUES (?, ?, ?, 'pending', ?, ?, ?)",
                    (key, tool, digest, self._owner, now, now),
                ).rowcount
                if inserted:
                    return Claim(owned=True)
                row = self._conn.execute(
                    "SELECT tool, args_hash, state, result, updated FROM idempotency WHERE key = ?",
                    (key,),
                ).fetchone()
            if row is None:
                continue  # released between the two statements: claim again
            other_tool, other_hash, state, result, updated = row
            if other_tool != tool or other_hash != digest:
                return Claim(
                    conflict=f"The idempotency key {key!r} was already used by {other_tool} "
                    "with other arguments."
                )
            if state == "done":
                return Claim(replay=result)
            if time.monotonic() >= deadline:
                with self._lock:
                    taken = self._conn.execute(
                        "UPDATE idempotency SET owner = ?, updated = ? WHERE key = ? "
                        "AND state = 'pending' AND updated = ?",
                        (self._owner, time.time(), key, updated),
                    ).rowcount
                if taken:
                    return Claim(owned=True)
                deadline = time.monotonic() + wait_s
            time.sleep(self.poll_s)

    def complete(self, key: str, result_json: str) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE idempotency SET state = 'done', result = ?, updated = ? WHERE key = ?",
                (result_json, time.time(), key),
            )

    def release(self, key: str) -> None:
        """Forget a pending key whose call failed, so that a retry runs the tool again."""
        with self._lock:
            self._conn.execute(
                "DELETE FROM idempotency WHERE key = ? AND state = 'pending'", (key,)
            )

    def close(self) -> None:
        self._conn.close()
