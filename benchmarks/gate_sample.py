"""How far the automatic gate moves with the sample of written requests it is chosen from
(issue 53: the bar of a 500-tool pool swung by up to 0.15 between two samples of 300).

``choose_gate`` searches at most ``MAX_REQUESTS`` of a pool's written requests (each with its
card's requests withheld) and sets the gate where ``keep`` (0.98) of them stay above it: a
low quantile, read off the few lowest of the sample. This benchmark searches **every** written
request of each pool once, so the gate chosen from all of them is known, then draws many samples
of each size from those searches (no search repeated) in two ways:

- ``hash`` (the shipped way): the first ``limit`` requests in the order of a salted hash of
  card and text (``searched_requests``, one salt per draw);
- ``cards``: round robin over the cards, each card's requests and the cards themselves in the
  order of a salted hash, so that every card gives one request before any gives a second.

For each pool, way and sample size it reports the evidence gate's threshold over the draws
(median, range, spread), how far it lands from the gate chosen from all requests, and the share
of **all** written requests the sampled gate keeps (its target is ``keep``), beside the seconds
a search takes here, which price a sample size at index time. No LLM.

Pools: BFCL, NESTFUL and ``openapi`` with the requests of ``benchmarks/records/`` (the
held-out pools have none).

    HF_HUB_OFFLINE=1 OMP_NUM_THREADS=1 .venv/bin/python -m benchmarks.gate_sample
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.results import ROOT, write_result
from benchmarks.retrieval_all import tool_sets
from toolrag import Settings, make_embedding
from toolrag.cards import SyntheticQueries, load_tool_list
from toolrag.retrieval import (
    MAX_REQUESTS,
    Evidence,
    ToolIndex,
    evidence,
    gate_from_evidence,
    offtopic_requests,
    request_evidence,
    searched_requests,
)

RECORDS = ROOT / "benchmarks" / "records"
WRITTEN = {
    "bfcl": RECORDS / "synthetic_bfcl.sqlite",
    "nestful": RECORDS / "synthetic_nestful.sqlite",
    "openapi": RECORDS / "synthetic_openapi_sample.sqlite",
}
LIMITS = (100, 200, 300, 600, 1000, 2000)
DRAWS = 30
KEEP = 0.98

Request = tuple[str, str]


def _key(salt: str, *parts: str) -> bytes:
    return hashlib.blake2b("\n".join((salt, *parts)).encode(), digest_size=8).digest()


def by_cards(written: list[Request], limit: int, salt: str) -> list[Request]:
    """``limit`` requests, round robin over the cards (each card's requests and the cards in
    the order of a salted hash): every card gives one before any gives a second."""
    groups: dict[str, list[Request]] = defaultdict(list)
    for request in written:
        groups[request[0]].append(request)
    for group in groups.values():
        group.sort(key=lambda r: _key(salt, *r))
    cards = sorted(groups, key=lambda c: _key(salt, c))
    chosen: list[Request] = []
    depth = 0
    while len(chosen) < limit:
        row = [groups[c][depth] for c in cards if depth < len(groups[c])]
        if not row:
            break
        chosen += row[: limit - len(chosen)]
        depth += 1
    return chosen


def draws_summary(
    written: list[Request],
    found: dict[Request, Evidence],
    offtopic: list[Evidence],
    full: float,
    limit: int,
    way: str,
) -> dict[str, Any]:
    thresholds, kept_all = [], []
    for draw in range(DRAWS):
        salt = f"draw-{draw}"
        chosen = (
            searched_requests(written, limit, salt=salt)
            if way == "hash"
            else by_cards(written, limit, salt)
        )
        choice = gate_from_evidence([found[r] for r in chosen], offtopic, KEEP)
        gate = choice.evidence
        assert gate is not None
        thresholds.append(gate.threshold)
        kept = sum(gate.score(*found[r]) >= gate.threshold for r in written)
        kept_all.append(kept / len(written))
    return {
        "threshold_median": round(statistics.median(thresholds), 3),
        "threshold_min": min(thresholds),
        "threshold_max": max(thresholds),
        "threshold_stdev": round(statistics.pstdev(thresholds), 4),
        "off_full_mean": round(statistics.fmean(abs(t - full) for t in thresholds), 4),
        "off_full_max": round(max(abs(t - full) for t in thresholds), 4),
        "kept_all_mean": round(statistics.fmean(kept_all), 4),
        "kept_all_min": round(min(kept_all), 4),
        "kept_all_max": round(max(kept_all), 4),
    }


def pool_figures(name: str, k: int) -> dict[str, Any]:
    tools_path, _ = tool_sets(name)
    cards = SyntheticQueries(WRITTEN[name]).augment(load_tool_list(tools_path), by_name=True)
    with tempfile.TemporaryDirectory(prefix=f"toolrag-gate-sample-{name}-") as tmp:
        index = ToolIndex(Path(tmp), make_embedding(Settings()))
        index.sync(cards)
        written = index.written_requests()
        started = time.perf_counter()
        searched = request_evidence(index, written, k=k)
        per_search = (time.perf_counter() - started) / len(written)
        offtopic = [evidence(index, t, k=k) for t in offtopic_requests()]
    found = dict(zip(written, searched, strict=True))
    full_choice = gate_from_evidence(searched, offtopic, KEEP)
    assert full_choice.evidence is not None
    full = full_choice.evidence.threshold
    rows: dict[str, Any] = {}
    for limit in [n for n in LIMITS if n < len(written)]:
        rows[str(limit)] = {
            way: draws_summary(written, found, offtopic, full, limit, way)
            for way in ("hash", "cards")
        }
        print(name, limit, rows[str(limit)], flush=True)
    return {
        "tools": len(cards),
        "cards_with_requests": len({c for c, _ in written}),
        "written_requests": len(written),
        "ms_per_search": round(per_search * 1000, 2),
        "full": full_choice.model_dump(mode="json"),
        "limits": rows,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", default="bfcl,nestful,openapi")
    args = parser.parse_args(argv)
    k = Settings().tool_top_k
    figures: dict[str, Any] = {
        "keep": KEEP,
        "draws": DRAWS,
        "shipped_limit": MAX_REQUESTS,
        "top_k": k,
        "pools": {},
    }
    for name in [p for p in args.pools.split(",") if p]:
        figures["pools"][name] = pool_figures(name, k)
    write_result("gate_sample", figures)


if __name__ == "__main__":
    main()
