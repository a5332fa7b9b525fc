"""The record every loader produces, and the loader interface."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from pathlib import Path

from pydantic import BaseModel, Field

from toolrag.types import ContentType


class Record(BaseModel):
    """One indexable unit (a document, a blueprint sheet, a schedule milestone) before chunking.

    The metadata fields are the same for every content type so that the LanceDB tables share
    one fixed schema (a new metadata key would not fit an existing table).
    """

    doc_id: str = Field(description="Stable id of the unit, e.g. a document id or sheet id.")
    text: str
    title: str = ""
    project: str = ""
    project_name: str = ""
    doc_type: str = ""
    date: str = Field("", description="ISO date (YYYY-MM-DD) used for date-range filters.")
    sheet: str = ""
    discipline: str = ""
    extra: dict[str, str] = Field(default_factory=dict)


class Loader(ABC):
    """Finds the source files of one content type and reads each into records."""

    content_type: ContentType
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
