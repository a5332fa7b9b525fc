"""Document-retrieval evaluation on any JSONL document set, through the collection code path
(a ``reader: rows`` collection: chunking, LanceDB, dense + BM25 fused by reciprocal rank),
beside plain LlamaIndex.

A query's ranking is the order in which documents first appear among the retrieved chunks.
"""

from __future__ import annotations

import glob
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding

from toolrag.content import CollectionIndex, CollectionSpec
from toolrag.content.collection_spec import Chunking, VectorMode
from toolrag.errors import IngestError, InputError
from toolrag.evaluation.retrieval import RetrievalQuery, RetrievalReport, evaluate

# ``dense-whole`` and ``hybrid-whole``: the same on chunks embedded whole (``chunking.vectors``)
DOC_STRATEGIES = (
    "vectorstoreindex-default",
    "dense",
    "bm25",
    "hybrid",
    "dense-whole",
    "hybrid-whole",
)
# ``hybrid`` fuses with the index's default ("auto": weights chosen from its own chunks);
# ``hybrid-rrf`` and ``hybrid-auto`` name the fusion
HYBRID_FUSION = {"hybrid": None, "hybrid-rrf": "rrf", "hybrid-auto": "auto"}
# the strategies searched on a second index whose chunk vectors are made the other way
# (``chunking.vectors``, decision 0061): "-cut" as the default does, "-whole" from windows
OTHER_VECTORS: dict[str, tuple[str, VectorMode]] = {
    "dense-cut": ("dense", "cut"),
    "hybrid-cut": ("hybrid", "cut"),
    "dense-whole": ("dense", "whole"),
    "hybrid-whole": ("hybrid", "whole"),
}
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
    on_indexed: Callable[[CollectionIndex], None] | None = None,
) -> list[RetrievalReport]:
    """Index ``docs`` in a temporary content index and evaluate each strategy on ``queries``.
    ``on_loaded`` receives the document ids once they are read (to check the queries'),
    ``on_indexed`` the synced index before any strategy runs."""
    records = read_documents(docs)
    if on_loaded is not None:
        on_loaded([doc_id for doc_id, _ in records])
    spec = document_collection(docs)
    reports = []
    with tempfile.TemporaryDirectory(prefix="toolrag-docs-") as tmp:
        index = CollectionIndex(Path(tmp), spec, embed)
        default = spec.chunking.vectors
        own = [OTHER_VECTORS.get(s, (s, default))[1] == default for s in strategies]
        if any(s != "vectorstoreindex-default" and o for s, o in zip(strategies, own, strict=True)):
            _sync(index, docs)
            if on_indexed is not None:
                on_indexed(index)
        others: dict[str, CollectionIndex] = {}
        for strategy in strategies:
            if strategy == "vectorstoreindex-default":
                search = vectorstoreindex_default(records, embed)
            else:
                mode, vectors = OTHER_VECTORS.get(strategy, (strategy, default))
                if strategy in HYBRID_FUSION:
                    mode = "hybrid"
                searched = index
                if vectors != default:
                    if vectors not in others:
                        other = CollectionIndex(Path(tmp) / vectors, spec, embed, vectors=vectors)
                        others[vectors] = _sync(other, docs)
                    searched = others[vectors]

                def search(
                    query: str,
                    k: int,
                    strategy: str = strategy,
                    searched: CollectionIndex = searched,
                    mode: str = mode,
                ) -> list[str]:
                    hits = searched.search(
                        query,
                        k=k * CHUNKS_PER_DOC,
                        mode=mode,  # type: ignore[arg-type]
                        fusion=HYBRID_FUSION.get(strategy),  # type: ignore[arg-type]
                    )
                    return _distinct([h.doc_id for h in hits], k)

            reports.append(evaluate(strategy, len(records), queries, search, ks))
    return reports


def _sync(index: CollectionIndex, docs: Path) -> CollectionIndex:
    """``index`` with ``docs`` indexed; InputError with the first file that failed."""
    report = index.sync(index.loader(docs.parent))
    if report.errors:
        raise InputError(report.errors[0])
    return index


def vectors_hint(reports: Sequence[RetrievalReport]) -> str | None:
    """What the ``hybrid`` and ``hybrid-whole`` rows say about ``chunking.vectors`` for these
    documents and questions: a line when one ranks better in both Recall@10 (or the largest k)
    and MRR, else None (too close to tell, or either row missing)."""
    rows = {r.strategy: r.as_json("n_docs") for r in reports}
    cut, whole = rows.get("hybrid"), rows.get("hybrid-whole")
    if cut is None or whole is None:
        return None
    recall = max((k for k in cut if k.startswith("recall@")), key=lambda k: int(k[7:]))
    r_cut, r_whole = float(cut[recall]), float(whole[recall])  # type: ignore[arg-type]
    m_cut, m_whole = float(cut["mrr"]), float(whole["mrr"])  # type: ignore[arg-type]
    better = r_whole > r_cut and m_whole > m_cut
    worse = r_whole < r_cut and m_whole < m_cut
    if not (better or worse):
        return None
    figures = f"{recall} {r_whole:.3f} against {r_cut:.3f}, MRR {m_whole:.3f} against {m_cut:.3f}"
    if better:
        return (
            f"chunks embedded whole ranked better on these questions ({figures}): consider "
            "chunking: {vectors: whole} for this collection (re-embeds it once)."
        )
    return f"chunks embedded whole ranked worse on these questions ({figures}): keep the default."


def document_collection(docs: Path) -> CollectionSpec:
    """The ``reader: rows`` collection of a JSONL document file: a unit per line, its id the
    doc id, its title before its text, chunked as a collection is by default (400/40, as the
    sample's documents are)."""
    return CollectionSpec(
        name="evaluated",
        description="The documents under evaluation.",
        paths=[glob.escape(str(docs.resolve()))],
        reader="rows",
        id_column="id",
        title_column="title",
        text_columns=["title", "text"],
        chunking=Chunking(),
    )


def read_documents(path: Path) -> list[tuple[str, str]]:
    """``(id, text)`` of each line of a JSONL document file (``{id, title?, text,
    metadata?}``), the title before the text; InputError naming the line that is not one."""
    if not path.is_file():
        raise InputError(
            f"Document file {path} does not exist.",
            hint="Pass a JSONL file of {id, title?, text, metadata?} objects.",
        )
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            doc_id, text = str(item["id"]), str(item["text"])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise IngestError(
                f"{path}:{n}: not a document line ({exc.__class__.__name__}: {exc}).",
                hint="Each line needs a JSON object with id and text (title, metadata optional).",
            ) from exc
        if doc_id in seen:
            raise IngestError(
                f"{path}:{n}: the id {doc_id!r} appears twice.",
                hint="Give every document its own id.",
            )
        seen.add(doc_id)
        title = str(item.get("title") or "")
        out.append((doc_id, f"{title}\n\n{text}".strip() if title else text))
    return out
