"""EchoMind text metrics against the reference packages: jiwer, NLTK and rouge-score."""
from __future__ import annotations

from pathlib import Path

import jiwer
import numpy as np
import polars as pl
import pytest
from nltk.tokenize.destructive import NLTKWordTokenizer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge_score import rouge_scorer

from app.metrics import (
    BLEU_TOKENIZERS,
    bleu,
    mean_word_error_rate,
    normalize_for_wer,
    rouge_l_f,
    text_overlap_table,
    wer_table,
    word_error_rate,
)

_VOCABULARY = "i you we the a school sad today really don't know why it's been so hard lately, okay? yes! no. well".split()


def _sentences(seed: int, count: int) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(count):
        reference = list(rng.choice(_VOCABULARY, rng.integers(1, 16)))
        hypothesis = [w for w in reference if rng.random() > 0.2]
        for _ in range(rng.integers(0, 4)):
            hypothesis.insert(int(rng.integers(0, len(hypothesis) + 1)), str(rng.choice(_VOCABULARY)))
        if rng.random() < 0.3:
            hypothesis = [w.capitalize() for w in hypothesis]
        pairs.append((" ".join(reference), " ".join(hypothesis)))
    return pairs


def test_wer_per_utterance_matches_jiwer_on_generated_sentences():
    for reference, hypothesis in _sentences(1, 200):
        ours = word_error_rate(reference, hypothesis)
        assert ours == pytest.approx(jiwer.wer(normalize_for_wer(reference), normalize_for_wer(hypothesis))), (reference, hypothesis)
        raw = word_error_rate(reference, hypothesis, normalize=False)
        assert raw == pytest.approx(jiwer.wer(reference, hypothesis))


def test_mean_wer_averages_utterances_not_words_and_skips_empty_references():
    summary = mean_word_error_rate(["one two three four", "hello", ""], ["one two three four", "goodbye", "x"])
    # Per utterance 0 and 1 -> mean 0.5 (word-pooled would be 1/5).
    assert summary.mean == pytest.approx(0.5) and summary.n == 2 and summary.n_skipped == 1
    assert "lower-case" in summary.normalizer


def test_wer_normaliser_ignores_case_and_punctuation_and_keeps_contractions_whole():
    assert normalize_for_wer("I don't KNOW, really... it's well-known!") == "i dont know really its well known"
    assert word_error_rate("Hello, world!", "hello world") == 0.0


def test_wer_table_per_model():
    frame = pl.DataFrame({"model": ["a", "a", "b"], "reference": ["one two", "three", "one two"], "answer": ["one", "three", None]})
    table = wer_table(frame)
    assert dict(zip(table["model"], table["wer"])) == {"a": 0.25, "b": 1.0}


def test_bleu_matches_nltk_sentence_bleu_with_smoothing_method_1():
    tokenize = NLTKWordTokenizer().tokenize
    smoothing = SmoothingFunction().method1
    for reference, candidate in _sentences(2, 300):
        expected = sentence_bleu([tokenize(reference.lower())], tokenize(candidate.lower()), smoothing_function=smoothing)
        assert bleu(reference, candidate) == pytest.approx(expected, abs=1e-12), (reference, candidate)


def test_bleu_edge_cases_and_treebank_option():
    assert bleu("", "anything") == 0.0 and bleu("the cat sat", "   ") == 0.0
    assert bleu("the cat sat on the mat", "dogs run") == 0.0
    assert bleu("I can't go.", "i can't go.", tokenizer="treebank") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="nltk_word"):
        bleu("a b", "a b", tokenizer="whitespace")


def test_rouge_l_matches_rouge_score_package():
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    for reference, candidate in _sentences(3, 300):
        expected = scorer.score(reference, candidate)["rougeL"].fmeasure
        assert rouge_l_f(reference, candidate) == pytest.approx(expected, abs=1e-12), (reference, candidate)


def test_text_overlap_table_names_its_tokenizer():
    frame = pl.DataFrame({"model": ["a", "a"], "reference": ["I feel sad today.", "Let's talk"], "answer": ["I feel sad today.", None]})
    table = text_overlap_table(frame)
    row = table.row(0, named=True)
    assert row["bleu"] == pytest.approx(0.5) and row["rouge_l_f"] == pytest.approx(0.5)
    assert row["bleu_tokenizer"] == BLEU_TOKENIZERS["nltk_word"]


def test_bleu_tokenizers_need_no_nltk_data(tmp_path: Path, monkeypatch):
    import nltk

    from app.metrics import text

    def no_download(*args, **kwargs):
        raise AssertionError("NLTK tried to download data")

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "no-data")])
    monkeypatch.setattr(nltk, "download", no_download)
    text._tokenizer.cache_clear()
    for tokenizer in BLEU_TOKENIZERS:
        assert 0.0 < bleu("The cat is on the mat.", "the cat is on a mat", tokenizer=tokenizer) < 1.0
    text._tokenizer.cache_clear()
