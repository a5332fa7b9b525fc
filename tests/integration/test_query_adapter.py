"""The query adapter learned from a pool's written requests, alone and inside the ToolIndex."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from toolrag import Settings
from toolrag.cards.card import ToolCard, load_tool_list
from toolrag.models.embeddings import make_embedding
from toolrag.retrieval import index as toolindex_module
from toolrag.retrieval.adapter import MIN_REQUESTS, QueryAdapter, adapter_key, fit_query_adapter
from toolrag.retrieval.index import REQUEST_WEIGHT, ToolIndex

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _skewed_pool(cards: int = 40, per_card: int = 15, dim: int = 24, seed: int = 1):
    """Requests written in a space the documents are not in: each is its card's document seen
    through a fixed distortion, plus noise, so the identity ranks them poorly and a linear map
    can undo it."""
    rng = np.random.default_rng(seed)
    documents = _unit(rng.normal(size=(cards, dim)))
    distortion = np.eye(dim) + 1.5 * rng.normal(size=(dim, dim)) / np.sqrt(dim)
    owners = np.repeat(np.arange(cards), per_card)
    requests = _unit(documents[owners] @ distortion.T + 0.15 * rng.normal(size=(len(owners), dim)))
    return documents.astype(np.float32), requests.astype(np.float32), owners


def _top1(documents: np.ndarray, queries: np.ndarray, owners: np.ndarray) -> float:
    return float(((queries @ documents.T).argmax(axis=1) == owners).mean())


def test_adapter_learns_the_requests_space_and_generalises() -> None:
    documents, requests, owners = _skewed_pool()
    assert len(requests) >= MIN_REQUESTS
    adapter = fit_query_adapter(documents, requests, owners, key="k")
    assert adapter is not None
    assert adapter.holdout_before < 0.7 and adapter.holdout_after > adapter.holdout_before + 0.2
    # new requests of the same pool, never seen in training, rank their card first more often
    fresh_docs, fresh, fresh_owners = _skewed_pool(seed=1)  # same documents and distortion
    rng = np.random.default_rng(99)
    fresh = _unit(fresh + 0.05 * rng.normal(size=fresh.shape)).astype(np.float32)
    adapted = np.stack([adapter.apply(q) for q in fresh])
    assert _top1(fresh_docs, adapted, fresh_owners) > _top1(fresh_docs, fresh, fresh_owners) + 0.2


def test_no_adapter_from_too_few_requests_or_when_the_identity_is_as_good() -> None:
    documents, requests, owners = _skewed_pool()
    few = MIN_REQUESTS - 1
    assert fit_query_adapter(documents, requests[:few], owners[:few], key="k") is None
    # requests that are their documents already: nothing to learn, the identity is kept
    exact = np.repeat(documents, 15, axis=0)
    assert fit_query_adapter(documents, exact, np.repeat(np.arange(40), 15), key="k") is None


def test_adapter_file_is_reused_only_for_the_same_data(tmp_path: Path) -> None:
    adapter = QueryAdapter(np.eye(4, dtype=np.float32) * 2, "abc", 0.5, 0.7, 3)
    path = tmp_path / "tools_adapter.npz"
    adapter.save(path)
    loaded = QueryAdapter.load(path, "abc")
    assert loaded is not None and np.array_equal(loaded.matrix, adapter.matrix)
    assert (loaded.holdout_before, loaded.holdout_after, loaded.epochs) == (0.5, 0.7, 3)
    assert QueryAdapter.load(path, "other") is None
    assert QueryAdapter.load(tmp_path / "missing.npz", "abc") is None
    cards = [("a@1", "h1"), ("b@1", "h2")]
    assert adapter_key(cards, [("a@1", "r1")]) == adapter_key(cards[::-1], [("a@1", "r1")] * 2)
    assert adapter_key(cards, [("a@1", "r1")]) != adapter_key(cards, [("a@1", "r2")])


@pytest.fixture
def written() -> list[ToolCard]:
    cards = load_tool_list(FIXTURES / "tools_small.json")
    texts = ["Please do this for me.", "Can you take care of it?"]
    return [c.model_copy(update={"synthetic": texts}) for c in cards]


def test_toolindex_ranks_in_the_adapted_space_and_reports_the_cosine(
    written: list[ToolCard], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index fits the adapter once, saves it, reuses it on reopening, fits again when the
    requests change; ranking uses the adapted query, the reported similarity the plain one."""
    embed = make_embedding(Settings())
    fits: list[str] = []
    target = "convert_currency"
    question = "Will it rain in Paris tomorrow?"
    q = _unit(np.asarray(embed.get_query_embedding(question), dtype=np.float32))

    def fit(documents, requests, owners, key, seed=0):  # type: ignore[no-untyped-def]
        fits.append(key)
        row = index._row[next(c.id for c in written if c.name == target)]
        # sends the question onto the target card's document
        matrix = np.outer(documents[row], q) + 1e-3 * np.eye(documents.shape[1])
        return QueryAdapter(matrix.astype(np.float32), key, 0.1, 0.9, 1)

    monkeypatch.setattr(toolindex_module, "fit_query_adapter", fit)
    index = ToolIndex(tmp_path, embed)
    index.sync(written)
    assert len(fits) == 1 and index.adapter is not None
    assert (tmp_path / "tools_adapter.npz").exists()

    hits = index.retrieve(question, k=5, strategy="dense")
    assert hits[0].name == target  # the adapter, not the question, put it first
    requests = _unit(np.array(embed.get_text_embedding_batch(written[0].synthetic)))
    nearest = float((requests @ q).max())  # every card has the same two requests
    for hit in hits:
        cosine = float(index._matrix[index._row[hit.id]] @ q)
        expected = (cosine + REQUEST_WEIGHT * nearest) / (1 + REQUEST_WEIGHT)
        assert hit.similarity == pytest.approx(expected, abs=1e-3)

    reopened = ToolIndex(tmp_path, embed)
    reopened.sync(written)
    assert len(fits) == 1 and reopened.adapter is not None  # loaded, not fitted again
    assert reopened.adapter.key == index.adapter.key

    changed = [written[0].model_copy(update={"synthetic": ["Another request."]}), *written[1:]]
    reopened.sync(changed)
    assert len(fits) == 2 and fits[1] != fits[0]


def test_toolindex_without_enough_requests_has_no_adapter(
    written: list[ToolCard], tmp_path: Path
) -> None:
    index = ToolIndex(tmp_path, make_embedding(Settings()))
    index.sync(written)  # 10 requests: far below MIN_REQUESTS
    assert index.adapter is None
    assert not (tmp_path / "tools_adapter.npz").exists()
