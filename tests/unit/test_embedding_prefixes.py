"""``embed_query_prefix`` and ``embed_text_prefix``: what an e5- or bge-style model folder needs
put before questions and stored texts, on a tiny random BERT made here (no real model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from toolrag import Settings, make_embedding

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "query", ":", "passage", "find", "the",
         "weather", "tool", "for", "berlin"]  # fmt: skip


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sentence-transformers-loadable folder: a one-layer BERT and its WordPiece vocabulary
    (sentence-transformers adds mean pooling to a plain transformers folder)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(folder)
    return folder


def close(a: list[float], b: list[float]) -> bool:
    return bool(np.allclose(a, b, atol=1e-5))


def test_the_prefixes_go_before_questions_and_stored_texts(tiny_model: Path) -> None:
    plain = make_embedding(Settings(embed_model=str(tiny_model)))
    e5 = make_embedding(
        Settings(
            embed_model=str(tiny_model), embed_query_prefix="query: ", embed_text_prefix="passage: "
        )
    )
    question, card = "find the weather for berlin", "weather tool"
    assert close(e5.get_query_embedding(question), plain.get_text_embedding("query: " + question))
    assert close(e5.get_text_embedding(card), plain.get_text_embedding("passage: " + card))
    # a batch (how an index embeds its cards and chunks) gets the prefix too
    batch = e5.get_text_embedding_batch([card, question])
    assert close(batch[0], plain.get_text_embedding("passage: " + card))
    # and the prefix changes the vector: the test could fail
    assert not close(e5.get_query_embedding(question), plain.get_query_embedding(question))


def test_without_prefixes_a_question_embeds_as_a_text(tiny_model: Path) -> None:
    plain = make_embedding(Settings(embed_model=str(tiny_model)))
    question = "find the weather for berlin"
    assert close(plain.get_query_embedding(question), plain.get_text_embedding(question))


def test_the_prefixes_are_settings_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLRAG_EMBED_QUERY_PREFIX", "query: ")
    monkeypatch.setenv("TOOLRAG_EMBED_TEXT_PREFIX", "passage: ")
    s = Settings()
    assert (s.embed_query_prefix, s.embed_text_prefix) == ("query: ", "passage: ")
    assert (Settings(_env_file=None).embed_query_prefix) == "query: "
    monkeypatch.delenv("TOOLRAG_EMBED_QUERY_PREFIX")
    assert Settings().embed_query_prefix == ""  # the default model has none


def test_a_text_longer_than_the_model_reads_is_embedded_whole(tiny_model: Path) -> None:
    """A text past the model's input length is embedded as windows that fit, and its vector is
    their normalised mean: the words past the cut count (before, the model dropped them)."""
    from toolrag.models.embeddings import text_windows, whole_text_embeddings

    embed = make_embedding(Settings(embed_model=str(tiny_model), embed_batch_size=7))
    model = embed._model  # type: ignore[attr-defined]
    saved = model.max_seq_length
    model.max_seq_length = 12  # 10 word pieces a window with [CLS] and [SEP]
    try:
        short = "find the weather tool"
        long = " ".join(["find the weather for berlin"] * 3 + ["tool"] * 8)  # 23 word pieces
        assert text_windows(embed, short) == [short]
        windows = text_windows(embed, long)
        assert len(windows) == 3
        assert all(len(embed._model.tokenizer(w)["input_ids"]) <= 12 for w in windows)  # type: ignore[attr-defined]
        assert " ".join(windows).split() == long.split()  # nothing lost, nothing added
        got = whole_text_embeddings(embed, [short, long])
        assert close(got[0], embed.get_text_embedding(short))
        mean = np.mean([embed.get_text_embedding(w) for w in windows], axis=0)
        assert close(got[1], list(mean / np.linalg.norm(mean)))
        # the cut-off vector differs: the test could fail
        assert not close(got[1], embed.get_text_embedding(long))
    finally:
        model.max_seq_length = saved
