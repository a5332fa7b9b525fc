"""LanceDB integration: incremental re-index, stable ids, no duplicates, filters, hybrid search."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from toolrag import Settings, Toolbox
from toolrag.content.collection_index import CollectionIndex, CollectionLoader, FieldFilters
from toolrag.content.collection_spec import CollectionSpec
from toolrag.content.index import ContentIndex
from toolrag.errors import IndexMissingError

DOCS = CollectionSpec.model_validate(
    {
        "name": "documents",
        "description": "Project documents.",
        "paths": ["documents/**/*.md"],
        "fields": [
            {"name": "project", "type": "keyword", "source": "front_matter:project"},
            {"name": "document_type", "type": "enum", "source": "front_matter:document_type"},
            {"name": "date", "type": "date", "source": "front_matter:date"},
        ],
        "filters": ["project", "document_type", "date"],
    }
)
SCHEDULES = CollectionSpec.model_validate(
    {
        "name": "schedules",
        "description": "Milestone schedules.",
        "paths": ["schedules/*.csv"],
        "reader": "rows",
        "id_column": "milestone_id",
        "title_column": "milestone",
        "chunking": {"size": 0},
        "fields": [
            {"name": "project", "type": "keyword", "source": "column:project"},
            {"name": "planned_finish", "type": "date", "source": "column:planned_finish"},
            {"name": "responsible", "type": "keyword", "source": "column:responsible"},
        ],
        "filters": ["project"],
    }
)

DOC = """---
id: {id}
title: {title}
project: {project}
document_type: {type}
date: {date}
---
{body}
"""


def write_doc(
    root: Path,
    project: str,
    doc_id: str,
    body: str,
    doc_type: str = "contract",
    date: str = "2025-01-10",
    title: str | None = None,
) -> Path:
    path = root / "documents" / project / f"{doc_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        DOC.format(
            id=doc_id, title=title or doc_id, project=project, type=doc_type, date=date, body=body
        )
    )
    return path


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    write_doc(
        root,
        "P-1",
        "P-1-CTR",
        "The retainage is ten percent. Liquidated damages are $1,250 per calendar day.",
    )
    write_doc(
        root,
        "P-1",
        "P-1-RFI",
        "RFI about the anchor bolts at the canopy columns.",
        doc_type="rfi",
        date="2025-06-01",
    )
    write_doc(
        root,
        "P-2",
        "P-2-CTR",
        "Warranty period of two years for the roofing membrane.",
        date="2025-03-05",
    )
    sched = root / "schedules"
    sched.mkdir(parents=True)
    (sched / "P-1.csv").write_text(
        "project,milestone_id,milestone,planned_start,planned_finish,actual_finish,status,"
        "responsible\nP-1,M-1,Foundations complete,2025-01-01,2025-02-01,2025-02-03,complete,"
        '"Smith, J."\nP-1,M-2,Substantial completion,2025-02-02,2025-09-30,,not_started,Lee\n'
    )
    return root


@pytest.fixture
def embed():  # the real embedding model, loaded once per process
    from toolrag.models.embeddings import make_embedding

    return make_embedding(Settings())


def _index(
    tmp_path: Path, embed: object, spec: CollectionSpec = DOCS, **changes: object
) -> CollectionIndex:
    changed = CollectionSpec.model_validate({**spec.model_dump(), **changes})
    return CollectionIndex(tmp_path / "ix", changed, embed)  # type: ignore[arg-type]


def _sync(index: CollectionIndex, corpus: Path) -> object:
    return index.sync(index.loader(corpus))


def _doc(project: str, doc_id: str) -> str:
    return f"documents/{project}/{doc_id}.md"


def _ids(index: ContentIndex) -> list[str]:
    return sorted(index.table().to_arrow().column("id").to_pylist())


def test_incremental_reindex(corpus: Path, tmp_path: Path, embed: object) -> None:
    index = _index(tmp_path, embed)
    loader = index.loader(corpus)
    first = index.sync(loader)
    assert len(first.added) == 3 and not first.updated and first.rows_total >= 3
    ids = _ids(index)

    again = index.sync(loader)  # nothing changed: nothing written, no duplicates
    assert again.unchanged == 3 and not again.changed and again.chunks_written == 0
    assert _ids(index) == ids and len(ids) == len(set(ids))

    write_doc(
        corpus,
        "P-2",
        "P-2-CTR",
        "Warranty period of five years for the roofing.",
        date="2025-03-05",
    )
    (corpus / "documents" / "P-1" / "P-1-RFI.md").unlink()
    third = index.sync(loader)
    assert third.updated == [_doc("P-2", "P-2-CTR")]
    assert third.deleted == [_doc("P-1", "P-1-RFI")]
    assert third.unchanged == 1
    texts = " ".join(index.table().to_arrow().column("text").to_pylist())
    assert "five years" in texts and "two years" not in texts and "anchor bolts" not in texts
    assert not any(i.startswith(_doc("P-1", "P-1-RFI")) for i in _ids(index))


def test_reopen_without_reembedding(corpus: Path, tmp_path: Path, embed: object) -> None:
    _sync(_index(tmp_path, embed), corpus)
    report = _sync(_index(tmp_path, embed), corpus)
    assert report.chunks_written == 0 and report.unchanged == 3  # type: ignore[attr-defined]


def test_changed_chunking_reindexes(corpus: Path, tmp_path: Path, embed: object) -> None:
    _sync(_index(tmp_path, embed), corpus)
    other = _index(tmp_path, embed, chunking={"size": 100, "overlap": 10})
    report = _sync(other, corpus)
    assert len(report.updated) == 3  # type: ignore[attr-defined]


def test_chunks_embedded_whole_when_the_spec_says(
    corpus: Path, tmp_path: Path, embed: object
) -> None:
    """``chunking.vectors: whole``: a chunk longer than the model reads is embedded as windows
    and their mean, and switching re-embeds every file (the mode is in the fingerprint)."""
    from toolrag.models import text_windows, whole_text_embeddings

    words = "The concrete pour is scheduled for the north podium slab. " * 40
    write_doc(corpus, "P-3", "P-3-LONG", words + "Curing lasts seven days.")
    cut = _index(tmp_path, embed)
    _sync(cut, corpus)
    whole = _index(tmp_path, embed, chunking={"size": 400, "overlap": 40, "vectors": "whole"})
    report = _sync(whole, corpus)
    assert len(report.updated) == 4  # type: ignore[attr-defined]
    rows = whole.table().to_arrow().select(["id", "text", "vector"]).to_pylist()
    long = [r for r in rows if r["id"].startswith(_doc("P-3", "P-3-LONG"))]
    assert len(text_windows(embed, long[0]["text"])) > 1  # type: ignore[arg-type]
    expected = whole_text_embeddings(embed, [r["text"] for r in long])  # type: ignore[arg-type]
    for row, vector in zip(long, expected, strict=True):
        assert max(abs(a - b) for a, b in zip(row["vector"], vector, strict=True)) < 1e-4
    # the default cuts: its first chunk's vector is the model's own, not the windows' mean
    first = embed.get_text_embedding(long[0]["text"])  # type: ignore[attr-defined]
    assert max(abs(a - b) for a, b in zip(long[0]["vector"], first, strict=True)) > 1e-3


def test_filters_keyword_enum_and_dates(corpus: Path, tmp_path: Path, embed: object) -> None:
    index = _index(tmp_path, embed)
    _sync(index, corpus)
    hits = index.search("contract terms", k=5, filters=FieldFilters(equals={"project": "P-2"}))
    assert {h.extra["project"] for h in hits} == {"P-2"}
    rfi = FieldFilters(equals={"document_type": "rfi"})
    assert [h.doc_id for h in index.search("anchor bolts", k=5, filters=rfi)] == [
        _doc("P-1", "P-1-RFI")
    ]
    window = FieldFilters(ranges={"date": ("2025-03-01", "2025-12-31")})
    assert {h.doc_id for h in index.search("document", k=5, filters=window)} == {
        _doc("P-1", "P-1-RFI"),
        _doc("P-2", "P-2-CTR"),
    }
    # A filter that matches nothing is an empty result, not an exception.
    assert index.search("x", filters=FieldFilters(equals={"project": "NOPE"})) == []
    # Quotes in values cannot break out of the SQL literal.
    sneaky = FieldFilters(equals={"project": "P-1' OR '1'='1"})
    assert index.search("x", filters=sneaky) == []


def test_hybrid_finds_exact_terms(corpus: Path, tmp_path: Path, embed: object) -> None:
    index = _index(tmp_path, embed)
    _sync(index, corpus)
    top = index.search("liquidated damages per day", k=1)[0]
    assert top.doc_id == _doc("P-1", "P-1-CTR") and top.similarity is not None and top.score > 0
    assert index.search("retainage", k=1, mode="bm25")[0].doc_id == _doc("P-1", "P-1-CTR")


def test_rows_of_a_csv(corpus: Path, tmp_path: Path, embed: object) -> None:
    index = _index(tmp_path, embed, SCHEDULES)
    _sync(index, corpus)
    rows = index.rows(FieldFilters(equals={"project": "P-1"}))
    assert [r.doc_id for r in rows] == ["M-1", "M-2"]
    assert rows[0].extra["responsible"] == "Smith, J."
    assert rows[1].extra["planned_finish"] == "2025-09-30"
    assert rows[1].title == "Substantial completion"


def test_missing_index_is_a_clear_error(tmp_path: Path, embed: object) -> None:
    index = CollectionIndex(tmp_path / "empty", DOCS, embed)  # type: ignore[arg-type]
    with pytest.raises(IndexMissingError, match="toolrag index"):
        index.search("anything")


def test_corrupt_file_is_reported_and_others_indexed(
    corpus: Path, tmp_path: Path, embed: object
) -> None:
    bad = corpus / "documents" / "P-1" / "broken.md"
    bad.write_bytes(b"---\nid: [unclosed\n---\nbody\xff\xfe")
    index = _index(tmp_path, embed)
    report = _sync(index, corpus)
    assert len(report.added) == 3 and len(report.errors) == 1  # type: ignore[attr-defined]
    assert "broken.md" in report.errors[0]  # type: ignore[attr-defined]


def test_toolbox_index_copies_sample_subset(tmp_path: Path) -> None:
    """The toolbox indexes the schedules of a data folder it has never seen."""
    data = tmp_path / "data"
    shutil.copytree(Path(__file__).parents[2] / "data" / "schedules", data / "schedules")
    tb = Toolbox(Settings(data_dir=data, index_dir=tmp_path / "ix"))
    reports = tb.index(collections=["schedules"])
    assert [r.collection for r in reports] == ["schedules"]
    assert reports[0].rows_total > 12 * 8 and not reports[0].errors
    with pytest.raises(Exception, match="No collection named nowhere"):
        tb.index(collections=["nowhere"])


def test_outline_lists_titles_and_headings_once(
    corpus: Path, tmp_path: Path, embed: object
) -> None:
    write_doc(
        corpus,
        "P-3",
        "P-3-SPEC",
        "# Section 03 37 13 Shotcrete\n\n## 1. General\n\nText.\n\n## 2.1 Shotcrete Strength\n\n"
        "4,000 psi.\n\n## 2.\n\n## 1. General\n",
        doc_type="specification",
        title="Shotcrete Specification - Pool",
    )
    index = _index(tmp_path, embed)
    assert index.outline() == []  # nothing indexed yet
    _sync(index, corpus)
    outline = index.outline()
    assert outline[:3] == ["P-1-CTR", "P-1-RFI", "P-2-CTR"]  # titles, by document
    assert outline[3:] == [
        "Shotcrete Specification - Pool",
        "Section 03 37 13 Shotcrete",
        "General",  # numbering dropped, repeats and bare numbers left out
        "Shotcrete Strength",
    ]
    assert index.outline(limit=2) == outline[:2]
    write_doc(corpus, "P-4", "P-4-CTR", "# Payment and Retainage\n\nTen percent.")
    _sync(index, corpus)  # a new version of the table: read again
    assert index.outline()[-2:] == ["P-4-CTR", "Payment and Retainage"]


def test_a_content_question_finds_the_tool_through_what_it_holds(
    tmp_path: Path, embed: object
) -> None:
    """``ToolCard.holds`` goes into the card's document: keyword search matches a question
    about the contents that the description never mentions."""
    from toolrag.cards.card import ToolCard
    from toolrag.retrieval.index import ToolIndex

    search = ToolCard(
        name="search_documents",
        description="Search the project documents: contracts, specifications, RFIs.",
    )
    others = [
        ToolCard(name="get_weather", description="Current weather for a city."),
        ToolCard(name="run_sql", description="Run a read-only SQL query on the database."),
    ]
    question = "What retainage rate applies after substantial completion?"
    plain = ToolIndex(tmp_path / "a", embed)  # type: ignore[arg-type]
    plain.sync([search, *others])
    assert "search_documents" not in [h.name for h in plain.retrieve(question, 3, "bm25")]
    held = search.model_copy(update={"holds": ["Prime Contract", "Payment and Retainage"]})
    assert held.document().endswith("Holds: Prime Contract; Payment and Retainage")
    index = ToolIndex(tmp_path / "b", embed)  # type: ignore[arg-type]
    index.sync([held, *others])
    assert [h.name for h in index.retrieve(question, 3, "bm25")] == ["search_documents"]
    assert index.retrieve(question, 1)[0].name == "search_documents"


def test_a_csv_saved_by_a_spreadsheet_with_a_bom_loads(tmp_path: Path) -> None:
    # Spreadsheet programs write UTF-8 CSV with a byte-order mark before the first header.
    (tmp_path / "schedules").mkdir()
    path = tmp_path / "schedules" / "X-1.csv"
    path.write_text(
        "\ufeffproject,milestone_id,milestone,planned_start,planned_finish,status\n"
        "X-1,X-1-M01,Pour slab,2026-01-05,2026-01-09,complete\n",
        encoding="utf-8",
    )
    (record,) = CollectionLoader(tmp_path, SCHEDULES).load(path)
    assert record.doc_id == "X-1-M01" and record.extra["project"] == '"X-1"'


def test_two_writers_of_one_content_table_take_turns(corpus: Path, tmp_path: Path) -> None:
    """Two `toolrag index` runs at once on a folder without the table (here threads, each with
    its own index object and lock handle): without the write lock the second one to create the
    table failed with "Table 'documents' already exists". With it, one indexes every file, the
    other finds them unchanged, and each chunk is in the table once."""
    import threading
    import time

    from llama_index.core.embeddings import MockEmbedding

    class SlowEmbedding(MockEmbedding):
        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            time.sleep(0.3)  # long enough for the other writer to arrive mid-sync
            return super()._get_text_embeddings(texts)

    reports = []
    errors: list[BaseException] = []

    def sync() -> None:
        index = CollectionIndex(tmp_path / "ix", DOCS, SlowEmbedding(embed_dim=8), fusion="rrf")
        try:
            reports.append(index.sync(index.loader(corpus)))
        except BaseException as exc:  # the failure is what the test checks
            errors.append(exc)

    writers = [threading.Thread(target=sync) for _ in range(2)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    assert not errors
    assert sorted(len(r.added) for r in reports) == [0, 3]
    assert sorted(r.unchanged for r in reports) == [0, 3]
    index = CollectionIndex(tmp_path / "ix", DOCS, MockEmbedding(embed_dim=8), fusion="rrf")
    ids = _ids(index)
    assert len(ids) == len(set(ids)) == reports[0].rows_total
