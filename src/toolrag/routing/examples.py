"""The few-shot example store: questions with the tool calls that answer them, in SQLite with
their embeddings, chosen per question by cosine similarity.

Each example has two vectors: its question's, and its question's *shape*, the question with its
ids and proper names masked (:func:`toolrag.guard.grounding.names.masked`: "Which invoices of
Name are unpaid?"). Most examples are chosen by shape, so a question gets examples of the
same kind of request (the tool and the form of its arguments) rather than every example that
names the same customer; a few are chosen by the whole question, and show the calls made for
the records it names (a customer's code for its name).

It starts from the tool cards' example queries and ``data/questions/examples.jsonl``, and grows
with confirmed routing decisions (``toolrag examples promote``). Any example whose embedding has
a cosine of 0.9 or more with a registered test question is refused, so the evaluation split
never leaks into the prompts.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import BaseModel, Field

from toolrag.cards.card import ToolCard
from toolrag.errors import InputError
from toolrag.guard.grounding.names import masked
from toolrag.routing.models import ToolCallSpec

LEAKAGE_COSINE = 0.9

_SCHEMA = """
CREATE TABLE IF NOT EXISTS examples (
  id TEXT PRIMARY KEY, query TEXT NOT NULL, calls TEXT NOT NULL, source TEXT NOT NULL,
  vector BLOB NOT NULL, shape BLOB
);
CREATE TABLE IF NOT EXISTS test_questions (
  id TEXT PRIMARY KEY, query TEXT NOT NULL, vector BLOB NOT NULL
);
"""


class LeakageError(InputError):
    """An example too close to a registered test question."""


class Example(BaseModel):
    query: str
    calls: list[ToolCallSpec] = Field(default_factory=list)
    source: str = Field("manual", description="card | questions | written | promoted | manual")

    @property
    def id(self) -> str:
        body = json.dumps(
            [self.query.strip().lower(), [c.model_dump() for c in self.calls]], sort_keys=True
        )
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    @property
    def tools(self) -> set[str]:
        return {c.tool for c in self.calls}


def _unit(vector: Sequence[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return v / max(float(np.linalg.norm(v)), 1e-12)


def _stack(blobs: Sequence[bytes]) -> np.ndarray:
    """Stored float32 vectors as the rows of a matrix (0 x 0 when there are none)."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs])


def question_example(query: str, tools: Sequence[str], arguments: dict[str, Any]) -> Example:
    """A question with known tools as a few-shot example: one call per expected tool, with the
    expected arguments when the question needs a single tool."""
    return Example(
        query=query,
        calls=[ToolCallSpec(tool=t, arguments=arguments if len(tools) == 1 else {}) for t in tools],
        source="questions",
    )


class ExampleStore:
    """Examples and test questions with their unit vectors (``path`` is a SQLite file)."""

    def __init__(self, path: Path, embed: BaseEmbedding) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.embed = embed
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._conn.executescript(_SCHEMA)
        columns = {r[1] for r in self._conn.execute("PRAGMA table_info(examples)")}
        if "shape" not in columns:  # a store written before shapes were kept
            with self._conn:
                self._conn.execute("ALTER TABLE examples ADD COLUMN shape BLOB")
        self._add_missing_shapes()
        self._examples: list[Example] = []
        self._ids: list[str] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._shapes = np.zeros((0, 0), dtype=np.float32)
        self._tests = np.zeros((0, 0), dtype=np.float32)
        self._test_ids: list[str] = []
        self._reload()

    def _shape_vectors(self, queries: Sequence[str]) -> list[np.ndarray]:
        return [_unit(v) for v in self.embed.get_text_embedding_batch([masked(q) for q in queries])]

    def _add_missing_shapes(self) -> None:
        """Shape vectors for the examples of a store written before shapes were kept (new
        examples get theirs in :meth:`add_many`)."""
        missing = self._conn.execute(
            "SELECT id, query FROM examples WHERE shape IS NULL"
        ).fetchall()
        if missing:
            vectors = self._shape_vectors([q for _, q in missing])
            with self._lock, self._conn:
                self._conn.executemany(
                    "UPDATE examples SET shape = ? WHERE id = ?",
                    [(v.tobytes(), i) for (i, _), v in zip(missing, vectors, strict=True)],
                )

    def _reload(self) -> None:
        rows = self._conn.execute(
            "SELECT id, query, calls, source, vector, shape FROM examples"
        ).fetchall()
        self._ids = [r[0] for r in rows]
        self._examples = [Example(query=r[1], calls=json.loads(r[2]), source=r[3]) for r in rows]
        self._matrix = _stack([r[4] for r in rows])
        self._shapes = _stack([r[5] for r in rows])
        tests = self._conn.execute("SELECT id, vector FROM test_questions").fetchall()
        self._test_ids = [t[0] for t in tests]
        self._tests = _stack([t[1] for t in tests])

    def __len__(self) -> int:
        return len(self._examples)

    # --- leakage guard -------------------------------------------------------------------------
    def register_test_questions(self, questions: Iterable[tuple[str, str]]) -> int:
        """Register ``(id, query)`` pairs no example may come near; returns how many are new."""
        known = set(self._test_ids)
        todo = [(i, q) for i, q in questions if i not in known]
        if todo:
            vectors = self.embed.get_text_embedding_batch([q for _, q in todo])
            with self._lock, self._conn:
                self._conn.executemany(
                    "INSERT OR IGNORE INTO test_questions VALUES (?, ?, ?)",
                    [(i, q, _unit(v).tobytes()) for (i, q), v in zip(todo, vectors, strict=True)],
                )
            self._reload()
        return len(todo)

    def closest_test_question(self, vector: np.ndarray) -> tuple[str, float] | None:
        if not self._test_ids:
            return None
        sims = self._tests @ vector
        best = int(np.argmax(sims))
        return self._test_ids[best], float(sims[best])

    # --- writing -------------------------------------------------------------------------------
    def add_many(self, examples: Sequence[Example], strict: bool = True) -> tuple[int, list[str]]:
        """Add examples (an existing one is left as is). A leaking example raises
        :class:`LeakageError` when ``strict``, else it is skipped and reported.
        Returns (added, refusals)."""
        new = [e for e in examples if e.id not in set(self._ids)]
        unique = list({e.id: e for e in new}.values())
        if not unique:
            return 0, []
        vectors = [_unit(v) for v in self.embed.get_text_embedding_batch([e.query for e in unique])]
        shapes = self._shape_vectors([e.query for e in unique])
        rows, refusals = [], []
        for example, vector, shape in zip(unique, vectors, shapes, strict=True):
            close = self.closest_test_question(vector)
            if close is not None and close[1] >= LEAKAGE_COSINE:
                message = (
                    f"Refused example {example.query!r}: cosine {close[1]:.3f} with test "
                    f"question {close[0]!r} (limit {LEAKAGE_COSINE})."
                )
                if strict:
                    raise LeakageError(
                        message, hint="Rephrase it or use another question as the example."
                    )
                refusals.append(message)
                continue
            calls = json.dumps([c.model_dump() for c in example.calls])
            blobs = (vector.tobytes(), shape.tobytes())
            rows.append((example.id, example.query, calls, example.source, *blobs))
        with self._lock, self._conn:
            self._conn.executemany("INSERT OR IGNORE INTO examples VALUES (?, ?, ?, ?, ?, ?)", rows)
        self._reload()
        return len(rows), refusals

    def add(self, example: Example) -> bool:
        """Add one example; raises :class:`LeakageError` when it is too close to a test question."""
        return self.add_many([example])[0] == 1

    def seed(
        self, cards: Sequence[ToolCard], questions: Path | None = None
    ) -> tuple[int, list[str]]:
        """Examples from the cards' example queries and a questions JSONL (expected tools and,
        for one-tool questions, expected arguments), and, for a tool that has none of those, its
        card's written requests (``synthetic``: what the LLM wrote for it, ``toolrag tools
        synth`` or the background writer), so that every tool of a user's pool has examples and
        a few placeholder examples of one tool do not stand for the pool. Leaking ones are
        skipped and reported."""
        examples = [
            Example(query=q, calls=[ToolCallSpec(tool=c.name)], source="card")
            for c in cards
            for q in c.examples
        ]
        if questions is not None and questions.is_file():
            for line in questions.read_text(encoding="utf-8-sig").splitlines():
                if not line.strip():
                    continue
                item = json.loads(line)
                examples.append(
                    question_example(
                        item["query"],
                        list(item.get("expected_tools") or []),
                        item.get("expected_args") or {},
                    )
                )
        own = {tool for e in examples for tool in e.tools}
        examples += [
            Example(query=q, calls=[ToolCallSpec(tool=c.name)], source="written")
            for c in cards
            if c.name not in own
            for q in c.synthetic
        ]
        return self.add_many(examples, strict=False)

    # --- choosing ------------------------------------------------------------------------------
    def select(
        self, query: str, k: int = 8, tools: Iterable[str] | None = None, k_named: int = 2
    ) -> list[tuple[str, Example, float]]:
        """The ``k`` examples for ``query``, among those whose calls use only ``tools`` when
        given (an example with no call, "no tool", always qualifies): the ``k - k_named``
        nearest by shape (cosine of the masked questions: the same kind of request), then the
        ``k_named`` nearest by the whole question among the rest (the same customer or record).
        Each comes with the cosine it was chosen by; the nearest by shape first."""
        if not self._examples:
            return []
        allowed = set(tools) if tools is not None else None
        ok = [i for i, e in enumerate(self._examples) if allowed is None or e.tools <= allowed]
        if not ok:
            return []
        vector = _unit(self.embed.get_query_embedding(query))
        shape = masked(query)
        by_query = self._matrix[ok] @ vector
        by_shape = self._shapes[ok] @ (
            vector if shape == query else _unit(self.embed.get_query_embedding(shape))
        )
        picked: dict[int, float] = {}  # position in ok -> the cosine it was chosen by
        for sims, quota in ((by_shape, max(k - k_named, 0)), (by_query, k)):
            for j in np.argsort(-sims, kind="stable"):
                if len(picked) >= quota:
                    break
                picked.setdefault(int(j), float(sims[j]))
        return [(self._ids[ok[j]], self._examples[ok[j]], sim) for j, sim in picked.items()]
