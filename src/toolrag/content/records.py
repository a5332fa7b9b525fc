"""The record a loader produces from a file, and the loader interface."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from pathlib import Path

from pydantic import BaseModel, Field


class Record(BaseModel):
    """One indexable unit (a file, a page, a CSV row or a JSONL record) before chunking."""

    doc_id: str = Field(description="Stable id of the unit: its file, file#part or row id.")
    text: str
    title: str = ""
    extra: dict[str, str] = Field(
        default_factory=dict, description="Field values by name, each JSON-encoded."
    )


class Loader(ABC):
    """Finds the source files of one collection and reads each into records."""

    #: Whether records are split into chunks before embedding (long prose) or kept whole.
    chunked: bool = False
    #: Bump when the loader's output for the same file changes, so indexes re-read the files.
    version: str = "1"

    def __init__(self, root: Path) -> None:
        self.root = root

    @abstractmethod
    def files(self) -> list[Path]:
        """Source files under ``root``, sorted."""

    @abstractmethod
    def load(self, path: Path) -> list[Record]:
        """Read one file; raise :class:`~toolrag.errors.IngestError` when it is unusable."""

    def source_id(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
