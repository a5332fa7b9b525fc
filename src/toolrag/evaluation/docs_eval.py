"""Document-retrieval evaluation on any JSONL document set, through the content-index code path
(chunking, LanceDB, dense + BM25 fused by reciprocal rank), beside plain LlamaIndex.

A query's ranking is the order in which documents first appear among the retrieved chunks.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding

from toolrag.content.index import ContentIndex
from toolrag.content.loaders.jsonl import JsonlDocumentLoader
from toolrag.errors import InputError
from toolrag.evaluation.retrieval import RetrievalQuery, RetrievalReport, evaluate

DOC_STRATEGIES = ("vectorstoreindex-default", "dense", "bm25", "hybrid")
CHUNKS_PER_DOC = 4  # chunks fetched per wanted document, so k distinct documents come back


def _distinct(ids: Sequence[str], k: int) -> list[str]:
    out: list[str] = []
    for i in ids:
        if i not in out:
            out.append(i)
    return out[:k]


def vectorstoreindex_default(
    records: Sequence[tuple[str, str]], embed: BaseEmbedding
) -> Callable[[str, int], list[str]]:
    """Plain LlamaIndex: ``VectorStoreIndex.from_documents`` with default chunking and the same
    embedding model, dense top-k."""
    docs = [Document(text=text, metadata={"doc_id": doc_id}) for doc_id, text in records]
    index = VectorStoreIndex.from_documents(docs, embed_model=embed)

    def search(query: str, k: int) -> list[str]:
        nodes = index.as_retriever(similarity_top_k=k * CHUNKS_PER_DOC).retrieve(query)
        return _distinct([n.node.metadata["doc_id"] for n in nodes], k)

    return search


def run_docs_eval(
    docs: Path,
    queries: Sequence[RetrievalQuery],
    strategies: Sequence[str],
    embed: BaseEmbedding,
    ks: Sequence[int] = (1, 5, 10),
    on_loaded: Callable[[list[str]], None] | None = None,
) -> list[RetrievalReport]:
    """Index ``docs`` in a temporary content index and evaluate each strategy on ``queries``.
    ``on_loaded`` receives the document ids once they are read (to check the queries')."""
    loader = JsonlDocumentLoader(docs)
    if not loader.files():
        raise InputError(
            f"Document file {docs} does not exist.",
            hint="Pass a JSONL file of {id, title?, text, metadata?} objects.",
        )
    records = loader.load(docs)
    if on_loaded is not None:
        on_loaded([r.doc_id for r in records])
    reports = []
    with tempfile.TemporaryDirectory(prefix="toolrag-docs-") as tmp:
        index = ContentIndex(Path(tmp), "documents", embed)
        if any(s != "vectorstoreindex-default" for s in strategies):
            report = index.sync(loader)
            if report.errors:
                raise InputError(report.errors[0])
        for strategy in strategies:
            if strategy == "vectorstoreindex-default":
                search = vectorstoreindex_default([(r.doc_id, r.text) for r in records], embed)
            else:

                def search(query: str, k: int, mode: str = strategy) -> list[str]:
                    hits = index.search(query, k=k * CHUNKS_PER_DOC, mode=mode)  # type: ignore[arg-type]
                    return _distinct([h.doc_id for h in hits], k)

            reports.append(evaluate(strategy, len(records), queries, search, ks))
    return reports
