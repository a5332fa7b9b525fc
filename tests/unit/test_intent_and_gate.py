"""Action tools only for requests that ask for the action; the gate chosen from requests."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.embeddings import BaseEmbedding

from toolrag.cards.card import ToolCard
from toolrag.retrieval.gate import (
    MIN_REQUESTS,
    choose_gate,
    offtopic_requests,
    searched_requests,
)
from toolrag.retrieval.index import ToolIndex
from toolrag.retrieval.intent import action_verbs, asks_for_action, asks_for_arithmetic


class HashEmbedding(BaseEmbedding):
    """Bag of hashed words: a small fake embedding whose cosines follow shared words."""

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(64)
        for w in re.findall(r"[a-z]+", text.lower()):
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1.0
        n = np.linalg.norm(v)
        return (v / n if n else v).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vec(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vec(query)


@pytest.fixture
def fake_embed() -> HashEmbedding:
    return HashEmbedding(model_name="hash-64")


SUBMIT = ToolCard(
    name="submit_change_order", description="Submit a change order.", side_effect="external"
)
CANCEL = ToolCard(
    name="cancel_inspection", description="Cancel an inspection.", side_effect="delete"
)
NOTE = ToolCard(name="create_inspection_note", description="Add a note.", side_effect="write")
MAIL = ToolCard(name="mailer", description="Send an email to a person.", side_effect="external")
READ = ToolCard(name="list_invoices", description="List invoices.")


@pytest.mark.parametrize(
    ("request_", "card", "asks"),
    [
        ("Which invoices of GRB-104 are unpaid?", SUBMIT, False),
        ("What change orders were submitted last month?", SUBMIT, False),
        ("How much was the change order for?", SUBMIT, False),
        ("Submit change order GRB-101-CO-002 to the owner.", SUBMIT, True),
        ("Please send CO-3 to the owner", SUBMIT, True),  # another verb of the same kind
        ("Was the inspection cancelled?", CANCEL, False),
        ("Which inspections were cancelled in November?", CANCEL, False),
        ("Cancel INSP-101-04", CANCEL, True),
        ("Can you cancel INSP-101-04?", CANCEL, True),
        ("I need INSP-101-04 cancelled", CANCEL, True),
        ("Show INSP-101-04 and then cancel it", CANCEL, True),
        ("Add a note to INSP-101-04: re-inspection passed", NOTE, True),
        ("What notes were added to INSP-101-04?", NOTE, False),
        ("Open RFIs on GRB-101?", NOTE, False),
        ("Email the superintendent the schedule", MAIL, True),  # the verb from the description
        ("Who is the superintendent?", MAIL, False),
        ("anything at all", READ, True),  # read tools are always offered
    ],
)
def test_asks_for_action(request_: str, card: ToolCard, asks: bool) -> None:
    assert asks_for_action(request_, card) is asks


def test_action_verbs_come_from_the_name_or_the_description() -> None:
    assert {"submit", "send"} <= action_verbs(SUBMIT)
    assert "send" in action_verbs(MAIL)


def test_a_pool_without_enough_written_requests_gets_no_gate(
    tmp_path: Path, fake_embed: HashEmbedding
) -> None:
    index = ToolIndex(tmp_path, fake_embed, table="tools")
    index.sync([ToolCard(name="a", description="Alpha tool.", synthetic=["use alpha"])])
    choice = choose_gate(index)
    assert choice.gate is None and choice.requests == 1 and "synth" in choice.reason


def records_index(path: Path, embed: HashEmbedding, description: str) -> ToolIndex:
    """Seven cards, one per kind of record (``{w}`` in ``description``), each with three
    written requests."""
    words = ["invoice", "schedule", "weather", "inspection", "budget", "drawing", "contract"]
    cards = [
        ToolCard(
            name=f"tool_{w}",
            description=description.format(w=w),
            synthetic=[f"show the {w} records", f"find {w} details for a project", f"{w} list"],
        )
        for w in words
    ]
    index = ToolIndex(path, embed, table="tools")
    index.sync(cards)
    return index


def test_the_gate_keeps_tools_for_the_share_asked(
    tmp_path: Path, fake_embed: HashEmbedding
) -> None:
    index = records_index(tmp_path, fake_embed, "Look up the {w} records of a project.")
    assert len(index.written_requests()) >= MIN_REQUESTS
    choice = choose_gate(index, keep=0.9, k=3)
    assert choice.gate is not None and choice.kept is not None
    assert choice.kept >= 0.9
    looser = choose_gate(index, keep=0.5, k=3)
    assert looser.gate is not None and looser.gate >= choice.gate


def test_the_requests_a_gate_is_chosen_from_do_not_depend_on_the_cards_order(
    tmp_path: Path, fake_embed: HashEmbedding
) -> None:
    written = [(f"tool_{n}", f"request {m} of tool {n}") for n in range(12) for m in range(3)]
    assert searched_requests(written, 100) == written  # all of them, when they fit
    chosen = searched_requests(written, 10)
    assert len(chosen) == 10 and set(chosen) <= set(written)
    assert set(searched_requests(written[::-1], 10)) == set(chosen)
    index = records_index(tmp_path / "a", fake_embed, "Look up the {w} records of a project.")
    cards = list(index.cards.values())
    again = ToolIndex(tmp_path / "b", fake_embed, table="tools")
    again.sync(cards[::-1])
    assert again.written_requests() != index.written_requests()  # another row order
    first, second = choose_gate(index, k=3, limit=8), choose_gate(again, k=3, limit=8)
    assert (first.gate, first.evidence) == (second.gate, second.evidence)


def test_a_gate_choice_is_kept_beside_the_index_while_the_index_is_the_same(
    tmp_path: Path, fake_embed: HashEmbedding, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolrag.retrieval.gate as gate_module

    index = records_index(tmp_path, fake_embed, "Look up the {w} records of a project.")
    first = choose_gate(index, keep=0.9, k=3)
    saved = tmp_path / "tools_gate.json"
    assert saved.is_file()
    searched: list[int] = []
    real = gate_module.request_evidence

    def counted(*args: object, **kwargs: object) -> list[tuple[float, float]]:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        searched.append(len(found))
        return found

    monkeypatch.setattr(gate_module, "request_evidence", counted)
    again = ToolIndex(tmp_path, fake_embed, table="tools")  # another process, the same index
    again.sync(list(index.cards.values()))
    assert choose_gate(again, keep=0.9, k=3) == first
    assert searched == [gate_module.PROBES]  # only the probes, not every request
    searched.clear()
    assert choose_gate(again, keep=0.5, k=3) != first  # other arguments: chosen again
    assert sum(searched) > gate_module.PROBES
    # a card's requests change: the index's fingerprint does, and the gate is chosen again
    cards = list(index.cards.values())
    rewritten = ["print every invoice", "invoice totals", "unpaid bills"]
    cards[0] = cards[0].model_copy(update={"synthetic": rewritten})
    changed = ToolIndex(tmp_path, fake_embed, table="tools")
    changed.sync(cards)
    assert changed.fingerprint() != again.fingerprint()
    searched.clear()
    choose_gate(changed, keep=0.9, k=3)
    assert sum(searched) > gate_module.PROBES
    saved.write_text("{not json")  # a damaged file is chosen again, not an error
    assert choose_gate(changed, keep=0.9, k=3).gate is not None
    assert json.loads(saved.read_text())["choice"]["gate"] is not None


def test_the_evidence_gate_counts_shared_rare_words_beside_the_cosine(
    tmp_path: Path, fake_embed: HashEmbedding
) -> None:
    index = records_index(
        tmp_path, fake_embed, "Look up the {w} records of a project: {w} retainage and {w} totals."
    )
    choice = choose_gate(index, keep=0.9, k=3)
    evidence = choice.evidence
    assert evidence is not None and choice.rule() == evidence
    assert evidence.cosine_scale > 0 and evidence.lexical_scale > 0
    assert choice.evidence_kept is not None and choice.evidence_kept >= 0.9
    assert choice.offtopic_emptied is not None and choice.offtopic_emptied >= 0.9
    # the bar a question's cosine must reach falls as its words match the pool better
    assert evidence.cosine_bar(evidence.lexical_scale) < evidence.cosine_bar(0.0)
    assert evidence.score(evidence.cosine_scale, evidence.lexical_scale) == pytest.approx(2.0)
    # a question that shares a card's words keeps its tools; an off-topic one loses them
    assert index.retrieve("what is the invoice retainage total", k=3, gate=evidence)
    assert not index.retrieve("Who won the cup?", k=3, gate=evidence)


def test_a_pool_whose_words_no_request_shares_keeps_the_cosine_gate(
    tmp_path: Path, fake_embed: HashEmbedding
) -> None:
    cards = [
        ToolCard(name=f"tool_{n}", description="Qqq.", synthetic=[f"zz{n}a", f"zz{n}b", f"zz{n}c"])
        for n in range(8)
    ]
    index = ToolIndex(tmp_path, fake_embed, table="tools")
    index.sync(cards)
    choice = choose_gate(index, keep=0.9, k=3)
    assert choice.evidence is None and choice.rule() == choice.gate


def test_the_offtopic_references_ship_with_the_package() -> None:
    references = offtopic_requests()
    assert len(references) >= 50 and not any(r.startswith("#") for r in references)


@pytest.mark.parametrize(
    ("request_", "asks"),
    [
        ("What is the liquidated damages rate in the prime contract?", False),
        ("Which structural sheets were revised?", False),
        ("When is substantial completion planned?", False),
        ("How many days late did structural steel top out?", True),
        ("What share of the budget is spent?", True),
        ("What is the total amount of disputed invoices?", True),
        ("How much more is the hotel contract worth than the library's?", True),
    ],
)
def test_asks_for_arithmetic(request_: str, asks: bool) -> None:
    assert asks_for_arithmetic(request_) is asks
