"""Two document corpora that nobody here tuned for, in ``toolrag eval docs`` format: the
documented functions and classes of a library, read from its source with ``ast`` (nothing is
imported).

- ``stdlib``: Python's own standard library (the running interpreter's ``Lib/``), the
  development corpus;
- ``sqlalchemy``: the ``SQLAlchemy==2.0.36`` wheel (fetched once with ``pip download --no-deps``
  into the cache and read in place), the held corpus, measured once at the end.

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
SEED = 53
MAX_DOCS = 900
MAX_QUERIES = 150
MIN_REST_WORDS = 30
CORPORA = ("stdlib", "sqlalchemy")
HELD = "sqlalchemy"
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
    elif corpus == "sqlalchemy":
        with zipfile.ZipFile(fetch_wheel("SQLAlchemy", SQLALCHEMY, folder="sqlalchemy")) as zf:
            for name in sorted(zf.namelist()):
                wanted = name.endswith(".py") and name.startswith("sqlalchemy/")
                if wanted and "/testing/" not in name:
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


def build(corpus: str) -> tuple[list[dict[str, str]], list[dict[str, object]]]:
    """The corpus's documents and queries (see the module docstring)."""
    entries = [e for module, src in _sources(corpus) for e in _entries(module, src)]
    seen: set[str] = set()
    unique = []
    for entry in entries:  # a name defined twice (overloads, platform branches): keep the first
        if entry[0] not in seen:
            seen.add(entry[0])
            unique.append(entry)
    random.Random(SEED).shuffle(unique)
    drawn = unique[:MAX_DOCS]
    shared = Counter(summary.lower() for _, summary, _ in drawn)
    docs = []
    queries: list[dict[str, object]] = []
    for n, (qualname, summary, rest) in enumerate(drawn):
        doc_id = f"{corpus}-{n}"
        docs.append({"id": doc_id, "title": qualname.rsplit(".", 1)[0], "text": rest})
        if len(queries) < MAX_QUERIES and shared[summary.lower()] == 1:
            queries.append({"id": f"q{n}", "query": summary, "expected_docs": [doc_id]})
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
    """The corpus's files in the cache, written on first use."""
    from toolrag import Settings

    out_dir = Settings().cache_dir / "doc_corpora" / corpus
    docs, queries = out_dir / "docs.jsonl", out_dir / "queries.jsonl"
    if docs.exists() and queries.exists():
        return docs, queries
    return write(corpus, out_dir)


if __name__ == "__main__":
    for name in CORPORA:
        d, q = cached(name)
        print(name, sum(1 for _ in d.open()), "docs", sum(1 for _ in q.open()), "queries", d)
