"""The relevance floor ("no tool fits") on BFCL, beside plain LlamaIndex's similarity cut-off.

Each BFCL item comes with its own function list. For the single-call items of simple_python,
multiple, live_simple and live_multiple one of those functions is right; for the items of
irrelevance and live_irrelevance none is (BFCL's own labels: in live_irrelevance that includes
questions a listed function is about but cannot answer as asked, such as weather "for these
coordinates" given a tool that takes a city). A floor is a cosine below which a tool is not
offered, so it answers "no tool fits" when every function of the item falls below it.

For each item and each scorer this reads the cosine of every function of its list with the
question, over the whole BFCL pool indexed once:

- toolrag: the similarity ``ToolIndex.retrieve(strategy="best")`` reports and ``floor`` cuts (the
  card's enriched document, blended with its nearest LLM-written request with ``--synthetic``);
- plain ObjectIndex: the node score of ``ObjectIndex.from_objects`` over FunctionTools, which
  LlamaIndex's ``SimilarityPostprocessor(similarity_cutoff=...)`` cuts.

It reports, per scorer, how well the best cosine of an item's list separates items with a
fitting tool from items without (ROC AUC, threshold-free), and per floor from 0.10 to 0.70:
``kept``, the share of answerable items whose right function clears the floor, and
``no_tool``, the share of irrelevance items where every function falls below it, with their
mean (balanced accuracy). ``best_floor`` is the floor of highest balanced accuracy, chosen on
the even-numbered items and measured on the odd ones, so it is not tuned on what it reports.

The same cosines are also read as a gate (``ToolIndex.retrieve(gate=...)``): the list is
offered whole when its best function clears the gate and not at all otherwise, so an answerable
item is kept when its best function's cosine clears it, whatever its right function's is.
``no_tool`` is the same as the floor's; ``gates`` and ``best_gate`` report it like the floor.

    .venv/bin/python -m benchmarks.tool_floor [--synthetic benchmarks/records/synthetic_bfcl.sqlite]

writes ``runs/tool_floor.json`` (``runs/tool_floor_requests.json`` with ``--synthetic``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.datasets import bfcl
from benchmarks.results import result_name, write_result
from toolrag import Settings
from toolrag.cards import SyntheticQueries, load_tool_list
from toolrag.evaluation import plain_objectindex
from toolrag.models import embedding_name, make_embedding
from toolrag.retrieval import ToolIndex

ROOT = Path(__file__).resolve().parents[1]
FLOORS = [round(0.1 + 0.05 * i, 2) for i in range(13)]
Scorer = Callable[[str], dict[str, float]]


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """ROC AUC: the chance that a random answerable item's best cosine is above a random
    irrelevance item's (ties count half)."""
    pos, neg = np.asarray(positive), np.asarray(negative)
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def at_floor(rows: Sequence[dict[str, Any]], floor: float, gate: bool = False) -> dict[str, float]:
    """``kept``, ``no_tool`` and their mean (``balanced``) at ``floor`` over ``rows``. As a
    floor, an answerable item is kept when its right function's cosine clears it; as a gate
    (``gate``), when its best function's does (the list is offered whole or not at all)."""
    key = "top" if gate else "right"
    right = [r[key] for r in rows if r["expected"] is not None]
    top = [r["top"] for r in rows if r["expected"] is None]
    kept = float(np.mean([s >= floor for s in right])) if right else float("nan")
    none = float(np.mean([s < floor for s in top])) if top else float("nan")
    return {
        "kept": round(kept, 4),
        "no_tool": round(none, 4),
        "balanced": round((kept + none) / 2, 4),
    }


def score_items(items: Sequence[dict[str, Any]], scorer: Scorer) -> list[dict[str, Any]]:
    """Each item's best cosine over its function list (``top``) and its right function's
    (``right``, None for irrelevance items)."""
    rows = []
    for item in items:
        sims = scorer(item["query"])
        mine = [sims.get(name, -1.0) for name in item["functions"]]
        expected = item["expected"]
        rows.append(
            {
                "id": item["id"],
                "category": item["category"],
                "expected": expected,
                "top": max(mine),
                "right": None if expected is None else sims.get(expected, -1.0),
            }
        )
    return rows


def report(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r["top"] for r in rows if r["expected"] is not None]
    even, odd = rows[::2], rows[1::2]
    chosen = max(FLOORS, key=lambda f: (at_floor(even, f)["balanced"], -f))
    gate = max(FLOORS, key=lambda f: (at_floor(even, f, gate=True)["balanced"], -f))
    out: dict[str, Any] = {
        "auc": {
            name: round(auc(answerable, [r["top"] for r in rows if r["category"] == name]), 4)
            for name in bfcl.IRRELEVANCE_CATEGORIES
        },
        "floors": {str(f): at_floor(rows, f) for f in FLOORS},
        "best_floor": {"floor": chosen, "chosen_on": "even items", **at_floor(odd, chosen)},
        "gates": {str(f): at_floor(rows, f, gate=True) for f in FLOORS},
        "best_gate": {"gate": gate, "chosen_on": "even items", **at_floor(odd, gate, gate=True)},
    }
    out["auc"]["both"] = round(
        auc(answerable, [r["top"] for r in rows if r["expected"] is None]), 4
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--synthetic", type=Path, default=None, help="LLM-written requests.")
    parser.add_argument("--index-dir", type=Path, default=None)
    parser.add_argument(
        "--out", type=Path, default=None, help="runs/tool_floor[_requests].json by default."
    )
    args = parser.parse_args()
    out_path = args.out or ROOT / "runs" / f"tool_floor{'_requests' if args.synthetic else ''}.json"
    t0 = time.perf_counter()
    tools_path, _ = bfcl.load(ROOT / "runs" / "bfcl")
    cards = load_tool_list(tools_path)
    items = [i for i in bfcl.load_items() if i["functions"]]
    embed = make_embedding(Settings())
    scorers: dict[str, Scorer] = {}

    obj = plain_objectindex(cards, embed).as_node_retriever(similarity_top_k=len(cards))
    scorers["plain ObjectIndex"] = lambda q: {
        n.node.metadata["name"]: float(n.score or 0.0) for n in obj.retrieve(q)
    }
    name = "toolrag best"
    if args.synthetic:
        cards = SyntheticQueries(args.synthetic).augment(cards, by_name=True)
        name += " + LLM-written requests"
    default_dir = "index_requests" if args.synthetic else "index"
    index = ToolIndex(args.index_dir or ROOT / "runs" / "bfcl" / default_dir, embed)
    print(index.sync(cards), flush=True)
    scorers[name] = lambda q: {
        h.name: float(h.similarity if h.similarity is not None else -1.0)
        for h in index.retrieve(q, k=len(index), strategy="best")
    }

    result: dict[str, Any] = {
        "benchmark": "tool_floor",
        "data": f"BFCL bfcl-eval=={bfcl.VERSION}, each item's own function list",
        "embedding": embedding_name(Settings()),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "n_items": {
            "answerable": sum(1 for i in items if i["expected"] is not None),
            **{c: sum(1 for i in items if i["category"] == c) for c in bfcl.IRRELEVANCE_CATEGORIES},
        },
        "results": {},
    }
    table = Table("scorer", "AUC irrelevance", "AUC live_irrelevance", "AUC both", "cut", "at",
                  "kept", "no tool", "balanced", title="relevance floor on BFCL")  # fmt: skip
    for label, scorer in scorers.items():
        rows = score_items(items, scorer)
        out = report(rows)
        result["results"][label] = out
        print(label, json.dumps(out["auc"]), json.dumps(out["best_floor"]),
              json.dumps(out["best_gate"]), flush=True)  # fmt: skip
        aucs = [f"{out['auc'][k]:.3f}" for k in (*bfcl.IRRELEVANCE_CATEGORIES, "both")]
        for cut in ("floor", "gate"):
            best = out[f"best_{cut}"]
            table.add_row(label, *aucs, cut, f"{best[cut]:.2f}", f"{best['kept']:.3f}",
                          f"{best['no_tool']:.3f}", f"{best['balanced']:.3f}")  # fmt: skip
            label, aucs = "", ["", "", ""]
    result["seconds"] = round(time.perf_counter() - t0, 1)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(result, indent=2))
    write_result(result_name("tool_floor", requests=args.synthetic is not None), result)
    Console().print(table)
    print(f"JSON written to {out_path}")


if __name__ == "__main__":
    main()
