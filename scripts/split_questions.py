"""Merge the draft question files into data/questions/{examples,test}.jsonl.

The split is deterministic: within each draft file, questions alternate between test and
examples (by id). A test question whose embedding cosine with any example is >= 0.9 moves to
the examples, so no test question has a near-copy among the few-shot examples (leakage).
Run: .venv/bin/python scripts/split_questions.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from toolrag import Settings
from toolrag.models.embeddings import make_embedding

LEAK_COSINE = 0.9
ROOT = Path(__file__).resolve().parents[1] / "data" / "questions"


def main() -> None:
    drafts = sorted(ROOT.glob("_draft_*.jsonl"))
    test: list[dict[str, object]] = []
    examples: list[dict[str, object]] = []
    for path in drafts:
        items = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        for n, item in enumerate(sorted(items, key=lambda q: str(q["id"]))):
            (test if n % 2 == 0 else examples).append(item)
    embed = make_embedding(Settings())

    def vecs(items: list[dict[str, object]]) -> np.ndarray:
        return np.array(embed.get_text_embedding_batch([str(q["query"]) for q in items]))

    while True:
        sims = vecs(test) @ vecs(examples).T
        worst = int(np.argmax(sims.max(axis=1)))
        if sims[worst].max() < LEAK_COSINE:
            break
        examples.append(test.pop(worst))
    for name, items in (("test", test), ("examples", examples)):
        with (ROOT / f"{name}.jsonl").open("w") as fh:
            for item in items:
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"test={len(test)} examples={len(examples)} max cosine={sims.max():.3f}")


if __name__ == "__main__":
    main()
