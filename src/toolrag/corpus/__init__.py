"""Loaders per content type: each turns source files into :class:`~toolrag.corpus.base.Record`."""

from toolrag.corpus.base import ContentType, Loader, Record
from toolrag.corpus.blueprints import BlueprintExtractor, BlueprintLoader
from toolrag.corpus.documents import DocumentLoader
from toolrag.corpus.schedules import ScheduleLoader

LOADERS: dict[ContentType, type[Loader]] = {
    "documents": DocumentLoader,
    "blueprints": BlueprintLoader,
    "schedules": ScheduleLoader,
}

__all__ = [
    "LOADERS",
    "BlueprintExtractor",
    "BlueprintLoader",
    "ContentType",
    "DocumentLoader",
    "Loader",
    "Record",
    "ScheduleLoader",
]
