"""Tool cards embedded whole (decision 0061): a card's document longer than the embedding model's
input (256 word pieces for all-MiniLM-L6-v2; cards with many parameters) is cut there today.
This embeds it as windows that fit and keeps their mean
(:func:`toolrag.models.whole_text_embeddings`, what the content index does with its chunks since
0061), and scores ``dense`` and ``best`` (no written requests) both ways on the same queries.

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 python -m benchmarks.ablations.whole_cards \
        [--pool networkx --pool openapi --pool nestful]

Development pools only unless ``--pool skimage`` is named (held out, measured once at f5770bd).
Writes ``benchmarks/results/whole_cards.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from benchmarks.datasets import nestful, tool_pools
from benchmarks.results import result_name, write_result
from toolrag import Settings, make_embedding
from toolrag.cards import load_tool_list
from toolrag.evaluation import load_queries, run_tool_evals
from toolrag.models import whole_text_embeddings

POOLS = ("networkx", "openapi", "nestful")
STRATEGIES = ("dense", "best")


class WholeTexts(BaseEmbedding):
    """``inner`` with every stored text embedded whole; questions as ``inner`` embeds them."""

    _inner: BaseEmbedding = PrivateAttr()

    def __init__(self, inner: BaseEmbedding) -> None:
        super().__init__(model_name=f"{inner.model_name}/whole")
        self._inner = inner

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._inner.get_query_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return whole_text_embeddings(self._inner, [text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return whole_text_embeddings(self._inner, texts)


def _pool(name: str, runs: Path) -> tuple[Path, Path]:
    if name == "nestful":
        return nestful.load(runs / "nestful")
    return tool_pools.cached(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pool", action="append", choices=(*POOLS, tool_pools.HELD))
    parser.add_argument("--runs", type=Path, default=Path("runs"))
    args = parser.parse_args()
    pools = args.pool or list(POOLS)
    plain = make_embedding(Settings())
    whole = WholeTexts(plain)
    t0 = time.perf_counter()
    figures: dict[str, Any] = {"embedding": "all-MiniLM-L6-v2", "pools": {}}
    for name in pools:
        tools_path, queries_path = _pool(name, args.runs)
        cards = load_tool_list(tools_path)
        queries = load_queries(queries_path, "expected_tools")
        rows: dict[str, Any] = {}
        for label, embed in (("cut", plain), ("whole", whole)):
            reports = run_tool_evals(cards, {name: queries}, STRATEGIES, embed)[name]
            for r in reports:
                rows[f"{r.strategy}-{label}"] = r.as_json("n_tools")
        figures["pools"][name] = {
            "held": name == tool_pools.HELD,
            "n_tools": len(cards),
            "n_queries": len(queries),
            "strategies": rows,
        }
        for key, r in rows.items():
            print(
                f"{name:9} {key:12} R@1 {r['recall@1']:.3f} R@5 {r['recall@5']:.3f} "
                f"MRR {r['mrr']:.3f}",
                flush=True,
            )
    seconds = round(time.perf_counter() - t0, 1)
    figures["seconds"] = seconds
    name = result_name("whole_cards", pools="-".join(pools) if args.pool else None)
    written = write_result(name, figures, module="ablations.whole_cards", seconds=seconds)
    print("Result written:", written)


if __name__ == "__main__":
    main()
