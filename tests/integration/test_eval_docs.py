"""``toolrag eval docs``: document retrieval through the collection code path, on a small fixture
whose metrics are computed by hand, beside plain LlamaIndex."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from toolrag import Settings
from toolrag.cli.main import app
from toolrag.content.collection_spec import Chunking
from toolrag.evaluation.docs_eval import document_collection, read_documents

from ..conftest import REPO

FIXTURES = REPO / "tests" / "fixtures"
KEYS = {
    "recall@1",
    "recall@5",
    "recall@10",
    "mrr",
    "ndcg@10",
    "p50_ms",
    "p95_ms",
    "n_docs",
    "n_queries",
    "strategy",
}


def test_eval_docs_cli_json_with_hand_computed_metrics(tmp_path: Path) -> None:
    misses = tmp_path / "misses.jsonl"
    args = [
        "eval",
        "docs",
        "--docs",
        str(FIXTURES / "docs_small.jsonl"),
        "--queries",
        str(FIXTURES / "doc_queries_small.jsonl"),
        "--json",
        "--misses",
        str(misses),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = {r["strategy"]: r for r in json.loads(result.stdout.strip().splitlines()[-1])}
    assert set(rows) == {
        "vectorstoreindex-default", "dense", "bm25", "hybrid", "dense-whole", "hybrid-whole"
    }  # fmt: skip
    for r in rows.values():
        assert set(r) == KEYS and r["n_docs"] == 6 and r["n_queries"] == 4  # "no doc" left out
    hybrid = rows["hybrid"]
    # q1, q2, q4 find their one document first; q3 expects two documents, so Recall@1 is 1/2
    # there even when both lead: (1 + 1 + 0.5 + 1) / 4.
    assert hybrid["recall@1"] == 0.875
    assert hybrid["recall@5"] == 1.0 and hybrid["mrr"] == 1.0 and hybrid["ndcg@10"] == 1.0
    assert misses.exists() and misses.read_text() == ""


def test_the_documents_go_through_a_rows_collection_chunked_as_collections_are(
    tmp_path: Path,
) -> None:
    from toolrag import make_embedding
    from toolrag.content import CollectionIndex

    docs = FIXTURES / "docs_small.jsonl"
    assert read_documents(docs)[1][1].startswith("Crane lift plan\n\n")  # title, then text
    spec = document_collection(docs)
    index = CollectionIndex(tmp_path, spec, make_embedding(Settings()))
    index.sync(index.loader(docs.parent))
    assert spec.chunking == Chunking()  # what a collection gets, the sample's documents too
    crane = [h for h in index.rows() if h.doc_id == "d2"]
    assert crane[0].title == "Crane lift plan" and crane[0].text.startswith("Crane lift plan")
    assert {h.doc_id for h in index.rows()} == {i for i, _ in read_documents(docs)}


def test_eval_docs_cli_refuses_a_bad_document_file(tmp_path: Path) -> None:
    bad = tmp_path / "docs.jsonl"
    bad.write_text('{"id": "a", "text": "fine"}\n{"title": "no id or text"}\n')
    args = [
        "eval",
        "docs",
        "--docs",
        str(bad),
        "--queries",
        str(FIXTURES / "doc_queries_small.jsonl"),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "docs.jsonl:2" in result.output and "id and text" in result.output
    missing = CliRunner().invoke(app, [*args[:3], str(tmp_path / "none.jsonl"), *args[4:]])
    assert missing.exit_code == 2 and "does not exist" in missing.output
