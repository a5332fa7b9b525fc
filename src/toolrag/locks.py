"""One writer at a time per LanceDB table, across processes: a lock file beside the table.

Two ``toolrag index`` runs (or two Ray actors) starting on a folder without the table would
both create it, and the second fails with "Table ... already exists"; with the lock the second
waits, then finds the first one's rows and writes only what changed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from toolrag.errors import ToolragError

#: how long a writer waits for another process writing the same table
WRITER_LOCK_TIMEOUT_S = 3600.0


@contextlib.contextmanager
def writer_lock(
    index_dir: Path, table: str, timeout_s: float = WRITER_LOCK_TIMEOUT_S
) -> Iterator[None]:
    """Hold the write lock of ``table`` in ``index_dir`` for the block. A folder that cannot
    be written (shared storage mounted read-only) is only read, and needs none."""
    lock = FileLock(str(index_dir / f".{table}.lock"), timeout=timeout_s)
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout as exc:
        raise ToolragError(
            f"Another process has been writing the {table!r} index in {index_dir} for over "
            f"{timeout_s:.0f} s.",
            hint=f"Wait for it to finish, or remove {exc.lock_file} if no process holds it.",
        ) from exc
    except OSError:
        pass
    try:
        yield
    finally:
        if lock.is_locked:
            lock.release()
