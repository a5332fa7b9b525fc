"""Tool RAG: a persistent index of tool cards that finds the few tools a question needs.

Each card is indexed by its enriched document (:meth:`ToolCard.document`). The vectors live in a
LanceDB table keyed by the card's stable id (name@version) with a content hash, so a rebuild
re-embeds only the cards that changed and never appends duplicates. Dense scores come from the
stored vectors (kept in memory as one matrix: a 10k-tool pool is a 15 MB dot product), BM25 from
LanceDB's native full-text index over the same documents. ``hybrid`` fuses the two rankings by
reciprocal rank; ``best`` adds to each card's cosine its BM25 score relative to the query's best
BM25 match (weight :meth:`ToolIndex.bm25_weight`), which keeps the margins that rank fusion
throws away, and splits requests that name several steps into sub-queries: each step's best
tool is placed among the first (steps + 1) tools, so every step's tool is retrieved, and when
the request marks its steps with sequence words ("First, ... Also, ...") each card scores the
best of the whole request and of each step. A card's LLM-written requests
(``ToolCard.synthetic``) get a vector each in a second table (``<table>_requests``): the card's
cosine blends in its nearest request, so a question worded like a user's request finds the tool
even when the description's words differ. The written requests also serve as a sample of the
questions the pool will be asked: a card whose document sits close to many of them (a "hub",
near every question) is ranked down by half its mean cosine with its ``HUB_K`` nearest requests,
the CSLS correction of Conneau et al. (2018), so a generic tool stops crowding out the specific
one a question names. With enough written requests the index also learns a linear query adapter
from them (:mod:`toolrag.retrieval.adapter`, saved beside the table and fitted again only when the
cards or their requests change): questions are ranked against the documents in the adapted
space, while the similarity reported (and the floor) stays the plain cosine. With a
``translator`` (:mod:`toolrag.retrieval.translation`), a question not in English (another alphabet
or
language) is searched in the English the LLM translates it into. A tool the question names by its
identifier-shaped name ("search it with search_web_tool") or by a quoted one-word name ("use
the `translate` tool", :mod:`toolrag.cards.names`) ranks first in ``best``: the user asked for
it.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import BaseModel, Field

from toolrag.cards.card import ToolCard, split_name
from toolrag.cards.names import NameFinder
from toolrag.locks import writer_lock
from toolrag.models.ray_pool import EmbedBatches
from toolrag.rank_fusion import reciprocal_rank_fusion
from toolrag.retrieval.adapter import QueryAdapter, adapter_key, fit_query_adapter
from toolrag.retrieval.prerequisites import FORMAT as REQUIREMENTS_FORMAT
from toolrag.retrieval.prerequisites import Requirements, requirements
from toolrag.retrieval.steps import split_steps
from toolrag.text import MAX_QUERY_CHARS, bounded

log = logging.getLogger(__name__)
Strategy = Literal["dense", "bm25", "hybrid", "best"]
# Weight of the max-normalised BM25 score added to the cosine in ``best``
# (``ToolIndex.bm25_weight``): BM25_WEIGHT for a request of one step. A request that splits into
# steps is one embedding of several intents, blurred, so its lexical evidence weighs more:
# BM25_WEIGHT_STEPS over cards' documents alone, falling linearly to BM25_WEIGHT_WITH_REQUESTS
# as the share of cards with LLM-written requests reaches 1 (those make a card's cosine match
# how users word a question). Measured on BFCL, NESTFUL and the 10k scale pool (README).
BM25_WEIGHT = 0.2
BM25_WEIGHT_STEPS = 0.3
BM25_WEIGHT_WITH_REQUESTS = 0.2
# Weight of a card's nearest LLM-written request (``ToolCard.synthetic``) beside its document
# in the card's cosine: (document + w * nearest request) / (1 + w).
REQUEST_WEIGHT = 0.5
# Weight of the card's name alone (in words, ``split_name``), embedded as its own vector, beside
# its document in the ranking score (not in the cosine floors and gates read):
# (document + w * name [+ REQUEST_WEIGHT * request]) / (1 + w [+ REQUEST_WEIGHT]). A long
# description drowns the name in the document's vector, while a question often repeats it
# ("Create a pull request" for ``create_pulls_create``). Decision 0053: R@5 +0.046 NESTFUL,
# +0.020 openapi, +0.003 BFCL multi-tool, -0.007 BFCL, -0.003 networkx. Opt-in
# (``ToolIndex(name_weight=NAME_WEIGHT)``, the ``tool_name_weight`` setting): it reorders the
# tools the agent is offered, and two local-model tests then chose another first tool.
NAME_WEIGHT = 0.5
NAME_FORMAT = "name-1"
# Hubness correction (CSLS): a card's ranking score is its cosine minus HUB_WEIGHT times the
# mean cosine of its document with its HUB_K nearest written requests of the whole pool (at
# most HUB_SAMPLE requests, taken evenly). Both are CSLS's published settings, not tuned here.
HUB_K = 10
HUB_WEIGHT = 0.5
HUB_SAMPLE = 10_000
HUB_FORMAT = "hubness-1"
# The candidates each side of a search scores, whatever k: dense's best by ranking score and
# BM25's best matches (only these get their BM25 share in ``best``, and only these are fused by
# ``hybrid``). Fixed, so a search for the top 5 returns the first 5 of a search for the top 10 or
# 40: a pool that grew with k gave BM25 matches ranked past 50 their share only for a deeper k.
CANDIDATES = 50
# How deep ``best`` follows prerequisites (a tool's requirement's own requirements ...).
REQUIREMENT_DEPTH = 3
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="toolindex-bm25")


@dataclass(frozen=True)
class EvidenceGate:
    """A "no tool fits" gate over both kinds of evidence a search has: a question keeps its
    tools when ``cosine / cosine_scale + bm25 / lexical_scale`` reaches ``threshold``, where
    ``cosine`` is the best cosine of its k hits and ``bm25`` its best BM25 score over the pool.
    The scales are what a typical question the pool serves gets (the median of its written
    requests), so both count alike whatever the pool's BM25 scores run to: a question worded
    unlike every card but sharing its rare words ("backorders", "restocking") keeps its tools,
    and one that is only vaguely near ("the tallest building") loses them.
    (:func:`toolrag.retrieval.gate.choose_gate` sets it per pool.)"""

    cosine_scale: float
    lexical_scale: float
    threshold: float

    def cosine_bar(self, bm25: float) -> float:
        """The best cosine a question with this best BM25 score needs."""
        return self.cosine_scale * (self.threshold - bm25 / self.lexical_scale)

    def score(self, cosine: float, bm25: float) -> float:
        return cosine / self.cosine_scale + bm25 / self.lexical_scale


Gate = float | EvidenceGate


class ToolHit(BaseModel):
    name: str
    id: str
    score: float
    similarity: float | None = Field(None, description="Cosine of the query and the card.")
    required_by: str | None = Field(
        None,
        description="The tool whose parameter takes this tool's output (its description says "
        "so): placed right after that tool, whatever its own rank.",
    )
    named: bool = Field(
        False,
        description="The question names this tool (``best``, :mod:`toolrag.cards.names`): it "
        "ranks first, and neither the floor nor the gate drops it.",
    )


class ToolSyncReport(BaseModel):
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    embedded: int = 0
    requests_embedded: int = Field(
        0, description="LLM-written requests embedded (cards' synthetic)."
    )


def _schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("name", pa.string()),
            pa.field("hash", pa.string()),
            pa.field("text", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _unit_rows(table: pa.Table) -> np.ndarray:
    """The table's vectors as a matrix of unit rows."""
    flat = table.column("vector").combine_chunks().flatten().to_numpy()
    matrix = flat.reshape(table.num_rows, -1).astype(np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def _delete_ids(table: Any, ids: Sequence[str]) -> None:
    """Delete the rows of these ids, 500 to a statement."""
    for start in range(0, len(ids), 500):
        quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ids[start : start + 500])
        table.delete(f"id IN ({quoted})")


def _hubness(documents: np.ndarray, requests: np.ndarray, chunk: int = 512) -> np.ndarray:
    """Each document's mean cosine with its ``HUB_K`` nearest requests (rows are unit vectors),
    over at most ``HUB_SAMPLE`` requests taken evenly, in chunks of documents to bound memory."""
    if len(requests) > HUB_SAMPLE:
        requests = requests[np.linspace(0, len(requests) - 1, HUB_SAMPLE).astype(np.int64)]
    k = min(HUB_K, len(requests))
    out = np.zeros(len(documents), dtype=np.float32)
    for start in range(0, len(documents), chunk):
        sims = documents[start : start + chunk] @ requests.T
        out[start : start + chunk] = np.partition(sims, -k, axis=1)[:, -k:].mean(axis=1)
    return out


def _fts_covers(table: Any) -> bool:
    """Whether the full-text index exists and covers every row (a sync stopped between its
    embedding batches and the index rebuild leaves rows the index does not know)."""
    for config in table.list_indices():
        if list(config.columns) == ["text"]:
            return bool(table.index_stats(config.name).num_unindexed_rows == 0)
    return False


def rank_order(item: tuple[str, float]) -> tuple[float, str]:
    """How scored cards are ordered: highest score first, ties by id (so a step's best tool is
    the one the ranking would put first)."""
    return -item[1], item[0]


def _named_first(ranked: list[tuple[str, float]], named: set[str]) -> list[tuple[str, float]]:
    """The ranking with the tools the question names moved to the front, in their order."""
    return [r for r in ranked if r[0] in named] + [r for r in ranked if r[0] not in named]


class ToolIndex:
    """Persistent Tool RAG index over a LanceDB table (``index_dir/<table>.lance``)."""

    def __init__(
        self,
        index_dir: Path,
        embed: BaseEmbedding,
        table: str = "tools",
        stages: Stages | None = None,
        embed_batches: EmbedBatches | None = None,
        name_weight: float = 0.0,
    ) -> None:
        """``embed_batches``: how a sync embeds its documents (default: ``embed``, batch by
        batch; :func:`toolrag.models.ray_pool.ray_embed_batches` embeds on a Ray cluster).
        ``name_weight``: the weight of each card's name, embedded alone, in its ranking score
        (``NAME_WEIGHT`` is the measured one; 0, the default, embeds no names)."""
        self.index_dir = index_dir
        self.embed_batches = embed_batches or self._embed_batches
        # the search's replaceable stages (scoring, fusion, expansion, gate): see Stages
        self.stages = stages or Stages()
        self.embed = embed
        self.table_name = table
        self.cards: dict[str, ToolCard] = {}
        self._db: Any = None
        self._table: Any = None
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._matrix: np.ndarray = np.zeros((0, 0), dtype=np.float32)
        # the cards' LLM-written requests, one unit vector each, grouped by card: the group of
        # card row ``_req_rows[g]`` starts at ``_req_starts[g]``
        self._requests: Any = None
        # each active card's name embedded alone (``NAME_WEIGHT``), rows in ``_ids`` order
        self._names_table: Any = None
        self._name_matrix: np.ndarray = np.zeros((0, 0), dtype=np.float32)
        self._req_matrix: np.ndarray = np.zeros((0, 0), dtype=np.float32)
        self._req_starts: np.ndarray = np.zeros(0, dtype=np.int64)
        self._req_rows: np.ndarray = np.zeros(0, dtype=np.int64)
        # each card's hub penalty (HUB_WEIGHT x its mean cosine with its nearest requests),
        # zero while the pool has no written requests
        self._penalty: np.ndarray = np.zeros(0, dtype=np.float32)
        # learned from the written requests when there are enough of them (None: identity)
        self.adapter: QueryAdapter | None = None
        # the text searched for a question (a QueryTranslator: a question written outside the
        # English alphabet is searched in English); None searches every question as it is
        self.translator: Callable[[str], str] | None = None
        # each card's prerequisites, read from its parameter descriptions
        # (:mod:`toolrag.retrieval.prerequisites`); ``best`` places them after the card when on
        self.requires: Requirements = {}
        self.place_requirements = True
        # the weight of a card's name, embedded alone, in its ranking score (0: documents only;
        # a sync embeds the names only when it is above 0)
        self.name_weight = name_weight
        # the ids of the active cards a question names (``best`` ranks them first)
        self._named: NameFinder[str] = NameFinder({})

    def with_stages(self, **changes: Any) -> ToolIndex:
        """This index (the same cards, vectors and tables, nothing copied) searching with the
        given stages replaced: ``index.with_stages(fuse=my_fusion).retrieve(q)``."""
        view = copy.copy(self)
        view.stages = dataclasses.replace(self.stages, **changes)
        return view

    # --- storage -------------------------------------------------------------------------------
    def _embed_batches(self, texts: Sequence[str], batch_size: int) -> Iterator[list[list[float]]]:
        for start in range(0, len(texts), batch_size):
            yield self.embed.get_text_embedding_batch(list(texts[start : start + batch_size]))

    def _open(self) -> Any:
        if self._db is None:
            self.index_dir.mkdir(parents=True, exist_ok=True)
            self._db = lancedb.connect(str(self.index_dir))
        if self._table is None:
            try:
                self._table = self._db.open_table(self.table_name)
            except (ValueError, FileNotFoundError, RuntimeError):
                return None
        return self._table

    def sync(self, cards: Sequence[ToolCard], batch_size: int = 256) -> ToolSyncReport:
        """Make the index hold exactly ``cards``; only new or changed cards are embedded.

        Processes that sync one index folder at once (a batch's Ray actors starting together)
        take turns: the second finds the first one's rows and embeds nothing."""
        with writer_lock(self.index_dir, self.table_name):
            # read what another process may have written
            self._table = self._requests = self._names_table = None
            return self._sync(cards, batch_size)

    def _sync(self, cards: Sequence[ToolCard], batch_size: int) -> ToolSyncReport:
        report = ToolSyncReport()
        wanted = {c.id: c for c in cards}
        table = self._open()
        stored: dict[str, str] = {}
        if table is not None:
            rows = table.to_arrow().select(["id", "hash"]).to_pylist()
            stored = {r["id"]: r["hash"] for r in rows}
        gone = [i for i in stored if i not in wanted]
        hashes = {i: c.content_hash() for i, c in wanted.items()}
        todo = [c for i, c in wanted.items() if stored.get(i) != hashes[i]]
        report.removed = len(gone)
        report.updated = sum(1 for c in todo if c.id in stored)
        report.added = len(todo) - report.updated
        report.unchanged = len(wanted) - len(todo)
        if table is not None and (gone or todo):
            _delete_ids(table, gone + [c.id for c in todo if c.id in stored])
        # Shortest documents first: each embedding batch pads to its longest text, so batches
        # of similar lengths embed about 1.5x faster than the cards' own order.
        todo.sort(key=lambda c: len(c.document()))
        all_docs = [c.document() for c in todo]
        embedded = self.embed_batches(all_docs, batch_size)
        for start, vectors in zip(range(0, len(todo), batch_size), embedded, strict=True):
            batch = todo[start : start + batch_size]
            docs = all_docs[start : start + batch_size]
            rows = [
                {"id": c.id, "name": c.name, "hash": hashes[c.id], "text": d, "vector": v}
                for c, d, v in zip(batch, docs, vectors, strict=True)
            ]
            if table is None:
                table = self._db.create_table(self.table_name, schema=_schema(len(vectors[0])))
                self._table = table
            table.add(rows)
            report.embedded += len(rows)
        if table is not None and (gone or todo or not _fts_covers(table)):
            table.create_index("text", config=FTS(), replace=True)
        report.requests_embedded = self._sync_requests(wanted, batch_size)
        if self.name_weight:
            self._sync_names(wanted, batch_size)
        self.cards = wanted
        self.requires = self._requirements(hashes)
        self._load_matrix()
        return report

    def _requests_table(self) -> Any:
        if self._requests is None:
            try:
                self._requests = self._db.open_table(f"{self.table_name}_requests")
            except (ValueError, FileNotFoundError, RuntimeError):
                return None
        return self._requests

    def _sync_requests(self, wanted: dict[str, ToolCard], batch_size: int) -> int:
        """Keep one row per LLM-written request of each card (``ToolCard.synthetic``), stamped
        with ``ToolCard.requests_hash``: only new or changed requests are embedded."""
        want = {i: c.requests_hash() for i, c in wanted.items() if c.synthetic}
        self._requests, count = self._sync_side_table(
            self._requests_table(),
            "requests",
            wanted,
            want,
            lambda i: wanted[i].synthetic,
            batch_size,
        )
        return count

    def _sync_side_table(
        self,
        table: Any,
        suffix: str,
        wanted: dict[str, ToolCard],
        want: dict[str, str],
        texts_of: Callable[[str], Sequence[str]],
        batch_size: int,
    ) -> tuple[Any, int]:
        """Make ``<table>_<suffix>`` hold, for each card id of ``want``, a row per text of
        ``texts_of(id)`` stamped with ``want[id]``: rows of a changed or gone stamp are deleted
        and only the new ones embedded. Returns the table (created on its first rows) and the
        number of texts embedded."""
        stored: dict[str, str] = {}
        if table is not None:
            stored = {
                r["id"]: r["hash"] for r in table.to_arrow().select(["id", "hash"]).to_pylist()
            }
            _delete_ids(table, [i for i, h in stored.items() if want.get(i) != h])
        rows = [(i, h, t) for i, h in want.items() if stored.get(i) != h for t in texts_of(i)]
        embedded = self.embed_batches([t for _, _, t in rows], batch_size)
        for start, vectors in zip(range(0, len(rows), batch_size), embedded, strict=True):
            data = [
                {"id": i, "name": wanted[i].name, "hash": h, "text": t, "vector": v}
                for (i, h, t), v in zip(rows[start : start + batch_size], vectors, strict=True)
            ]
            if table is None:
                table = self._db.create_table(
                    f"{self.table_name}_{suffix}", schema=_schema(len(vectors[0]))
                )
            table.add(data)
        return table, len(rows)

    def _open_names(self) -> Any:
        if self._names_table is None:
            try:
                self._names_table = self._db.open_table(f"{self.table_name}_names")
            except (ValueError, FileNotFoundError, RuntimeError):
                return None
        return self._names_table

    def _sync_names(self, wanted: dict[str, ToolCard], batch_size: int) -> int:
        """Keep one row per card with its name in words embedded alone (``NAME_WEIGHT``),
        stamped with the name's hash: only new or renamed cards are embedded."""
        texts = {i: split_name(c.name) or c.name for i, c in wanted.items()}
        want = {
            i: hashlib.sha256(f"{NAME_FORMAT}\n{t}".encode()).hexdigest()[:16]
            for i, t in texts.items()
        }
        self._names_table, count = self._sync_side_table(
            self._open_names(), "names", wanted, want, lambda i: [texts[i]], batch_size
        )
        return count

    def _load_names(self) -> None:
        """The active cards' name vectors in row order (a card without one: its document's)."""
        self._name_matrix = self._matrix.copy()
        table = self._open_names() if self._db is not None else None
        if table is None or not len(self._ids):
            return
        data = table.to_arrow().select(["id", "vector"])
        rows = np.array([self._row.get(i, -1) for i in data.column("id").to_pylist()])
        keep = np.flatnonzero(rows >= 0)
        if len(keep):
            self._name_matrix[rows[keep]] = _unit_rows(data)[keep]

    def _load_requests(self, card_hashes: Sequence[str]) -> None:
        """The active cards' request vectors, sorted by card row into contiguous groups, their
        hub penalties and the query adapter (``card_hashes``: the active cards' content hashes,
        in row order, for the adapter's key)."""
        self._req_matrix = np.zeros((0, 0), dtype=np.float32)
        self._req_starts = self._req_rows = np.zeros(0, dtype=np.int64)
        self._penalty = np.zeros(len(self._ids), dtype=np.float32)
        self.adapter = None
        table = self._requests_table() if self._db is not None else None
        if table is None:
            return
        data = table.to_arrow().select(["id", "hash", "vector"])
        owner = np.array(
            [self._row.get(i, -1) for i in data.column("id").to_pylist()], dtype=np.int64
        )
        keep = np.flatnonzero(owner >= 0)
        if not len(keep):
            return
        order = keep[np.argsort(owner[keep], kind="stable")]
        owners = owner[order]
        self._req_matrix = _unit_rows(data)[order]
        self._req_starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
        self._req_rows = owners[self._req_starts]
        key = adapter_key(
            zip(self._ids, card_hashes, strict=True),
            zip(
                data.column("id").take(keep).to_pylist(),
                data.column("hash").take(keep).to_pylist(),
                strict=True,
            ),
        )
        self._penalty = self._hub_penalty(key)
        path = self.index_dir / f"{self.table_name}_adapter.npz"
        self.adapter = QueryAdapter.load(path, key)
        if self.adapter is None:
            self.adapter = fit_query_adapter(self._matrix, self._req_matrix, owners, key)
            if self.adapter is not None:
                # a read-only index keeps the adapter in memory only
                with contextlib.suppress(OSError):
                    self.adapter.save(path)

    def _hub_penalty(self, data_key: str) -> np.ndarray:
        """The cards' hub penalties, read from ``<table>_hubness.npz`` when it was computed from
        the same cards (in the same row order) and requests (``data_key``) and settings, else
        computed and saved: a 100k-card pool reopens without its documents x requests product."""
        key = f"{HUB_FORMAT}:{HUB_K}:{HUB_WEIGHT}:{HUB_SAMPLE}:{data_key}"
        path = self.index_dir / f"{self.table_name}_hubness.npz"
        with contextlib.suppress(OSError, KeyError, ValueError), np.load(path) as saved:
            if str(saved["key"]) == key and saved["ids"].tolist() == self._ids:
                return np.asarray(saved["penalty"], dtype=np.float32)
        penalty = (HUB_WEIGHT * _hubness(self._matrix, self._req_matrix)).astype(np.float32)
        tmp = path.with_name(path.name + ".tmp.npz")
        with contextlib.suppress(OSError):  # a read-only index keeps it in memory only
            np.savez(tmp, key=np.array(key), ids=np.array(self._ids), penalty=penalty)
            tmp.replace(path)
        return penalty

    def _requirements(self, hashes: dict[str, str]) -> Requirements:
        """The cards' prerequisites (:mod:`toolrag.retrieval.prerequisites`), read from
        ``<table>_requirements.json`` when it was made from the same cards (``hashes``: id ->
        content hash) by the same rules, else found and saved: reading every parameter
        description of a 100k-card pool takes seconds."""
        digest = hashlib.sha256(REQUIREMENTS_FORMAT.encode())
        for tid in sorted(hashes):
            digest.update(f"{tid}\t{hashes[tid]}\n".encode())
        key = digest.hexdigest()
        path = self.index_dir / f"{self.table_name}_requirements.json"
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            saved = json.loads(path.read_text())
            if saved["key"] == key:
                return {t: [tuple(g) for g in groups] for t, groups in saved["requires"].items()}
        found = requirements(list(self.cards.values()))
        tmp = path.with_name(path.name + ".tmp")
        with contextlib.suppress(OSError):  # a read-only index keeps them in memory only
            tmp.write_text(json.dumps({"key": key, "requires": found}))
            tmp.replace(path)
        return found

    def _load_matrix(self) -> None:
        table = self._open()
        if table is None:
            self._ids, self._matrix = [], np.zeros((0, 0), dtype=np.float32)
            self._name_matrix = self._matrix
            self._row = {}
            self._named = NameFinder({})
            self._penalty = np.zeros(0, dtype=np.float32)
            self.adapter = None
            return
        data = table.to_arrow().select(["id", "hash", "vector"])
        ids = data.column("id").to_pylist()
        keep = [n for n, i in enumerate(ids) if i in self.cards and not self.cards[i].deprecated_by]
        self._ids = [ids[n] for n in keep]
        self._row = {tid: n for n, tid in enumerate(self._ids)}
        self._named = NameFinder({self.cards[tid].name: tid for tid in self._ids})
        self._matrix = _unit_rows(data)[keep]
        self._load_names()
        hashes = data.column("hash").to_pylist()
        self._load_requests([hashes[n] for n in keep])

    def __len__(self) -> int:
        return len(self._ids)

    def _with_requests(self) -> set[str]:
        """The ids of the active cards whose written requests the index holds."""
        return {self._ids[r] for r in self._req_rows}

    def fingerprint(self) -> str:
        """A digest of what the index searches: its active cards (id, document version and
        written requests, in row order) and the weight of their names. Equal fingerprints of
        one embedding model and one toolrag search find the same tools."""
        digest = hashlib.sha256(f"{self.name_weight}\n".encode())
        held = self._with_requests()
        for tid in self._ids:
            card = self.cards[tid]
            requests = card.requests_hash() if tid in held else "-"
            digest.update(f"{tid}\t{card.content_hash()}\t{requests}\n".encode())
        return digest.hexdigest()[:24]

    def written_requests(self) -> list[tuple[str, str]]:
        """(card id, request text) for every LLM-written request the index holds for an active
        card (``ToolCard.synthetic``), in card row order."""
        held = self._with_requests()
        return [
            (tid, text) for tid in self._ids if tid in held for text in self.cards[tid].synthetic
        ]

    def _request_span(self, card_id: str) -> tuple[int, int] | None:
        """The rows [start, end) of ``_req_matrix`` holding the card's written requests (None:
        it has none, or is not active)."""
        group = np.flatnonzero(self._req_rows == self._row.get(card_id, -1))
        if not len(group):
            return None
        g = int(group[0])
        end = self._req_starts[g + 1] if g + 1 < len(self._req_starts) else len(self._req_matrix)
        return int(self._req_starts[g]), int(end)

    @contextlib.contextmanager
    def requests_withheld(self, card_id: str) -> Iterator[None]:
        """Within the block, the card's written requests match no question (their cosine counts
        as 0 in its blend), so it is found by its document alone, at (document) / (1 +
        REQUEST_WEIGHT): a conservative stand-in for a question none of its requests was
        written from. ``toolrag eval gate --requests`` searches each written request this way.
        Not for concurrent searches: the request vectors are zeroed in place and restored."""
        span = self._request_span(card_id)
        if span is None:
            yield
            return
        start, end = span
        saved = self._req_matrix[start:end].copy()
        self._req_matrix[start:end] = 0.0
        try:
            yield
        finally:
            self._req_matrix[start:end] = saved

    def bm25_weight(self, steps: bool = False) -> float:
        """The weight of the relative BM25 score in ``best``: ``BM25_WEIGHT`` for a request of
        one step; for one that splits into ``steps``, ``BM25_WEIGHT_STEPS`` when no active card
        has written requests, ``BM25_WEIGHT_WITH_REQUESTS`` when every one has, and in between
        in proportion to the share that has."""
        if not steps:
            return BM25_WEIGHT
        share = len(self._req_rows) / len(self._ids) if self._ids else 0.0
        return BM25_WEIGHT_STEPS + share * (BM25_WEIGHT_WITH_REQUESTS - BM25_WEIGHT_STEPS)

    # --- retrieval -----------------------------------------------------------------------------
    def search_text(self, query: str) -> str:
        """The text searched for ``query``: its translation when the ``translator`` makes one
        (a question not in English), else the query itself. Cut to ``MAX_QUERY_CHARS``
        characters first."""
        query = bounded(query, MAX_QUERY_CHARS)
        if self.translator is None:
            return query
        return self.translator(query) or query

    def _top(self, ranked: np.ndarray, sims: np.ndarray, pool: int) -> list[tuple[str, float]]:
        """The ``pool`` cards of highest ranking score, with their cosines."""
        top = np.argpartition(-ranked, min(pool, len(ranked) - 1))[:pool]
        top = top[np.argsort(-ranked[top])]
        return [(self._ids[i], float(sims[i])) for i in top]

    def _dense(
        self, query: str, pool: int, embedding: Sequence[float] | None = None
    ) -> list[tuple[str, float]]:
        if not self._ids:
            return []
        return self._top(*self.stages.dense(self, query, embedding), pool)

    def _fused(
        self, query: str, pool: int, embedding: Sequence[float] | None = None
    ) -> tuple[dict[str, float], dict[str, float]]:
        # BM25 runs in LanceDB's native code on another thread while the query is embedded
        # (both release the GIL): on two cores the full-text search costs no extra latency.
        sparse = _POOL.submit(self.stages.lexical, self, query, pool)
        dense = self._dense(query, pool, embedding)
        sims = dict(dense)
        rankings = ([tid for tid, _ in ranking] for ranking in (dense, sparse.result()))
        return reciprocal_rank_fusion(rankings), sims

    def candidates(
        self,
        query: str,
        pool: int,
        embedding: Sequence[float] | None = None,
        include: Sequence[str] = (),
    ) -> tuple[np.ndarray, dict[str, float], list[tuple[str, float]]]:
        """Candidate scoring, both sides of a search: every active card's ranking score
        (``stages.dense``), the
        candidates with their cosines (the ``pool`` best by ranking score, then BM25's other
        matches, then the cards ``include`` names) and BM25's matches with their scores."""
        sparse = _POOL.submit(self.stages.lexical, self, query, pool)
        ranked, cosines = self.stages.dense(self, query, embedding)
        sims = dict(self._top(ranked, cosines, pool))
        lexical = sparse.result()
        for tid in [*(t for t, _ in lexical), *include]:
            sims.setdefault(tid, float(cosines[self._row[tid]]))
        return ranked, sims, lexical

    def retrieve(
        self,
        query: str,
        k: int = 5,
        strategy: Strategy = "best",
        floor: float | None = None,
        embedding: Sequence[float] | None = None,
        translate: bool = True,
        gate: Gate | None = None,
    ) -> list[ToolHit]:
        """The top-k tools for ``query``. ``floor`` (a cosine) drops each tool below it, so a
        question no tool fits gets an empty list. ``gate`` (a cosine) keeps or drops the k
        together: when no tool's cosine reaches it the answer is "no tool fits" (an empty
        list), else the k are returned whatever their own cosines, so the right tool ranked
        below a closer one is not cut. An :class:`EvidenceGate` does the same with the
        question's best BM25 score counted beside the cosine. ``embedding``: the query's
        vector when the caller has it already (a LlamaIndex retriever embeds before it
        queries the store).
        With a ``translator``, the question is searched as it returns it (``translate=False``:
        as it is), and a translated question is embedded again. ``best`` ranks first each tool
        the question names (by an identifier-shaped or a quoted name, :mod:`toolrag.cards.names`:
        "look it up with search_web_tool"), and neither the floor nor the gate drops it.
        Up to ``CANDIDATES`` deep, the top k are the first k of any deeper search.
        A query is cut to its first ``MAX_QUERY_CHARS`` characters (:mod:`toolrag.text`): a
        longer one is never embedded, translated or split whole."""
        if len(query) > MAX_QUERY_CHARS:
            log.warning("query of %d characters cut to %d", len(query), MAX_QUERY_CHARS)
            query = bounded(query, MAX_QUERY_CHARS)
        asked = query
        if translate:
            searched = self.search_text(query)
            if searched != query:
                query, embedding = searched, None
        pool = max(k, CANDIDATES)
        st = self.stages
        sims: dict[str, float]
        named: list[str] = []  # the cards ``best`` found named in the question
        needed: dict[str, str] = {}  # a prerequisite placed by ``best`` -> the tool needing it
        if strategy == "dense":
            ranked = self._dense(query, pool, embedding)
            sims = dict(ranked)
        elif strategy == "bm25":
            ranked, sims = st.lexical(self, query, pool), {}
        elif strategy == "hybrid":
            scores, sims = self._fused(query, pool, embedding)
            ranked = sorted(scores.items(), key=rank_order)
        else:
            parts, marked = st.split(query)
            weight = self.bm25_weight(steps=bool(parts))
            named = self._named(asked if asked == query else f"{asked}\n{query}")
            scores, sims = st.fuse(self, query, pool, weight, embedding, named)
            steps = [st.fuse(self, part, pool, weight) for part in parts]
            if marked:
                # A request that marks its steps ("First, ... Also, ...") asks for several
                # things: each card scores the best of the whole request and of each step, so
                # a tool that fits one step well ranks as high as one that fits the whole.
                for part_scores, part_sims in steps:
                    for tid, score in part_scores.items():
                        scores[tid] = max(scores.get(tid, score), score)
                        sims[tid] = max(sims.get(tid, -1.0), part_sims.get(tid, -1.0))
            ranked = st.cover(self, sorted(scores.items(), key=rank_order), sims, steps)
            if named:
                ranked = _named_first(ranked, set(named))
            if self.place_requirements and self.requires:
                ranked, needed = st.prerequisites(self, ranked, scores)
        if isinstance(gate, EvidenceGate):  # the cosine this question's words leave it to reach
            gate = gate.cosine_bar(self.best_bm25(query))
        return st.gate(self, ranked, sims, named, needed, k, floor, gate)

    def best_bm25(self, query: str) -> float:
        """The query's best BM25 score over the pool's cards (0.0 when no word matches)."""
        return max((s for _, s in self.stages.lexical(self, query, 1)), default=0.0)


def dense_scores(
    index: ToolIndex, query: str, embedding: Sequence[float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For every active card, in ``index._ids`` order: its ranking score and its cosine with
    the query (or with its given ``embedding``). A card with LLM-written requests blends in
    its nearest request: (document + REQUEST_WEIGHT * request) / (1 + REQUEST_WEIGHT). The
    ranking score uses the adapted query for the document, blends in the card's name embedded
    alone (w: ``index.name_weight``, ``NAME_WEIGHT`` by default), (document + w * name
    [+ REQUEST_WEIGHT * request]) / (1 + w [+ REQUEST_WEIGHT]), and subtracts the hub
    penalty. The cosine, which floors and gates read, leaves the name out: a short name lifts
    the cosine of questions no tool fits too."""
    if embedding is None:
        embedding = index.embed.get_query_embedding(query)
    q = np.asarray(embedding, dtype=np.float32)
    q = q / max(float(np.linalg.norm(q)), 1e-12)
    sims = index._matrix @ q
    ranked = sims.copy() if index.adapter is None else index._matrix @ index.adapter.apply(q)
    total = np.ones(len(sims), dtype=np.float32)
    if index.name_weight and index._name_matrix.shape == index._matrix.shape:
        ranked += index.name_weight * (index._name_matrix @ q)
        total += index.name_weight
    if len(index._req_rows):
        nearest = REQUEST_WEIGHT * np.maximum.reduceat(index._req_matrix @ q, index._req_starts)
        rows = index._req_rows
        sims[rows] = (sims[rows] + nearest) / (1 + REQUEST_WEIGHT)
        ranked[rows] += nearest
        total[rows] += REQUEST_WEIGHT
    return ranked / total - index._penalty, sims


def bm25_scores(index: ToolIndex, query: str, pool: int) -> list[tuple[str, float]]:
    table = index._open()
    terms = re.findall(r"[A-Za-z0-9]+", query)
    if table is None or not terms:
        return []
    try:
        found = (
            table.search(" ".join(terms), query_type="fts", fts_columns="text")
            .select(["id", "_score"])
            .limit(pool * 2)
            .to_arrow()  # columns, not a dict per row: about 2 ms less at 10k tools
        )
    except (ValueError, RuntimeError):
        return []
    ids = found.column("id").to_pylist()
    scores = found.column("_score").to_pylist()  # selected above, so always there
    return [(i, float(s)) for i, s in zip(ids, scores, strict=True) if i in index._row][:pool]


def blend(
    index: ToolIndex,
    query: str,
    pool: int,
    weight: float,
    embedding: Sequence[float] | None = None,
    include: Sequence[str] = (),
) -> tuple[dict[str, float], dict[str, float]]:
    """Score-level fusion: every card's cosine plus ``weight`` (:meth:`ToolIndex.bm25_weight`) times
    its BM25 score relative to the query's best BM25 match.

    Unlike reciprocal rank, this keeps how far apart the candidates are: a card that both
    rankings like by a wide margin stays ahead of one that wins a near-tie in one of them.
    The cards ``include`` lists are scored too, wherever they rank.
    """
    if not index._ids:
        return {}, {}
    ranked, sims, lexical = index.candidates(query, pool, embedding, include)
    scores = {tid: float(ranked[index._row[tid]]) for tid in sims}
    best = max((s for _, s in lexical), default=0.0)
    if best > 0:
        for tid, s in lexical:
            scores[tid] += weight * s / best
    return scores, sims


def cover_steps(
    index: ToolIndex,
    ranked: list[tuple[str, float]],
    sims: dict[str, float],
    steps: list[tuple[dict[str, float], dict[str, float]]],
) -> list[tuple[str, float]]:
    """A multi-step request keeps the whole request's ranking, and each step's own best
    tool (``steps``: each step's scores and cosines) that is not already in the first
    (steps + 1) places takes the last of them, so every step's tool is retrieved while the
    whole request still leads. (Adding the steps' scores to the whole request's instead did
    not cover them: on BFCL's multi-tool queries it scored R@5 0.737, below no splitting at
    all, 0.742; this scores 0.788, 0.818 with the sentence steps of
    :func:`toolrag.retrieval.steps.sub_queries`, and leaves single-tool queries as they were.)

    A step's tool is placed only when the whole request's search found it too, among its
    candidates (``ranked``): a clause of context split off as a step ("and return a week
    later", "id is 1234") otherwise brings a tool the request does not need. That found
    one more single-call question on BFCL, none lost, multi-tool unchanged, and on NESTFUL
    raised R@5 a little in both pools (README, Benchmarks)."""
    candidates = {t for t, _ in ranked}
    tops: list[tuple[str, float]] = []
    for part_scores, part_sims in steps:
        if not part_scores:
            continue
        top = min(part_scores.items(), key=rank_order)
        if top[0] not in candidates:
            continue
        sims[top[0]] = max(sims.get(top[0], -1.0), part_sims.get(top[0], -1.0))
        if top[0] not in (t for t, _ in tops):
            tops.append(top)
    if not tops:
        return ranked
    window = len(tops) + 1
    placed = {t for t, _ in ranked[:window]}
    missing = [(t, s) for t, s in tops if t not in placed]
    head = ranked[: window - len(missing)] + missing
    taken = {t for t, _ in head}
    return head + [(t, s) for t, s in ranked if t not in taken]


def place_prerequisites(
    index: ToolIndex, ranked: list[tuple[str, float]], scores: dict[str, float]
) -> tuple[list[tuple[str, float]], dict[str, str]]:
    """The ranking with each tool followed by the prerequisites it lacks: for each of its
    requirements (:mod:`toolrag.retrieval.prerequisites`) that no tool placed before provides, the
    alternative the question scores highest (else the first named), and in turn that
    one's, ``REQUIREMENT_DEPTH`` deep. A prerequisite without a score of its own carries
    the score of the tool that needs it. Also returns prerequisite -> the tool needing it.
    """
    out: list[tuple[str, float]] = []
    placed: set[str] = set()
    needed: dict[str, str] = {}

    def place(tid: str, score: float, depth: int) -> None:
        for group in index.requires.get(tid, ()):
            options = [g for g in group if g in index._row]
            if not options or any(g in placed for g in options):
                continue
            pick = max(options, key=lambda g: scores.get(g, float("-inf")))
            out.append((pick, scores.get(pick, score)))
            placed.add(pick)
            needed[pick] = tid
            if depth < REQUIREMENT_DEPTH:
                place(pick, scores.get(pick, score), depth + 1)

    for tid, score in ranked:
        if tid not in placed:
            out.append((tid, score))
            placed.add(tid)
            place(tid, score, 1)
    return out, needed


def admit(
    index: ToolIndex,
    ranked: list[tuple[str, float]],
    sims: dict[str, float],
    named: Sequence[str],
    needed: dict[str, str],
    k: int,
    floor: float | None,
    gate: float | None,
) -> list[ToolHit]:
    """The gate: the first ``k`` of ``ranked`` as hits, each tool below the cosine ``floor``
    dropped, and none at all when no hit reaches the cosine ``gate`` ("no tool fits"). A tool
    the question names, and a prerequisite placed with an admitted tool that needs it
    (``needed``: prerequisite -> that tool), pass whatever their own cosines."""
    hits = []
    admitted: set[str] = set()
    for tid, score in ranked:
        sim = sims.get(tid)
        # a prerequisite comes with the tool that needs it, and a named tool comes because
        # the question names it, whatever their own cosines
        with_needer = needed.get(tid) in admitted
        kept = with_needer or tid in named
        if not kept and floor is not None and (sim is None or sim < floor):
            continue
        admitted.add(tid)
        hits.append(
            ToolHit(
                name=index.cards[tid].name,
                id=tid,
                score=round(score, 6),
                similarity=None if sim is None else round(sim, 4),
                required_by=index.cards[needed[tid]].name if with_needer else None,
                named=tid in named,
            )
        )
        if len(hits) == k:
            break
    if gate is not None and not any(h.id in named or sims.get(h.id, -2.0) >= gate for h in hits):
        return []  # no tool fits: none of the k reaches the gate, and none is named
    return hits


@dataclass(frozen=True)
class Stages:
    """The stages of a ``best`` search, each a function of the index that a caller or an
    ablation replaces through ``ToolIndex(stages=...)`` or :meth:`ToolIndex.with_stages`.

    - candidate scoring: ``dense`` (every active card's ranking score and cosine for a query)
      and ``lexical`` (BM25's best matches with their scores); ``dense`` also serves the
      ``dense`` and ``hybrid`` strategies, ``lexical`` ``bm25`` and ``hybrid``;
    - fusion: ``fuse`` (a query's candidates and their fused scores, from both sides);
    - splitting: ``split`` (of the request alone: its steps, and whether it marks them with
      sequence words, :func:`toolrag.retrieval.steps.split_steps`);
    - expansion: ``cover`` (each step of a multi-step request gets its best tool) and
      ``prerequisites`` (each tool followed by the tools it needs first);
    - the gate: ``gate`` (the first k as hits, with the floor and the gate applied).
    """

    dense: Callable[[ToolIndex, str, Sequence[float] | None], tuple[np.ndarray, np.ndarray]] = (
        dense_scores
    )
    lexical: Callable[[ToolIndex, str, int], list[tuple[str, float]]] = bm25_scores
    fuse: Callable[..., tuple[dict[str, float], dict[str, float]]] = blend
    split: Callable[[str], tuple[list[str], bool]] = split_steps
    cover: Callable[
        [
            ToolIndex,
            list[tuple[str, float]],
            dict[str, float],
            list[tuple[dict[str, float], dict[str, float]]],
        ],
        list[tuple[str, float]],
    ] = cover_steps
    prerequisites: Callable[
        [ToolIndex, list[tuple[str, float]], dict[str, float]],
        tuple[list[tuple[str, float]], dict[str, str]],
    ] = place_prerequisites
    gate: Callable[..., list[ToolHit]] = admit
