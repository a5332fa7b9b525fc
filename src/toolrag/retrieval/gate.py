"""The "no tool fits" gate, chosen when the tool index is built, from the pool's own written
requests: no labelled question is needed.

Each LLM-written request (``toolrag tools synth``, or ``synthetic:`` in a YAML card) is searched
as a question its card fits, with that card's written requests withheld
(:meth:`ToolIndex.requests_withheld`), so the card is found by its document alone as a real
question finds it. The gate is the highest cosine, on a grid of 0.01, that still offers tools to
``keep`` of those requests (0.98 by default): a question whose best k tools all stay below it is
answered without tools. On BFCL and NESTFUL the gate chosen this way keeps 0.93-0.99 of the real
questions (docs/decisions/0019). ``toolrag eval gate --requests`` reports the same sweep in full.

That cosine gate alone cannot tell a question worded unlike every card but sharing its rare
words ("How many backorders carry a restocking fee?") from one that is only vaguely near
("What is the tallest building in the world?"). So ``choose_gate`` also sets an
:class:`~toolrag.retrieval.index.EvidenceGate` that counts the question's best BM25 score beside
its cosine, each on the scale of the pool's written requests (their medians). Its threshold sits
where the pool's written requests stay above it (at ``keep``, as for the cosine gate) and, when
the pool allows, lower: just above the 95th percentile of the reference requests in
``offtopic.txt`` (general knowledge, chit-chat, writing and code, which no pool of a business is
meant to serve). Written requests match their cards better than people's questions do, so the
bar goes as low as the off-topic references allow (docs/decisions/0041).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import statistics
from functools import cache
from importlib.resources import files

from pydantic import BaseModel, Field

from toolrag.retrieval.index import EvidenceGate, Gate, Strategy, ToolIndex

# searched at most, chosen by a hash: 30-45 ms a search here, once per index (the choice is
# saved); from 300 of a 1,700-tool pool's 5,090 requests the gate moved by up to 0.13 between
# samples, from 1,000 by up to 0.05 (benchmarks/gate_sample.py, decision 0071)
MAX_REQUESTS = 1000
GATE_FORMAT = 1  # a saved choice of another format is chosen again
PROBES = 8  # requests searched again to tell whether a saved choice's search still holds
MIN_REQUESTS = 20  # fewer requests than this choose no gate: too few to take a share of
OFFTOPIC_SHARE = 0.95  # of the off-topic references the evidence gate leaves without tools

Evidence = tuple[float, float]  # a search's best cosine and its best BM25 score


@cache
def offtopic_requests() -> tuple[str, ...]:
    """The reference requests no business's pool is meant to serve (``offtopic.txt``)."""
    text = files("toolrag.retrieval").joinpath("offtopic.txt").read_text(encoding="utf-8")
    return tuple(x.strip() for x in text.splitlines() if x.strip() and not x.startswith("#"))


class GateChoice(BaseModel):
    """The gate chosen for a tool index, and what it was chosen from."""

    gate: float | None = Field(description="The cosine gate; None when none could be chosen.")
    keep: float
    requests: int = Field(description="Written requests searched.")
    kept: float | None = Field(None, description="Share of them the gate offers tools to.")
    reason: str = ""
    evidence: EvidenceGate | None = Field(
        None,
        description="The gate over cosine and BM25 together, used in place of ``gate`` when "
        "set (``tool_gate = auto``).",
    )
    evidence_kept: float | None = Field(
        None, description="Share of the written requests the evidence gate offers tools to."
    )
    offtopic_emptied: float | None = Field(
        None,
        description="Share of the off-topic references the evidence gate leaves without tools.",
    )

    def rule(self) -> Gate | None:
        """What a search applies: the evidence gate when there is one, else the cosine gate."""
        return self.evidence if self.evidence is not None else self.gate


def choose_gate(
    index: ToolIndex,
    keep: float = 0.98,
    k: int = 5,
    strategy: Strategy = "best",
    limit: int = MAX_REQUESTS,
    saved: bool = True,
) -> GateChoice:
    """The highest gate on a 0.01 grid that offers tools to at least ``keep`` of the index's
    written requests (at most ``limit`` of them), each searched ``k`` deep with its card's
    requests withheld. ``saved``: the choice is kept beside the index
    (``<table>_gate.json``) and read back while the index, its search and these arguments
    are the same (:func:`choice_key`), so a new process does not search again."""
    written = index.written_requests()
    if len(written) < MIN_REQUESTS:
        return GateChoice(
            gate=None,
            keep=keep,
            requests=len(written),
            reason=f"{len(written)} written requests (at least {MIN_REQUESTS} choose a gate); "
            "write them with `toolrag tools synth`.",
        )
    chosen = searched_requests(written, limit)
    path = index.index_dir / f"{index.table_name}_gate.json"
    # the first requests' searches tell a saved choice's search from today's, and start the
    # searches a new choice needs
    probes = request_evidence(index, chosen[:PROBES], k=k, strategy=strategy) if saved else []
    key = choice_key(index, chosen, keep, k, strategy, probes) if saved else ""
    if saved:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            kept = json.loads(path.read_text(encoding="utf-8"))
            if kept["key"] == key:
                return GateChoice.model_validate(kept["choice"])
    rest = request_evidence(index, chosen[len(probes) :], k=k, strategy=strategy)
    searched = probes + rest
    offtopic = [evidence(index, t, k=k, strategy=strategy) for t in offtopic_requests()]
    choice = gate_from_evidence(searched, offtopic, keep)
    if saved:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):  # a read-only index chooses again in each process
            tmp.write_text(json.dumps({"key": key, "choice": choice.model_dump(mode="json")}))
            tmp.replace(path)
    return choice


def choice_key(
    index: ToolIndex,
    chosen: list[tuple[str, str]],
    keep: float,
    k: int,
    strategy: Strategy,
    probes: list[Evidence],
) -> str:
    """What a saved gate choice must match to be read back: the index's cards and requests
    (:meth:`ToolIndex.fingerprint`), the requests searched, the arguments, the off-topic
    references, and ``probes``, the evidence the first ``PROBES`` of ``chosen`` find now
    (:func:`request_evidence`), so that another embedding model or a changed search chooses
    again."""
    digest = hashlib.sha256(
        json.dumps([GATE_FORMAT, keep, k, strategy, OFFTOPIC_SHARE, index.fingerprint()]).encode()
    )
    for card_id, text in chosen:
        digest.update(f"{card_id}\t{text}\n".encode())
    digest.update("\n".join(offtopic_requests()).encode())
    for cosine, bm25 in probes:
        digest.update(f"{cosine:.5f} {bm25:.4f}\n".encode())
    return digest.hexdigest()[:32]


def evidence(index: ToolIndex, text: str, k: int = 5, strategy: Strategy = "best") -> Evidence:
    """What a search for ``text`` finds: its best cosine among the top ``k`` tools (-1 when
    none has one) and its best BM25 score."""
    hits = index.retrieve(text, k=k, strategy=strategy, translate=False)
    cosine = max((h.similarity for h in hits if h.similarity is not None), default=-1.0)
    return cosine, index.best_bm25(text)


def request_evidence(
    index: ToolIndex, requests: list[tuple[str, str]], k: int = 5, strategy: Strategy = "best"
) -> list[Evidence]:
    """:func:`evidence` for each written request (card id, text), searched with its card's
    requests withheld (:meth:`ToolIndex.requests_withheld`)."""
    searched: list[Evidence] = []
    for card_id, text in requests:
        with index.requests_withheld(card_id):
            searched.append(evidence(index, text, k=k, strategy=strategy))
    return searched


def gate_from_evidence(
    searched: list[Evidence], offtopic: list[Evidence], keep: float = 0.98
) -> GateChoice:
    """The gates for a pool whose written requests found ``searched`` and whose off-topic
    references found ``offtopic`` (:func:`evidence` each): the cosine gate that ``keep`` of
    the requests reach, and the evidence gate (see the module docstring)."""
    best = sorted((c for c, _ in searched), reverse=True)
    gate = _cut(best, keep)
    kept = sum(b >= gate for b in best) / len(best)
    choice = GateChoice(gate=gate, keep=keep, requests=len(best), kept=round(kept, 4))
    lexical_scale = statistics.median(b for _, b in searched)
    cosine_scale = statistics.median(c for c, _ in searched)
    if lexical_scale <= 0 or cosine_scale <= 0 or not offtopic:
        return choice  # no words in common: the cosine gate alone
    scale = EvidenceGate(cosine_scale, lexical_scale, threshold=0.0)
    requests = sorted((scale.score(c, b) for c, b in searched), reverse=True)
    scored = sorted(scale.score(c, b) for c, b in offtopic)
    above = scored[min(len(scored) - 1, math.ceil(OFFTOPIC_SHARE * len(scored)))]
    threshold = min(_cut(requests, keep), math.ceil(above * 100) / 100)
    choice.evidence = EvidenceGate(round(cosine_scale, 4), round(lexical_scale, 4), threshold)
    choice.evidence_kept = round(sum(r >= threshold for r in requests) / len(requests), 4)
    choice.offtopic_emptied = round(sum(o < threshold for o in scored) / len(scored), 4)
    return choice


def searched_requests(
    written: list[tuple[str, str]], limit: int, salt: str = ""
) -> list[tuple[str, str]]:
    """The ``limit`` written requests a gate is chosen from, when there are more: those first
    in the order of a hash of their card and text, so the same pool gets the same gate whatever
    order its cards were added in (taking every n-th request in the index's row order moved a
    500-tool pool's bar from 0.86 to 1.00 when its cards had been added in another order).
    ``salt`` draws another such sample (``benchmarks/gate_sample.py`` measures how far the
    gate moves between samples)."""
    if len(written) <= limit:
        return written

    def key(request: tuple[str, str]) -> bytes:
        text = "\n".join((salt, *request) if salt else request)
        return hashlib.blake2b(text.encode(), digest_size=8).digest()

    return sorted(written, key=key)[:limit]


def _cut(scores_high_first: list[float], keep: float) -> float:
    """The highest value on a 0.01 grid that at least ``keep`` of the scores reach."""
    n = len(scores_high_first)
    at = scores_high_first[min(n - 1, max(0, math.ceil(keep * n) - 1))]
    return math.floor(at * 100 + 1e-9) / 100
