"""One way to open the guard's SQLite files (audit log, idempotency store) for many processes."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path


def connect_wal(path: Path, wait_s: float = 30.0) -> sqlite3.Connection:
    """Open ``path`` (its folder made) in WAL mode, in autocommit, usable from any thread.

    SQLite answers "database is locked" at once, without its busy handler, to a connection
    that changes the journal mode while another process changes it on the same new file, so
    the switch is retried until ``wait_s`` has passed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # ``timeout`` is SQLite's busy timeout: other statements wait up to ``wait_s`` for a lock
    conn = sqlite3.connect(path, timeout=wait_s, check_same_thread=False, isolation_level=None)
    deadline = time.monotonic() + wait_s
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return conn
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                conn.close()
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.2)
