"""``toolrag eval docs`` says whether chunks embedded whole suit the user's documents, only when
the hybrid search on them ranks better (or worse) in both recall and MRR."""

from __future__ import annotations

from dataclasses import dataclass

from toolrag.evaluation.docs_eval import vectors_hint


@dataclass
class Row:
    strategy: str
    r5: float
    r10: float
    mrr: float

    def as_json(self, items_key: str = "n_docs") -> dict[str, object]:
        return {
            "recall@5": self.r5,
            "recall@10": self.r10,
            "mrr": self.mrr,
            "strategy": self.strategy,
        }


def test_better_in_recall_and_mrr_suggests_whole() -> None:
    hint = vectors_hint([Row("hybrid", 0.9, 0.90, 0.70), Row("hybrid-whole", 0.8, 0.95, 0.75)])  # type: ignore[list-item]
    assert hint is not None and "vectors: whole" in hint and "recall@10 0.950 against 0.900" in hint


def test_worse_in_both_says_keep_the_default() -> None:
    hint = vectors_hint([Row("hybrid", 0.9, 0.90, 0.70), Row("hybrid-whole", 0.9, 0.85, 0.60)])  # type: ignore[list-item]
    assert hint is not None and "keep the default" in hint


def test_mixed_or_missing_rows_say_nothing() -> None:
    assert (
        vectors_hint([Row("hybrid", 0.9, 0.90, 0.70), Row("hybrid-whole", 0.9, 0.95, 0.60)]) is None
    )  # type: ignore[list-item]
    assert vectors_hint([Row("hybrid", 0.9, 0.90, 0.70)]) is None  # type: ignore[list-item]
