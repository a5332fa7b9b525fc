"""Content: the declared collections, the readers that turn their files into records, the
LanceDB indexes, and the tools that search them."""

from toolrag.content.collection_index import CollectionIndex, FieldFilters
from toolrag.content.collection_spec import (
    DEFAULT_VECTORS,
    CollectionSpec,
    FieldSpec,
    VectorMode,
    load_collections,
)
from toolrag.content.collection_tools import CollectionSearch
from toolrag.content.fusion import (
    DEFAULT_FUSION,
    MARGIN_SE,
    PSEUDO_QUERY_SOURCE,
    FusionWeights,
    PseudoQuerySource,
    calibrate,
)
from toolrag.content.index import ContentIndex, Hit, SyncReport
from toolrag.content.records import Loader, Record
from toolrag.content.retrievers import ContentRetriever

__all__ = [
    "DEFAULT_FUSION",
    "DEFAULT_VECTORS",
    "MARGIN_SE",
    "PSEUDO_QUERY_SOURCE",
    "CollectionIndex",
    "CollectionSearch",
    "CollectionSpec",
    "ContentIndex",
    "ContentRetriever",
    "FieldFilters",
    "FieldSpec",
    "FusionWeights",
    "Hit",
    "Loader",
    "PseudoQuerySource",
    "Record",
    "SyncReport",
    "VectorMode",
    "calibrate",
    "load_collections",
]
