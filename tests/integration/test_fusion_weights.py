"""The self-calibrated fusion: a content index picks its RRF weights from pseudo-queries drawn
from its own chunks, favouring the ranking that finds their documents."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from llama_index.core.base.embeddings.base import BaseEmbedding

from toolrag.content import CollectionIndex
from toolrag.content.fusion import clearly_better
from toolrag.evaluation.docs_eval import document_collection

DIM = 16
# per document: the words of its first sentence and, disjoint from them, of the rest
PAIRS = [
    ("granite quarry blasting schedule", "stone pit explosive timetable"),
    ("copper wiring inspection report", "metal cable survey paper"),
    ("asphalt paving crew roster", "tarmac surfacing team list"),
    ("timber framing delivery notice", "wood carcass shipment memo"),
    ("glass facade cleaning contract", "window cladding washing deal"),
    ("steel beam welding permit", "girder joint fusing licence"),
    ("concrete slab curing log", "cement floor hardening diary"),
    ("roof membrane leak claim", "covering sheet drip complaint"),
    ("boiler pressure test result", "heater strain trial outcome"),
    ("drainage trench survey map", "gutter ditch study chart"),
]


class TopicEmbedding(BaseEmbedding):
    """One axis per document topic, found from either its first-sentence or its other words:
    dense retrieval sees through the paraphrase that BM25 cannot."""

    def _vector(self, text: str) -> list[float]:
        words = set(text.lower().split())
        out = [0.0] * DIM
        for n, (a, b) in enumerate(PAIRS):
            if words & set(a.split()) or words & set(b.split()):
                out[n] = 1.0
        out[-1] = 0.01
        return out

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


class NoiseEmbedding(TopicEmbedding):
    """A vector from the text's hash: dense retrieval is blind."""

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [b / 255 - 0.5 for b in digest[:DIM]]


def _index(tmp_path: Path, docs: list[dict[str, str]], embed: BaseEmbedding) -> CollectionIndex:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    index = CollectionIndex(tmp_path / "index", document_collection(path), embed)
    index.sync(index.loader(path.parent))
    return index


def test_codes_only_bm25_can_match_favour_bm25(tmp_path: Path) -> None:
    docs = [
        {
            "id": f"d{n}",
            "title": "",
            "text": f"Order code QX{n}7{n}ZK{n} left the yard on the usual truck. "
            f"The QX{n}7{n}ZK{n} order holds parts for the site office and its crew.",
        }
        for n in range(40)
    ]
    weights = _index(tmp_path, docs, NoiseEmbedding()).fusion_weights()
    assert weights.method == "pseudo-queries" and weights.n_queries == 40
    assert weights.bm25_mrr is not None and weights.dense_mrr is not None
    assert weights.bm25_mrr > weights.dense_mrr
    assert weights.bm25 > weights.dense


def test_paraphrased_text_favours_dense(tmp_path: Path) -> None:
    docs = [
        {"id": f"d{n}", "title": "", "text": f"The {a} was attached. The {b} is attached here."}
        for n, (a, b) in enumerate(PAIRS)
    ]
    index = _index(tmp_path, docs, TopicEmbedding())
    weights = index.fusion_weights()
    assert weights.n_queries == len(PAIRS)
    assert weights.dense_mrr is not None and weights.bm25_mrr is not None
    assert weights.dense_mrr > weights.bm25_mrr and weights.dense > weights.bm25
    # kept beside the table, and not recomputed while the table is unchanged
    assert (tmp_path / "index" / f"{index.table_name}.fusion.json").exists()
    assert index.fusion_weights() is weights
    hits = index.search("granite quarry blasting schedule", k=1, fusion="auto")
    assert hits[0].doc_id == "d0"


def test_too_few_documents_keep_plain_rrf(tmp_path: Path) -> None:
    docs = [{"id": f"d{n}", "title": "", "text": f"Short note number {n}."} for n in range(3)]
    weights = _index(tmp_path, docs, NoiseEmbedding()).fusion_weights()
    assert (weights.dense, weights.bm25) == (1.0, 1.0)
    assert weights.method.startswith("rrf")


def test_a_weighting_moves_away_from_rrf_only_on_clear_evidence() -> None:
    same = [0.5] * 40
    assert not clearly_better(same, same)
    # one lucky pseudo-query among forty: the mean is higher, the evidence is not
    assert not clearly_better([1.0] + [0.5] * 39, same)
    # most pseudo-queries gain: that is evidence
    assert clearly_better([1.0] * 30 + [0.5] * 10, same)
    assert not clearly_better(same, [1.0] * 30 + [0.5] * 10)
    assert not clearly_better([1.0], [0.0])  # one query says nothing


def test_the_default_search_is_plain_rrf_and_auto_stays_selectable(tmp_path: Path) -> None:
    docs = [
        {"id": f"d{n}", "title": "", "text": f"The {a} was attached. The {b} is attached here."}
        for n, (a, b) in enumerate(PAIRS)
    ]
    index = _index(tmp_path, docs, TopicEmbedding())
    assert index.fusion == "rrf"  # decision 0056
    assert not (tmp_path / "index" / f"{index.table_name}.fusion.json").exists()
    assert index.search("granite quarry blasting schedule", k=1, fusion="auto")[0].doc_id == "d0"
