"""Loaders per content type: each turns source files into
:class:`~toolrag.content.loaders.base.Record`."""

from toolrag.content.loaders.base import Loader, Record
from toolrag.content.loaders.blueprints import BlueprintExtractor, BlueprintLoader
from toolrag.content.loaders.documents import DocumentLoader
from toolrag.content.loaders.schedules import ScheduleLoader
from toolrag.types import ContentType

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
