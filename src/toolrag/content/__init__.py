"""Content: loaders that read files into records, the LanceDB content indexes, and the tools
that search them."""

from toolrag.content.collection_index import CollectionIndex, FieldFilters
from toolrag.content.collection_spec import CollectionSpec, FieldSpec, load_collections
from toolrag.content.collection_tools import CollectionSearch
from toolrag.content.index import ContentIndex, Hit, SearchFilters, SyncReport
from toolrag.content.loaders import LOADERS, Loader, Record
from toolrag.content.projects import Project, ProjectCatalog
from toolrag.content.retrievers import ContentRetriever
from toolrag.content.tools import ContentToolSpec

__all__ = [
    "LOADERS",
    "CollectionIndex",
    "CollectionSearch",
    "CollectionSpec",
    "ContentIndex",
    "ContentRetriever",
    "ContentToolSpec",
    "FieldFilters",
    "FieldSpec",
    "Hit",
    "Loader",
    "Project",
    "ProjectCatalog",
    "Record",
    "SearchFilters",
    "SyncReport",
    "load_collections",
]
