"""The answers file of a batch, JSONL or Parquet, shared by the local and the Ray engine.

JSONL (the default) is appended and flushed record by record. Parquet cannot be appended, so
records go to a spool beside it (``<answers>.parquet.jsonl``), flushed the same way, and the
Parquet file is rewritten from the earlier records and the spool when the run ends: a crash
loses no more than with JSONL, and the next run reads the spool too.

Either way an id is written once per run (a retried Ray task that answers a question again is
not written twice) and the file's reader keeps the latest record per id.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolrag.batch.records import BatchRecord


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def spool_path(path: Path) -> Path:
    """Where a Parquet answers file's records wait until the run ends."""
    return path.with_name(path.name + ".jsonl")


def _read_jsonl(path: Path, into: dict[str, BatchRecord]) -> None:
    from toolrag.batch.records import BatchRecord

    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        try:
            record = BatchRecord.model_validate_json(line)
        except ValueError:
            continue
        into[record.id] = record


def read_records(path: Path) -> dict[str, BatchRecord]:
    """The latest record per id in an answers file (unreadable lines are ignored); for a
    Parquet file, its rows and then its spool's."""
    records: dict[str, BatchRecord] = {}
    if not is_parquet(path):
        _read_jsonl(path, records)
        return records
    if path.is_file():
        import pyarrow.parquet as pq

        from toolrag.batch.records import BatchRecord

        for row in pq.read_table(path).to_pylist():
            record = BatchRecord.model_validate(row)
            records[record.id] = record
    _read_jsonl(spool_path(path), records)
    return records


class RecordSink:
    """Writes records as they come, each id at most once, flushed one by one; thread-safe.
    ``progress`` is called for each record written (not for a repeat)."""

    def __init__(
        self,
        path: Path,
        previous: dict[str, BatchRecord],
        progress: Callable[[BatchRecord], None] | None = None,
    ) -> None:
        self.path = path
        self.previous = previous
        self.fresh: dict[str, BatchRecord] = {}
        self.progress = progress
        self._lock = threading.Lock()
        self._target = spool_path(path) if is_parquet(path) else path
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, record: BatchRecord) -> bool:
        """Append ``record``; False (and nothing written) when its id was written already."""
        with self._lock:
            if record.id in self.fresh:
                return False
            with self._target.open("a", encoding="utf-8") as fh:
                fh.write(record.model_dump_json() + "\n")
                fh.flush()
            self.fresh[record.id] = record
        if self.progress:
            self.progress(record)
        return True

    def close(self) -> None:
        """For Parquet: rewrite the file with the latest record per id, then drop the spool."""
        if not is_parquet(self.path) or not self._target.is_file():
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        latest = {**self.previous, **read_records(self.path), **self.fresh}
        tmp = self.path.with_name(self.path.name + ".tmp")
        pq.write_table(pa.Table.from_pylist([r.model_dump() for r in latest.values()]), tmp)
        tmp.replace(self.path)
        self._target.unlink()

    def __enter__(self) -> RecordSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
