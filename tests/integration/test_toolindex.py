"""Tool cards, the persistent ToolIndex and the evaluation metrics and CLI."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from toolrag import Settings
from toolrag.cards import card as cards_module
from toolrag.cards.card import ToolCard, apply_overlays, load_tool_list, load_yaml_cards, split_name
from toolrag.cli.main import app
from toolrag.errors import InputError
from toolrag.evaluation.retrieval import RetrievalQuery, evaluate
from toolrag.models.embeddings import make_embedding
from toolrag.retrieval.index import (
    BM25_WEIGHT,
    BM25_WEIGHT_STEPS,
    BM25_WEIGHT_WITH_REQUESTS,
    HUB_K,
    HUB_WEIGHT,
    NAME_WEIGHT,
    REQUEST_WEIGHT,
    ToolIndex,
    blend,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
_TZ = {"type": "object", "properties": {"tz": {"type": "string", "description": "Time zone."}}}


@pytest.fixture
def cards() -> list[ToolCard]:
    return load_tool_list(FIXTURES / "tools_small.json")


@pytest.fixture
def embed():  # the real embedding model
    return make_embedding(Settings())


def test_every_json_shape_becomes_a_card(cards: list[ToolCard]) -> None:
    by_name = {c.name: c for c in cards}
    assert set(by_name) == {
        "get_weather",
        "convert_currency",
        "send_email",
        "convert_document_to_pdf",
        "book_flight",
    }
    assert by_name["send_email"].parameters["properties"]["to"]["description"]  # MCP shape
    assert "amount" in by_name["convert_currency"].parameters["properties"]  # OpenAI shape
    assert by_name["convert_document_to_pdf"].parameters["type"] == "object"  # BFCL "dict"
    doc = by_name["get_weather"].document()
    assert doc.startswith("get weather (get_weather)") and "city: City name" in doc


def test_document_lists_allowed_values_and_nested_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    card = ToolCard(
        name="findEvents",
        description="Find events in a city.",
        parameters={
            "type": "object",
            "properties": {
                "eventType": {
                    "type": "string",
                    "description": "Kind.",
                    "enum": ["Music", "Theater"],
                },
                "venue": {
                    "type": "object",
                    "properties": {"zip_code": {"type": "string", "description": "Postcode."}},
                },
                "tags": {"type": "array", "items": {"type": "string", "enum": ["free", "kids"]}},
            },
        },
    )
    doc = card.document()
    assert doc.startswith("find events (findEvents)\nFind events in a city.")
    assert "event type: Kind. (one of: Music, Theater)" in doc
    assert "; venue; zip code: Postcode.;" in doc  # a nested field follows its object
    assert "tags (one of: free, kids)" in doc

    # the document format is part of the content hash, so a new format re-embeds old vectors
    before = card.content_hash()
    monkeypatch.setattr(cards_module, "DOCUMENT_FORMAT", cards_module.DOCUMENT_FORMAT + 1)
    assert card.content_hash() != before


def test_best_adds_relative_bm25_to_the_cosine(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(cards)
    query = "convert 100 dollars to euros"
    hits = index.retrieve(query, k=5, strategy="best")
    ranked, _ = index.stages.dense(index, query, None)  # the ranking score, name blended in
    bonus = [h.score - float(ranked[index._row[h.id]]) for h in hits]
    assert hits[0].name == "convert_currency"
    assert index.bm25_weight() == pytest.approx(BM25_WEIGHT)  # a request of one step
    # scores are rounded to 4 decimals
    assert all(-1e-4 <= b <= BM25_WEIGHT + 1e-4 for b in bonus)
    assert max(bonus) == pytest.approx(BM25_WEIGHT, abs=1e-4)  # the best BM25 match


def test_bm25_weight_of_a_multi_step_request_falls_with_the_share_of_written_requests(
    cards: list[ToolCard], embed: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def written(share: int) -> list[ToolCard]:  # the first ``share`` cards get a request
        return [
            c.model_copy(update={"synthetic": [f"Please {c.name.replace('_', ' ')} for me"]})
            if n < share
            else c
            for n, c in enumerate(cards)
        ]

    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(cards)
    assert index.bm25_weight(steps=True) == pytest.approx(BM25_WEIGHT_STEPS)
    index.sync(written(len(cards)))
    assert index.bm25_weight(steps=True) == pytest.approx(BM25_WEIGHT_WITH_REQUESTS)
    half = len(cards) // 2
    index.sync(written(half))
    expected = BM25_WEIGHT_STEPS + half / len(cards) * (
        BM25_WEIGHT_WITH_REQUESTS - BM25_WEIGHT_STEPS
    )
    assert index.bm25_weight(steps=True) == pytest.approx(expected)
    assert index.bm25_weight() == pytest.approx(BM25_WEIGHT)  # one step: whatever the share

    # retrieve searches a request and each of its steps with the request's weight
    weights: list[float] = []

    def recorded(
        self: ToolIndex,
        query: str,
        pool: int,
        weight: float,
        embedding: list[float] | None = None,
        include: Sequence[str] = (),
    ) -> tuple[dict[str, float], dict[str, float]]:
        weights.append(weight)
        return blend(self, query, pool, weight, embedding, include)

    index = index.with_stages(fuse=recorded)
    index.retrieve("convert 100 dollars to euros and then get the weather in Paris", k=5)
    assert len(weights) == 3 and weights == pytest.approx([expected] * 3)  # request, 2 steps
    weights.clear()
    index.retrieve("convert 100 dollars to euros", k=5)
    assert weights == pytest.approx([BM25_WEIGHT])
    query = "convert 100 dollars to euros"
    assert index.adapter is None  # too few requests to fit one
    top = index.retrieve(query, k=5, strategy="best")[0]
    lexical = dict(index.stages.lexical(index, query, 50))
    relative = lexical[top.id] / max(lexical.values())
    ranked, _ = index.stages.dense(index, query, None)  # hub penalty already subtracted
    bonus = top.score - float(ranked[index._row[top.id]])
    assert bonus == pytest.approx(BM25_WEIGHT * relative, abs=2e-4)


def test_one_text_embeds_like_a_batch(embed: object) -> None:
    texts = ["Find the area of a triangle with base 10", "word " * 400]  # the second truncates
    batch = np.asarray(embed.get_text_embedding_batch(texts))  # type: ignore[attr-defined]
    one = np.asarray([embed.get_query_embedding(t) for t in texts])  # type: ignore[attr-defined]
    assert np.allclose(one, batch, atol=1e-5)
    assert np.allclose(np.linalg.norm(one, axis=1), 1.0, atol=1e-5)


def test_split_name() -> None:
    assert split_name("getProjectSchedule.v2") == "get project schedule v2"


def test_index_persists_and_upserts_without_duplicates(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    first = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    assert first.sync(cards).embedded == 5
    reopened = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    report = reopened.sync(cards)
    assert report.embedded == 0 and report.unchanged == 5  # no re-embedding on reopen
    changed = [
        c.model_copy(update={"description": c.description + " Also hail."})
        if c.name == "get_weather"
        else c
        for c in cards
    ]
    report = reopened.sync(changed[:-1])  # one changed, one removed
    assert (report.updated, report.removed, report.embedded) == (1, 1, 1)
    ids = reopened._open().to_arrow().column("id").to_pylist()
    assert sorted(ids) == sorted(c.id for c in changed[:-1])  # no duplicate rows
    assert reopened.retrieve("Will it rain in Paris?", k=1)[0].name == "get_weather"


def test_written_requests_are_indexed_one_vector_each(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    query = "Should I pack an umbrella for my picnic in Denver on Saturday?"
    written = ["Do I need a raincoat for the park in Denver this weekend?", "Is it cold in Oslo?"]

    def with_requests(requests: list[str]) -> list[ToolCard]:
        return [
            c.model_copy(update={"synthetic": requests}) if c.name == "get_weather" else c
            for c in cards
        ]

    index = ToolIndex(tmp_path, embed, name_weight=NAME_WEIGHT)  # type: ignore[arg-type]
    assert index.sync(cards).requests_embedded == 0
    report = index.sync(with_requests(written))
    assert (report.embedded, report.requests_embedded) == (0, 2)  # the document stays
    weather = next(c for c in cards if c.name == "get_weather")

    def unit(v: list[float]) -> np.ndarray:
        a = np.asarray(v, dtype=np.float32)
        return a / np.linalg.norm(a)

    q = unit(embed.get_query_embedding(query))  # type: ignore[attr-defined]
    document = float(index._matrix[index._row[weather.id]] @ q)
    nearest = max(float(unit(embed.get_text_embedding(t)) @ q) for t in written)  # type: ignore[attr-defined]
    expected = (document + REQUEST_WEIGHT * nearest) / (1 + REQUEST_WEIGHT)
    hits = {h.name: h for h in index.retrieve(query, k=5, strategy="dense")}
    assert hits["get_weather"].similarity == pytest.approx(expected, abs=1e-3)
    assert nearest > document  # the request is phrased like the question: the card rises
    for card in cards:  # the cards without requests keep their document's cosine
        if card.name != "get_weather" and card.name in hits:
            plain = float(index._matrix[index._row[card.id]] @ q)
            assert hits[card.name].similarity == pytest.approx(plain, abs=1e-3)
    # the ranking score also blends in the card's name, embedded alone (less the hub penalty)
    ranked, _ = index.stages.dense(index, query, None)
    ranked += index._penalty
    by_name = float(unit(embed.get_text_embedding(split_name(weather.name))) @ q)  # type: ignore[attr-defined]
    assert float(index._name_matrix[index._row[weather.id]] @ q) == pytest.approx(by_name, abs=1e-3)
    own = document + NAME_WEIGHT * by_name + REQUEST_WEIGHT * nearest
    assert float(ranked[index._row[weather.id]]) == pytest.approx(
        own / (1 + NAME_WEIGHT + REQUEST_WEIGHT), abs=1e-3
    )

    reopened = ToolIndex(tmp_path, embed, name_weight=NAME_WEIGHT)  # type: ignore[arg-type]
    report = reopened.sync(with_requests(written))
    assert (report.embedded, report.requests_embedded) == (0, 0)  # reopened without embedding
    hit = next(
        h for h in reopened.retrieve(query, k=5, strategy="dense") if h.name == "get_weather"
    )
    assert hit.similarity == pytest.approx(expected, abs=1e-3)
    assert reopened.sync(with_requests(written[:1])).requests_embedded == 1  # a new version
    assert reopened.sync(cards).requests_embedded == 0  # requests gone: their rows deleted
    assert reopened._requests_table().count_rows() == 0 and not len(reopened._req_rows)
    hit = next(
        h for h in reopened.retrieve(query, k=5, strategy="dense") if h.name == "get_weather"
    )
    assert hit.similarity == pytest.approx(
        float(reopened._matrix[reopened._row[weather.id]] @ q), abs=1e-3
    )


def test_a_name_drowned_by_its_description_lifts_its_card(embed: object, tmp_path: Path) -> None:
    """A card's name is embedded alone beside its document (``NAME_WEIGHT``): a question that
    repeats the name of a card whose long description says other things ranks it higher than
    the document alone would, while the cosine floors and gates read stays the document's; the
    vectors are kept, and only a renamed card's name is embedded again."""
    filler = (
        "Accepts an optional page token and returns paginated results. Rate limits apply per "
        "account; retry with backoff on status 429. Fields may be omitted when empty. "
    ) * 6
    cards = [
        ToolCard(name="create_pull_request", description="Opens a change proposal. " + filler),
        ToolCard(name="list_repositories", description="Lists the repositories. " + filler),
        ToolCard(name="delete_branch", description="Removes a branch. " + filler),
        ToolCard(name="get_commit", description="Reads one commit. " + filler),
    ]
    index = ToolIndex(tmp_path, embed, name_weight=NAME_WEIGHT)  # type: ignore[arg-type]
    index.sync(cards)
    assert index._open_names().count_rows() == 4
    query = "create a pull request"
    hits = index.retrieve(query, k=4, strategy="dense")
    assert hits[0].name == "create_pull_request"
    q = np.asarray(embed.get_query_embedding(query))  # type: ignore[attr-defined]
    q = q / np.linalg.norm(q)
    row = index._row[cards[0].id]
    document = float(index._matrix[row] @ q)
    assert float(index._name_matrix[row] @ q) > document
    assert hits[0].similarity == pytest.approx(document, abs=1e-3)
    ranked, _ = index.stages.dense(index, query, None)
    assert float(ranked[row]) > document + 0.05

    renamed = [*cards[1:], cards[0].model_copy(update={"name": "open_pull_request"})]
    reopened = ToolIndex(tmp_path, embed, name_weight=NAME_WEIGHT)  # type: ignore[arg-type]
    assert reopened.sync(cards).embedded == 0
    assert reopened._open_names().count_rows() == 4  # nothing embedded again
    reopened.sync(renamed)
    names = reopened._open_names().to_arrow().column("text").to_pylist()
    assert sorted(names) == [
        "delete branch",
        "get commit",
        "list repositories",
        "open pull request",
    ]


def test_cards_near_many_written_requests_are_ranked_down(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    """CSLS: a card ranks by its cosine less HUB_WEIGHT x its document's mean cosine with its
    HUB_K nearest written requests of the pool; the similarity it reports stays the cosine."""
    written = {
        c.name: [f"Please {split_name(c.name)} for me.", "Can you take care of it?"] for c in cards
    }
    augmented = [c.model_copy(update={"synthetic": written[c.name]}) for c in cards]
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(cards)
    assert not index._penalty.any()  # no written requests: no correction
    index.sync(augmented)
    requests = np.array(
        [embed.get_text_embedding(t) for c in augmented for t in c.synthetic]  # type: ignore[attr-defined]
    )
    requests /= np.linalg.norm(requests, axis=1, keepdims=True)
    penalty = {}
    for card in augmented:
        nearest = np.sort(requests @ index._matrix[index._row[card.id]])[
            -min(HUB_K, len(requests)) :
        ]
        penalty[card.name] = HUB_WEIGHT * float(nearest.mean())
        assert index._penalty[index._row[card.id]] == pytest.approx(penalty[card.name], abs=1e-4)

    hits = index.retrieve("Send the report", k=len(cards), strategy="dense")
    adjusted = [h.similarity - penalty[h.name] for h in hits]  # type: ignore[operator]
    assert adjusted == sorted(adjusted, reverse=True)
    raw = [h.similarity for h in hits]
    assert raw != sorted(raw, reverse=True)  # the correction reordered this query's cards
    hub = max(penalty, key=penalty.__getitem__)
    assert [h.name for h in hits].index(hub) > sorted(raw, reverse=True).index(
        next(h.similarity for h in hits if h.name == hub)
    )


def test_hub_penalties_are_saved_and_reused_until_the_requests_change(
    cards: list[ToolCard], embed: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reopening an index reads its hub penalties from disk; a changed request recomputes them."""
    from toolrag.retrieval import index as toolindex_module

    computed: list[int] = []
    real = toolindex_module._hubness

    def counting(documents: np.ndarray, requests: np.ndarray, chunk: int = 512) -> np.ndarray:
        computed.append(len(requests))
        return real(documents, requests, chunk)

    monkeypatch.setattr(toolindex_module, "_hubness", counting)
    written = [c.model_copy(update={"synthetic": [f"Please {split_name(c.name)}."]}) for c in cards]
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(written)
    assert len(computed) == 1 and (tmp_path / "tools_hubness.npz").exists()
    reopened = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    reopened.sync(written)
    assert len(computed) == 1  # read, not computed again
    assert np.array_equal(reopened._penalty, index._penalty) and reopened._penalty.any()
    changed = [written[0].model_copy(update={"synthetic": ["Something else entirely."]})]
    reopened.sync([*changed, *written[1:]])
    assert len(computed) == 2


def test_deprecated_tools_are_not_retrieved(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    old = cards[0].model_copy(update={"deprecated_by": "get_forecast_v2"})
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync([old, *cards[1:]])
    assert "get_weather" not in [h.name for h in index.retrieve("weather in Paris", k=5)]


def test_floor_answers_no_tool_fits(cards: list[ToolCard], embed: object, tmp_path: Path) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(cards)
    assert index.retrieve("Tell me a joke about penguins", k=3, floor=0.2) == []
    assert index.retrieve("Will it rain in Paris?", k=3, floor=0.2)[0].name == "get_weather"


def test_multi_step_request_retrieves_every_step(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(cards)
    got = [
        h.name
        for h in index.retrieve(
            "Convert the quarterly report to PDF and then email it to my manager", k=2
        )
    ]
    assert set(got) == {"convert_document_to_pdf", "send_email"}


def _scripted_index(
    cards: list[ToolCard],
    embed: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    steps: dict[str, dict[str, float]],
    others: float,
) -> ToolIndex:
    """An index whose fused scores are scripted: any request but the ``steps`` likes
    get_weather, convert_currency, book_flight, convert_document_to_pdf, send_email in that
    order (0.9 down to 0.5); a step scores its listed tools as given and every other tool
    ``others``. Scores double as cosines."""
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(cards)
    ids = {c.name: c.id for c in cards}
    whole = {"get_weather": 0.9, "convert_currency": 0.8, "book_flight": 0.7}
    whole |= {"convert_document_to_pdf": 0.6, "send_email": 0.5}

    def blended(
        _index: ToolIndex,
        query: str,
        pool: int,
        weight: float,
        embedding: object = None,
        include: object = (),
    ) -> tuple[dict, dict]:
        if query in steps:
            scores = {ids[n]: steps[query].get(n, others) for n in ids}
        else:
            scores = {ids[n]: v for n, v in whole.items()}
        return scores, dict(scores)

    return index.with_stages(fuse=blended)


def test_each_step_keeps_its_best_tool_even_when_the_whole_request_prefers_others(
    cards: list[ToolCard], embed: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole request likes three other tools best, and each step prefers its own tool by a
    # small margin: adding the steps' scores would leave both steps' tools out of the top 3.
    steps = {
        "Convert the report to PDF": {"convert_document_to_pdf": 0.5},
        "email it to Bob": {"send_email": 0.5},
    }
    index = _scripted_index(cards, embed, tmp_path, monkeypatch, steps, others=0.45)
    got = [
        h.name for h in index.retrieve("Convert the report to PDF and then email it to Bob", k=3)
    ]
    # the whole request still leads; each step's tool takes one of the first three places
    assert got == ["get_weather", "convert_document_to_pdf", "send_email"]
    assert [h.name for h in index.retrieve("Convert the report to PDF", k=3)] == [
        "convert_document_to_pdf", "book_flight", "convert_currency"
    ]  # fmt: skip


def test_a_request_that_marks_its_steps_ranks_each_card_by_its_best_step(
    cards: list[ToolCard], embed: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sentences opened by sequence words ("Also, ...") ask for several things: a tool that
    # fits one step well (book_flight, the first step's runner-up) outranks tools that only
    # fit the whole request loosely. Steps split at "and then" keep the whole request's order.
    steps = {
        "Convert the report to PDF": {"convert_document_to_pdf": 0.95, "book_flight": 0.93},
        "email it to Bob": {"send_email": 0.95},
    }
    index = _scripted_index(cards, embed, tmp_path, monkeypatch, steps, others=0.1)
    hits = index.retrieve("Convert the report to PDF. Also, email it to Bob.", k=3)
    assert {h.name for h in hits[:2]} == {"convert_document_to_pdf", "send_email"}
    assert (hits[2].name, hits[2].score, hits[2].similarity) == ("book_flight", 0.93, 0.93)
    got = [
        h.name for h in index.retrieve("Convert the report to PDF and then email it to Bob", k=3)
    ]
    assert got == ["get_weather", "convert_document_to_pdf", "send_email"]


def test_metrics_match_hand_computation() -> None:
    queries = [
        RetrievalQuery(id="a", query="a", expected=["x"]),
        RetrievalQuery(id="b", query="b", expected=["y", "z"]),
        RetrievalQuery(id="c", query="c", expected=[]),
    ]
    ranked = {"a": ["w", "x", "v"], "b": ["z", "q", "r", "y"]}
    report = evaluate("fake", 6, queries, lambda q, k: ranked[q][:k], ks=(1, 2, 4))
    assert report.n_queries == 2  # the no-tool query is left out
    assert report.recall[1] == pytest.approx((0 + 0.5) / 2)
    assert report.recall[2] == pytest.approx((1 + 0.5) / 2)
    assert report.recall[4] == pytest.approx(1.0)
    assert report.mrr == pytest.approx((1 / 2 + 1) / 2)
    ndcg_a = (1 / math.log2(3)) / 1
    ndcg_b = (1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert report.ndcg10 == pytest.approx((ndcg_a + ndcg_b) / 2)
    assert [m["id"] for m in report.misses] == []


def test_eval_tools_cli_json(tmp_path: Path) -> None:
    misses = tmp_path / "misses.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "tools",
            "--tools",
            str(FIXTURES / "tools_small.json"),
            "--queries",
            str(FIXTURES / "queries_small.jsonl"),
            "--strategy",
            "all",
            "--json",
            "--misses",
            str(misses),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout.strip().splitlines()[-1])
    assert [r["strategy"] for r in rows] == [
        "objectindex-default",
        "dense",
        "bm25",
        "hybrid",
        "best",
    ]
    for r in rows:
        assert set(r) == {
            "recall@1",
            "recall@5",
            "recall@10",
            "mrr",
            "ndcg@10",
            "p50_ms",
            "p95_ms",
            "n_tools",
            "n_queries",
            "strategy",
        }
        assert r["n_tools"] == 5 and r["n_queries"] == 4
    best = rows[-1]
    assert best["recall@5"] == 1.0 and best["mrr"] == 1.0
    assert misses.exists()


def test_eval_tools_cli_keeps_its_index_when_asked(tmp_path: Path, embed: object) -> None:
    pool, queries = FIXTURES / "tools_small.json", FIXTURES / "queries_small.jsonl"
    args = ["eval", "tools", "--tools", str(pool), "--queries", str(queries), "--strategy",
            "best", "--json", "--misses", str(tmp_path / "m.jsonl"), "--index-dir",
            str(tmp_path / "idx")]  # fmt: skip
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    # the pool is stored: reopening it embeds nothing, and a second run reports the same
    report = ToolIndex(tmp_path / "idx", embed).sync(load_tool_list(pool))  # type: ignore[arg-type]
    assert report.unchanged == 5 and report.embedded == 0
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0, second.output
    keys = ("recall@1", "recall@5", "mrr", "n_tools")
    assert [json.loads(first.stdout)[k] for k in keys] == [
        json.loads(second.stdout)[k] for k in keys
    ]


def test_eval_tools_cli_errors(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "tools",
            "--tools",
            str(tmp_path / "none.json"),
            "--queries",
            str(FIXTURES / "queries_small.jsonl"),
        ],
    )
    assert result.exit_code == 2 and "does not exist" in result.output


@pytest.mark.parametrize(
    "content",
    [
        {"tools": [{"name": "get_time", "description": "Get the time.", "inputSchema": _TZ}]},
        {"functions": [{"name": "get_time", "description": "Get the time.", "parameters": _TZ}]},
        [{"name": "get_time", "description": "Get the time.", "input_schema": _TZ}],
        [
            {
                "type": "function",
                "name": "get_time",
                "description": "Get the time.",
                "parameters": _TZ,
            }
        ],
        {"name": "get_time", "description": "Get the time.", "parameters": _TZ},
    ],
    ids=["mcp-tools-list", "functions-list", "anthropic", "responses-api", "one-tool"],
)
def test_more_tool_file_shapes_keep_their_parameters(tmp_path: Path, content: object) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(content, indent=2))
    (card,) = load_tool_list(path)
    assert card.name == "get_time" and card.parameters["properties"] == _TZ["properties"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (["get_time"], 'A tool entry is not a JSON object: "get_time"'),
        (
            [{"name": "get_time", "description": "x", "parameters": [{"name": "tz"}]}],
            "Tool 'get_time' is not a valid tool entry (parameters: Input should be a valid "
            "dictionary)",
        ),
    ],
)
def test_a_bad_tool_entry_is_an_input_error_that_names_it(
    tmp_path: Path, content: object, says: str
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(content))
    with pytest.raises(InputError) as caught:
        load_tool_list(path)
    assert says in str(caught.value)


def test_eval_reads_bom_files_and_warns_of_expected_tools_not_in_the_pool(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text("\ufeff" + (FIXTURES / "tools_small.json").read_text(), encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        "\ufeff"
        + json.dumps({"id": 1, "query": "weather in Oslo", "expected_tools": "get_weather"})
        + "\n"
        + json.dumps({"id": 2, "query": "mail Bob", "expected_tools": ["send_mail"]})
        + "\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app,
        ["eval", "tools", "--tools", str(tools), "--queries", str(queries), "--json",
         "--misses", str(tmp_path / "m.jsonl")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 expected tool(s) not in the pool, counted as misses: send_mail" in result.stderr
    row = json.loads(result.stdout)
    # A bare string is one expected tool (not its letters); the unknown one is a miss.
    assert row["n_queries"] == 2 and row["recall@10"] == 0.5


def test_yaml_cards_lay_examples_over_tools_built_in_code(tmp_path: Path) -> None:
    code = [
        ToolCard(name="get_weather", description="Get the weather."),
        ToolCard(name="get_time", description="Get the time."),
    ]
    (tmp_path / "extra.yaml").write_text(
        "- name: get_weather\n  examples: ['Is it raining in Oslo?']\n  tags: [weather]\n"
        "  description: ignored for a tool built in code\n"
        "- name: get_unknown\n  examples: [nothing]\n"
    )
    weather, time = apply_overlays(code, load_yaml_cards(tmp_path))
    assert weather.examples == ["Is it raining in Oslo?"] and weather.tags == ["weather"]
    assert weather.description == "Get the weather."  # the code's text stays
    assert "Is it raining in Oslo?" in weather.document()
    assert time == code[1]


@pytest.mark.parametrize(
    "text", ["- name: x\n  examples: 3\n", "- examples: [a]\n", "- name: [unclosed\n"]
)
def test_a_bad_yaml_card_file_names_the_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(InputError, match=r"bad\.yaml"):
        load_yaml_cards(tmp_path)


def test_an_openapi_document_is_a_tool_pool(tmp_path: Path) -> None:
    from ..conftest import REPO

    cards = {
        c.name: c for c in load_tool_list(REPO / "toolspecs" / "construction_api.openapi.json")
    }
    assert {"list_inspections", "get_site_status", "create_inspection_note"} <= set(cards)
    assert cards["create_inspection_note"].side_effect == "write"
    assert cards["list_inspections"].side_effect == "read"
    params = dict(cards["list_inspections"].parameter_items())
    assert set(params) == {"project", "result", "since", "until"} and all(params.values())
    spec = tmp_path / "pets.yaml"
    spec.write_text(
        "openapi: 3.0.0\ninfo: {title: Pets, version: '1'}\npaths:\n"
        "  /pets/{id}:\n    delete:\n      operationId: deletePet\n"
        "      summary: Delete one pet.\n"
        "      parameters: [{name: id, in: path, required: true, description: Pet id.}]\n"
    )
    (pet,) = load_tool_list(spec)
    assert (pet.name, pet.side_effect, pet.parameters["required"]) == (
        "delete_pet",
        "delete",
        ["id"],
    )


def test_reopened_index_is_a_llamaindex_object_index(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    from llama_index.core.objects import ObjectIndex
    from llama_index.core.tools import FunctionTool, ToolMetadata

    from toolrag.retrieval.object_index import tool_object_index

    tools = [
        FunctionTool.from_defaults(fn=lambda **kw: kw, name=c.name, description=c.description)
        for c in cards
    ]
    assert ToolIndex(tmp_path, embed).sync(cards).embedded == 5  # type: ignore[arg-type]
    reopened = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    assert reopened.sync(cards).embedded == 0  # the stored vectors are reused
    obj_index = tool_object_index(reopened, tools)
    assert isinstance(obj_index, ObjectIndex)
    question = "Convert the quarterly report to PDF and then email it to my manager"
    got = obj_index.as_retriever(similarity_top_k=2).retrieve(question)
    assert all(isinstance(t, FunctionTool) for t in got)
    assert [t.metadata.name for t in got] == [h.name for h in reopened.retrieve(question, k=2)]
    assert {t.metadata.name for t in got} == {"convert_document_to_pdf", "send_email"}
    with pytest.raises(InputError, match=r"ToolIndex\.sync"):
        obj_index.insert_object(
            FunctionTool(fn=lambda: None, metadata=ToolMetadata(name="x", description="x"))
        )
    with pytest.raises(InputError, match="no tool object: book_flight"):
        tool_object_index(reopened, [t for t in tools if t.metadata.name != "book_flight"])


def test_a_sync_stopped_before_the_text_index_is_finished_by_the_next(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(cards[:3])
    card = cards[3]  # stored as a sync's embedding batch stores it, then stopped before indexing
    row = {"id": card.id, "name": card.name, "hash": card.content_hash(), "text": card.document()}
    row["vector"] = embed.get_text_embedding(row["text"])  # type: ignore[attr-defined]
    index._open().add([row])
    assert index._open().index_stats("text_idx").num_unindexed_rows == 1
    reopened = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    assert reopened.sync(cards[:4]).embedded == 0
    assert reopened._open().index_stats("text_idx").num_unindexed_rows == 0
    assert reopened.retrieve("pdf", k=1, strategy="bm25")[0].name == card.name


def test_a_tool_the_question_names_ranks_first_past_floor_and_gate(
    cards: list[ToolCard], embed: object, tmp_path: Path
) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(cards)
    question = "Will it rain in Paris tomorrow?"
    assert index.retrieve(question, k=2)[0].name == "get_weather"
    named = index.retrieve(f"{question} Answer with send_email.", k=2)
    assert [(h.name, h.named) for h in named] == [("send_email", True), ("get_weather", False)]
    joke = "Tell me a joke about penguins"
    assert index.retrieve(joke, k=3, floor=0.2) == []
    assert index.retrieve(joke, k=3, gate=0.2) == []
    asked = f"{joke} and mail it with send_email"
    assert [h.name for h in index.retrieve(asked, k=3, floor=0.2)] == ["send_email"]
    assert index.retrieve(asked, k=3, gate=0.2)[0].name == "send_email"
    # the plain strategies stay as they were: only `best` reads names
    assert "send_email" not in [h.name for h in index.retrieve(question, k=1, strategy="dense")]


def test_a_quoted_one_word_tool_name_ranks_first(tmp_path: Path, embed: object) -> None:
    pool = [
        ToolCard(name="translate", description="Translate text from one language to another."),
        ToolCard(name="get_weather", description="Current weather and forecast for a city."),
    ]
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(pool)
    question = "What is the weather in Paris? Say it in French"
    assert index.retrieve(question, k=2)[0].name == "get_weather"
    assert index.retrieve(f"{question} with the `translate` tool", k=2)[0].name == "translate"
    # unquoted, "translate" is an ordinary word of the question
    assert index.retrieve(f"{question}, translate it", k=2)[0].name == "get_weather"


def test_a_steps_tool_is_placed_only_when_the_whole_request_found_it_too(
    tmp_path: Path, embed: object
) -> None:
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    # the whole request's candidates, best first; each step: its scores and cosines
    ranked = [(f"t{i}", 1.0 - i / 100) for i in range(12)]
    real_step = ({"t9": 0.9, "t1": 0.5}, {"t9": 0.6, "t1": 0.4})
    context_clause = ({"elsewhere": 0.8}, {"elsewhere": 0.7})  # "and return a week later"
    covered = index.stages.cover(index, list(ranked), {}, [real_step, context_clause])
    # one real step: its tool takes the last of the first (1 + 1) places; the clause's tool,
    # which the whole request never found, is not placed
    assert [t for t, _ in covered[:3]] == ["t0", "t9", "t1"]
    assert "elsewhere" not in [t for t, _ in covered]


def test_the_top_k_are_the_first_k_of_a_deeper_search(tmp_path: Path, embed: object) -> None:
    # 59 cards say "report" often (BM25's best matches); the card that fits the question says
    # it once, in a longer text, so BM25 ranks it last, past CANDIDATES
    pool = [
        ToolCard(name=f"archive_files_{i}", description=f"Archive report report {'report ' * i}")
        for i in range(59)
    ] + [
        ToolCard(
            name="summarize_sales",
            description="Summarize the quarterly sales figures of a company in a short "
            "paragraph, with the revenue, the costs and the margin of each quarter, as a report.",
        )
    ]
    index = ToolIndex(tmp_path, embed)  # type: ignore[arg-type]
    index.sync(pool)
    question = "summarize the quarterly sales report"
    for strategy in ("best", "hybrid"):
        shallow = index.retrieve(question, k=5, strategy=strategy)  # type: ignore[arg-type]
        deep = index.retrieve(question, k=40, strategy=strategy)  # type: ignore[arg-type]
        assert [(h.name, h.score) for h in shallow] == [(h.name, h.score) for h in deep[:5]]


def test_two_writers_of_one_index_take_turns(cards: list[ToolCard], tmp_path: Path) -> None:
    """Two processes (here threads, each with its own index object and lock handle) syncing
    one folder at once, as a batch's Ray actors do when they start: the cards are embedded
    once, and the table holds each card once."""
    import threading
    import time

    from llama_index.core.embeddings import MockEmbedding

    class SlowEmbedding(MockEmbedding):
        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            time.sleep(0.3)  # long enough for the other writer to arrive mid-sync
            return super()._get_text_embeddings(texts)

    reports = []

    def sync() -> None:
        reports.append(ToolIndex(tmp_path, SlowEmbedding(embed_dim=8)).sync(cards, batch_size=2))

    writers = [threading.Thread(target=sync) for _ in range(2)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    assert sorted(r.embedded for r in reports) == [0, len(cards)]
    ids = ToolIndex(tmp_path, MockEmbedding(embed_dim=8))._open().to_arrow()["id"].to_pylist()
    assert sorted(ids) == sorted(c.id for c in cards)
