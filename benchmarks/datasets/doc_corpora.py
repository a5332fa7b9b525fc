"""Document corpora in ``toolrag eval docs`` format: three that nobody here tuned for, and the
sample company's own documents.

Two of them are the documented functions and classes of a library, read from its source with
``ast`` (nothing is imported):

- ``stdlib``: Python's own standard library (the running interpreter's ``Lib/``), development;
- ``sqlalchemy``: the ``SQLAlchemy==2.0.36`` wheel (fetched once with ``pip download --no-deps``
  into the cache and read in place); held out until decision 0044 measured it once, development
  since;
- ``scipy`` (development) and ``sklearn`` (held out, measured once): the ``scipy==1.14.1`` and
  ``scikit-learn==1.5.2`` wheels, read the same way. Their numpydoc docstrings are long and
  sectioned (Parameters, Returns, Examples), so most documents are several chunks.

The third is another genre, long prose documents of many chunks:

- ``readmes`` (held out until measured once at 1d131f0, development since): the long
  descriptions (READMEs) of the distributions installed in the running environment
  (``scripts/setup.sh`` pins them), one document per distribution with a one-line
  ``Summary`` and at least ``MIN_README_WORDS`` words.
  The query is the summary. The document is the README with the distribution's name (and its
  import name) replaced by ``it``, and without every line that shares half of the summary's
  words, so the query is not copied from the document. No title.

The sample's own, real questions over long documents (development):

- ``sample``: every Markdown file under ``data/documents`` (a document per file, its id the
  file's stem), and the questions of ``data/questions/_draft_documents.jsonl`` that name their
  ``source_doc``, which is the expected document. The questions were written by hand about a
  fact inside the document, so this is the one set whose queries are asked as users ask.

For the docstring corpora:

One document per docstring whose first paragraph (the summary) has 5 to 40 words and whose rest
has at least 30: the document is the REST of the docstring, with the summary removed and every
mention of the function's or class's own name replaced by ``it``; its title is the module's
dotted name. A query is a summary, expecting its document: the query's words are not in the
document unless the rest of the docstring repeats them in its own sentences. Documents are drawn
in a fixed shuffled order (at most ``MAX_DOCS``), queries from the first of them (at most
``MAX_QUERIES``); the rest are distractors. Summaries that more than one drawn document shares
("Return a new instance.") are not queries.
"""

from __future__ import annotations

import ast
import json
import random
import re
import sysconfig
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from benchmarks.datasets.wheels import fetch_wheel

SQLALCHEMY = "2.0.36"
# numpydoc docstrings, long and sectioned (Parameters, Returns, Examples): many chunks a document
SCIPY = "1.14.1"
SKLEARN = "1.5.2"
WHEELS = {
    "sqlalchemy": ("SQLAlchemy", SQLALCHEMY, "sqlalchemy"),
    "scipy": ("scipy", SCIPY, "scipy"),
    "sklearn": ("scikit-learn", SKLEARN, "sklearn"),
}
SEED = 53
MAX_DOCS = 900
MAX_QUERIES = 150
MIN_REST_WORDS = 30
MIN_README_WORDS = 80
CORPORA = ("stdlib", "sqlalchemy", "sample", "readmes", "scipy", "sklearn")
DATA = Path(__file__).resolve().parents[2] / "data"
HELD = "sklearn"  # untouched until measured once (readmes was, at 1d131f0)
# stdlib folders that are tests, tools or vendored copies rather than documented library code
_SKIP = re.compile(r"(^|/)(test|tests|idlelib|lib2to3|turtledemo|site-packages|__phello__)(/|$)")


def _sources(corpus: str) -> Iterator[tuple[str, str]]:
    """``(module dotted name, source text)`` of each ``.py`` file, in name order."""
    if corpus == "stdlib":
        root = Path(sysconfig.get_paths()["stdlib"])
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if not _SKIP.search(rel):
                yield _module(rel), path.read_text(encoding="utf-8", errors="replace")
    elif corpus in WHEELS:
        package, version, top = WHEELS[corpus]
        with zipfile.ZipFile(fetch_wheel(package, version, folder=top)) as zf:
            for name in sorted(zf.namelist()):
                wanted = name.endswith(".py") and name.startswith(f"{top}/")
                if wanted and not _SKIP.search(name) and "/testing/" not in name:
                    yield _module(name), zf.read(name).decode("utf-8", "replace")
    else:
        raise ValueError(f"unknown corpus {corpus!r}; known: {', '.join(CORPORA)}")


def _module(rel: str) -> str:
    return rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _entries(module: str, source: str) -> Iterator[tuple[str, str, str]]:
    """``(qualified name, summary, rest)`` of each documented function or class."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        doc = ast.get_docstring(node)
        if not doc:
            continue
        summary, _, rest = doc.strip().partition("\n\n")
        summary = " ".join(summary.split())
        name = node.name
        rest = re.sub(rf"\b{re.escape(name)}\b", "it", rest).strip()
        if 5 <= len(summary.split()) <= 40 and len(rest.split()) >= MIN_REST_WORDS:
            yield f"{module}.{name}", summary, rest


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


def _readmes() -> Iterator[tuple[str, str, str]]:
    """``(distribution name, summary, masked README)`` of each installed distribution whose
    README is long enough, in name order."""
    from importlib.metadata import distributions

    seen: set[str] = set()
    for dist in sorted(distributions(), key=lambda d: str(d.metadata["Name"]).lower()):
        meta = dist.metadata
        name = str(meta["Name"] or "")
        summary = " ".join(str(meta["Summary"] or "").split())
        body = str(meta.get_payload() or meta["Description"] or "")
        if not name or name.lower() in seen or not 3 <= len(summary.split()) <= 40:
            continue
        seen.add(name.lower())
        names = {name, name.replace("-", "_"), name.replace("_", "-"), name.replace("-", "")}
        names |= {n.strip() for n in (dist.read_text("top_level.txt") or "").split() if n.strip()}
        pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True) if n)
        wanted = _words(summary)
        lines = [
            line
            for line in body.splitlines()
            if not wanted or len(_words(line) & wanted) * 2 < len(wanted)
        ]
        text = re.sub(rf"(?i)(?<![A-Za-z0-9])(?:{pattern})(?![A-Za-z0-9])", "it", "\n".join(lines))
        if len(text.split()) >= MIN_README_WORDS:
            yield name, summary, text.strip()


def build(corpus: str) -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    """The corpus's documents and queries (see the module docstring)."""
    if corpus == "readmes":
        return _draw(corpus, [("", summary, text) for _, summary, text in _readmes()])
    if corpus == "sample":
        return _build_sample()
    entries = [e for module, src in _sources(corpus) for e in _entries(module, src)]
    seen: set[str] = set()
    unique = []
    for entry in entries:  # a name defined twice (overloads, platform branches): keep the first
        if entry[0] not in seen:
            seen.add(entry[0])
            unique.append(entry)
    return _draw(corpus, [(q.rsplit(".", 1)[0], summary, rest) for q, summary, rest in unique])


def _draw(
    corpus: str, entries: list[tuple[str, str, str]]
) -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    """Documents and queries from ``(title, summary, text)`` entries: shuffled with ``SEED``,
    at most ``MAX_DOCS`` documents, a query per summary no other drawn document shares (at most
    ``MAX_QUERIES``)."""
    random.Random(SEED).shuffle(entries)
    drawn = entries[:MAX_DOCS]
    shared = Counter(summary.lower() for _, summary, _ in drawn)
    docs = []
    queries: list[dict[str, object]] = []
    for n, (title, summary, text) in enumerate(drawn):
        doc_id = f"{corpus}-{n}"
        docs.append({"id": doc_id, "title": title, "text": text})
        if len(queries) < MAX_QUERIES and shared[summary.lower()] == 1:
            queries.append({"id": f"q{n}", "query": summary, "expected_docs": [doc_id]})
    return docs, queries


def _build_sample() -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    files = sorted((DATA / "documents").rglob("*.md"))
    docs = [{"id": f.stem, "title": "", "text": f.read_text(encoding="utf-8")} for f in files]
    ids = {d["id"] for d in docs}
    queries: list[dict[str, object]] = []
    for line in (DATA / "questions" / "_draft_documents.jsonl").read_text().splitlines():
        item = json.loads(line) if line.strip() else {}
        if item.get("source_doc") in ids:
            queries.append(
                {"id": item["id"], "query": item["query"], "expected_docs": [item["source_doc"]]}
            )
    return docs, queries


def write(corpus: str, out_dir: Path) -> tuple[Path, Path]:
    """Write ``docs.jsonl`` and ``queries.jsonl`` of ``corpus`` under ``out_dir``."""
    docs, queries = build(corpus)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = out_dir / "docs.jsonl", out_dir / "queries.jsonl"
    for path, items in zip(paths, (docs, queries), strict=True):
        path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items))
    return paths


def cached(corpus: str) -> tuple[Path, Path]:
    """The corpus's files in the cache, written on first use (``sample`` and ``readmes``, read
    from this checkout and this environment, are written again every time)."""
    from toolrag import Settings

    out_dir = Settings().cache_dir / "doc_corpora" / corpus
    docs, queries = out_dir / "docs.jsonl", out_dir / "queries.jsonl"
    if corpus in ("stdlib", *WHEELS) and docs.exists() and queries.exists():
        return docs, queries
    return write(corpus, out_dir)


if __name__ == "__main__":
    for name in CORPORA:
        d, q = cached(name)
        print(name, sum(1 for _ in d.open()), "docs", sum(1 for _ in q.open()), "queries", d)
