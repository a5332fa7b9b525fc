"""BFCL (Berkeley Function Calling Leaderboard, Apache-2.0) in toolrag's evaluation format.

The data comes from the PyPI package ``bfcl-eval==2026.3.23``: its wheel is fetched with
``pip download --no-deps`` into the cache and read in place (nothing is installed).
Pool: every distinct function of the single-turn Python-style categories (distractors and
irrelevance included; the Java and JavaScript variants are left out), about 1,700 names.
Queries: the single-call items of simple_python, multiple, live_simple and live_multiple, the
expected tool taken from the possible answers. Multi-tool queries (``load_multi``): the items of
parallel_multiple and live_parallel_multiple whose possible answer calls two or more distinct
functions ("Find the area of a rectangle ... Also, calculate the area of a circle ..."); every
one of those functions is expected.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.datasets.evalfiles import write_pool
from benchmarks.datasets.wheels import fetch_wheel

VERSION = "2026.3.23"
POOL_CATEGORIES = [
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
]
QUERY_CATEGORIES = ["simple_python", "multiple", "live_simple", "live_multiple"]
MULTI_CATEGORIES = ["parallel_multiple", "live_parallel_multiple"]
# items whose own function list holds no tool that fits the question
IRRELEVANCE_CATEGORIES = ["irrelevance", "live_irrelevance"]


def wheel() -> Path:
    return fetch_wheel("bfcl-eval", VERSION, folder="bfcl")


def _jsonl(zf: zipfile.ZipFile, member: str) -> list[dict[str, Any]]:
    try:
        text = zf.read(member).decode("utf-8")
    except KeyError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _question(item: dict[str, Any]) -> str:
    turns = (
        item["question"][0]
        if item["question"] and isinstance(item["question"][0], list)
        else item["question"]
    )
    return " ".join(m["content"] for m in turns if m.get("role") == "user").strip()


def _answers(zf: zipfile.ZipFile, cat: str) -> dict[str, list[dict[str, Any]]]:
    """Each item's ground-truth calls, ``[{function_name: {argument: [allowed values]}}]``."""
    member = f"bfcl_eval/data/possible_answer/BFCL_v4_{cat}.json"
    return {a["id"]: a.get("ground_truth") or [] for a in _jsonl(zf, member)}


def load_multi(out_dir: Path) -> Path:
    """Write ``queries_multi.jsonl`` (multi-tool queries over the same pool); return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "queries_multi.jsonl"
    with zipfile.ZipFile(wheel()) as zf, path.open("w") as fh:
        for cat in MULTI_CATEGORIES:
            answers = _answers(zf, cat)
            for item in _jsonl(zf, f"bfcl_eval/data/BFCL_v4_{cat}.json"):
                names = sorted({name for call in answers.get(item["id"], []) for name in call})
                if len(names) >= 2:
                    query = {"id": item["id"], "query": _question(item), "expected_tools": names}
                    fh.write(json.dumps(query) + "\n")
    return path


def _single_calls(zf: zipfile.ZipFile) -> Iterator[tuple[str, dict[str, Any], str, Any]]:
    """The single-call items of the query categories: ``(category, item, function called,
    its allowed arguments)``."""
    for cat in QUERY_CATEGORIES:
        answers = _answers(zf, cat)
        for item in _jsonl(zf, f"bfcl_eval/data/BFCL_v4_{cat}.json"):
            truth = answers.get(item["id"], [])
            if len(truth) != 1:
                continue  # single-call items only
            (name,) = truth[0].keys()
            yield cat, item, name, truth[0][name]


def load(out_dir: Path) -> tuple[Path, Path]:
    """Write ``tools.json`` and ``queries.jsonl`` under ``out_dir``; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tools: dict[str, dict[str, Any]] = {}
    queries = []
    with zipfile.ZipFile(wheel()) as zf:
        for cat in POOL_CATEGORIES:
            for item in _jsonl(zf, f"bfcl_eval/data/BFCL_v4_{cat}.json"):
                for fn in item.get("function") or []:
                    tools.setdefault(fn["name"], fn)
        for _cat, item, name, args in _single_calls(zf):
            queries.append(
                {
                    "id": item["id"],
                    "query": _question(item),
                    "expected_tools": [name],
                    "expected_args": args,
                }
            )
    return write_pool(out_dir, list(tools.values()), queries)


def load_items() -> list[dict[str, Any]]:
    """Each item with the function list BFCL gives it: the single-call items of the query
    categories (``expected``: the function called) and the irrelevance items (``expected``:
    None, no function of the list fits). ``{id, category, query, functions, expected}``."""

    def row(cat: str, item: dict[str, Any], expected: str | None) -> dict[str, Any]:
        functions = [fn["name"] for fn in item.get("function") or []]
        return {"id": item["id"], "category": cat, "query": _question(item),
                "functions": functions, "expected": expected}  # fmt: skip

    with zipfile.ZipFile(wheel()) as zf:
        items = [row(cat, item, name) for cat, item, name, _args in _single_calls(zf)]
        for cat in IRRELEVANCE_CATEGORIES:
            items += [row(cat, i, None) for i in _jsonl(zf, f"bfcl_eval/data/BFCL_v4_{cat}.json")]
    return items
