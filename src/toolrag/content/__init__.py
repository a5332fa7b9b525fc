"""Content: loaders that read files into records, the LanceDB content indexes, and the tools
that search them."""

from toolrag.content.index import ContentIndex, Hit, SearchFilters, SyncReport
from toolrag.content.loaders import LOADERS, Loader, Record
from toolrag.content.projects import Project, ProjectCatalog
from toolrag.content.retrievers import ContentRetriever
from toolrag.content.tools import ContentToolSpec

__all__ = [
    "LOADERS",
    "ContentIndex",
    "ContentRetriever",
    "ContentToolSpec",
    "Hit",
    "Loader",
    "Project",
    "ProjectCatalog",
    "Record",
    "SearchFilters",
    "SyncReport",
]
