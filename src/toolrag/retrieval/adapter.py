"""A linear query adapter learned from a tool pool's LLM-written requests.

The embedding model was trained on general text, not on how users ask for this pool's tools.
The requests an LLM wrote for each card (``ToolCard.synthetic``) are labelled examples of just
that: request -> card. A matrix ``W`` (started at the identity) is fitted so that the adapted
request ``W r`` lands nearest its own card's document, with a softmax over every card's document
(temperature ``TAU``), the linear "embedding adapter" of LlamaIndex's fine-tuning guide, trained
here in a few seconds on the CPU. At query time the question is adapted the same way; the
documents keep their stored vectors, so nothing is embedded again.

A tenth of the requests is held out: training keeps the epoch whose adapter ranks the held-out
requests' own card first most often, and the adapter is used only when it beats the identity on
them. Too few requests to learn from (``MIN_REQUESTS``) means no adapter. Nothing here reads the
questions a pool is evaluated on.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FORMAT = "query-adapter-1"
TAU = 0.1
EPOCHS = 20
LEARNING_RATE = 1e-3
BATCH = 256
HOLDOUT = 0.1
MIN_REQUESTS = 500
# Bounds for large pools: at most this many requests are learned from, and each batch is
# contrasted with its own cards plus a sample of the others up to this many documents.
MAX_REQUESTS = 20_000
MAX_CONTRAST = 16_384


@dataclass(frozen=True)
class QueryAdapter:
    """``matrix`` maps a unit query vector to the space the card documents are ranked in."""

    matrix: np.ndarray
    key: str
    holdout_before: float
    holdout_after: float
    epochs: int

    def apply(self, query: np.ndarray) -> np.ndarray:
        adapted = self.matrix @ query
        return adapted / max(float(np.linalg.norm(adapted)), 1e-12)

    def save(self, path: Path) -> None:
        """Write the adapter next to the index (atomically: a reader never sees half a file)."""
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            matrix=self.matrix,
            key=np.array(self.key),
            scores=np.array([self.holdout_before, self.holdout_after]),
            epochs=np.array(self.epochs),
        )
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, key: str) -> QueryAdapter | None:
        """The adapter saved at ``path`` if it was fitted on the data ``key`` names."""
        try:
            with np.load(path) as data:
                if str(data["key"]) != key:
                    return None
                before, after = (float(x) for x in data["scores"])
                return cls(
                    data["matrix"].astype(np.float32), key, before, after, int(data["epochs"])
                )
        except (OSError, KeyError, ValueError):
            return None


def adapter_key(cards: Iterable[tuple[str, str]], requests: Iterable[tuple[str, str]]) -> str:
    """A fingerprint of what an adapter learns from: the (id, hash) of the ranked cards and of
    their requests, and the fitting settings."""
    digest = hashlib.sha256(
        repr((FORMAT, TAU, EPOCHS, LEARNING_RATE, BATCH, HOLDOUT, MIN_REQUESTS)).encode()
    )
    for pairs in (sorted(cards), sorted(set(requests))):
        for tid, h in pairs:
            digest.update(f"{tid}\0{h}\n".encode())
        digest.update(b"\1")
    return digest.hexdigest()[:24]


def _top1(documents: np.ndarray, queries: np.ndarray, owners: np.ndarray) -> float:
    hits = 0
    for start in range(0, len(queries), 512):
        sims = queries[start : start + 512] @ documents.T
        hits += int((sims.argmax(axis=1) == owners[start : start + 512]).sum())
    return hits / max(len(queries), 1)


def fit_query_adapter(
    documents: np.ndarray, requests: np.ndarray, owners: np.ndarray, key: str, seed: int = 0
) -> QueryAdapter | None:
    """Fit the adapter on ``requests`` (unit rows) whose cards are rows ``owners`` of
    ``documents`` (unit rows); None when there are too few requests or it does not beat the
    identity on the held-out tenth."""
    if len(requests) < MIN_REQUESTS:
        return None
    import torch  # the embedding model has loaded it already

    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    if len(requests) > MAX_REQUESTS:
        keep = rng.choice(len(requests), MAX_REQUESTS, replace=False)
        requests, owners = requests[keep], owners[keep]
    order = rng.permutation(len(requests))
    n_val = max(int(len(requests) * HOLDOUT), 1)
    val, train = order[:n_val], order[n_val:]
    before = _top1(documents, requests[val], owners[val])

    dim = documents.shape[1]
    weight = torch.nn.Parameter(torch.eye(dim))
    optimizer = torch.optim.Adam([weight], lr=LEARNING_RATE)
    docs = torch.from_numpy(np.ascontiguousarray(documents, dtype=np.float32))
    reqs = torch.from_numpy(np.ascontiguousarray(requests, dtype=np.float32))
    own = torch.from_numpy(owners.astype(np.int64))
    best, best_epoch, best_matrix = before, -1, None
    for epoch in range(EPOCHS):
        train = rng.permutation(train)
        for start in range(0, len(train), BATCH):
            batch = torch.from_numpy(train[start : start + BATCH])
            labels = own[batch]
            contrast = docs
            if len(documents) > MAX_CONTRAST:
                cand = np.union1d(
                    labels.numpy(), rng.choice(len(documents), MAX_CONTRAST, replace=False)
                )
                contrast = docs[torch.from_numpy(cand)]
                labels = torch.from_numpy(np.searchsorted(cand, labels.numpy()))
            adapted = torch.nn.functional.normalize(reqs[batch] @ weight.T, dim=1)
            loss = torch.nn.functional.cross_entropy(adapted @ contrast.T / TAU, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        matrix = weight.detach().numpy().copy()
        adapted_val = requests[val] @ matrix.T
        adapted_val /= np.maximum(np.linalg.norm(adapted_val, axis=1, keepdims=True), 1e-12)
        score = _top1(documents, adapted_val, owners[val])
        if score > best:
            best, best_epoch, best_matrix = score, epoch, matrix
    if best_matrix is None:
        return None
    return QueryAdapter(best_matrix.astype(np.float32), key, before, best, best_epoch + 1)
