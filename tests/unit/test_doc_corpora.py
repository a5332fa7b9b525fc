"""The document corpora the retrieval benchmarks build: every query expects a document that
exists, and a README's query is not copied from its document."""

from __future__ import annotations

import re

from benchmarks.datasets import doc_corpora


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def test_sample_corpus_asks_the_sample_documents() -> None:
    docs, queries = doc_corpora.build("sample")
    ids = {d["id"] for d in docs}
    assert len(docs) == len(list((doc_corpora.DATA / "documents").rglob("*.md")))
    assert len(queries) >= 40
    assert all(q["expected_docs"][0] in ids for q in queries)  # type: ignore[index]


def test_readmes_mask_the_summary_and_the_name() -> None:
    readmes = list(doc_corpora._readmes())
    assert len(readmes) >= 20  # the project's own dependencies have READMEs
    for name, summary, text in readmes:
        wanted = _words(summary)
        assert not any(
            wanted and len(_words(line) & wanted) * 2 >= len(wanted) for line in text.splitlines()
        ), name
        assert not re.search(rf"(?i)(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text), name
        assert len(text.split()) >= doc_corpora.MIN_README_WORDS


def test_readmes_corpus_has_one_query_per_unshared_summary() -> None:
    docs, queries = doc_corpora.build("readmes")
    ids = [d["id"] for d in docs]
    assert len(ids) == len(set(ids))
    expected = [q["expected_docs"][0] for q in queries]  # type: ignore[index]
    assert len(expected) == len(set(expected)) and set(expected) <= set(ids)
    assert doc_corpora.HELD == "sklearn"  # readmes was measured once, at 1d131f0
