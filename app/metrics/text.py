"""EchoMind text metrics: word error rate, sentence BLEU and ROUGE-L F.

- WER is computed per utterance (word-level Levenshtein distance / reference words) and then
  averaged, as EchoMind does. The default normaliser lower-cases, deletes apostrophes (so
  "don't" stays one word) and turns every other character that is not a letter, digit,
  underscore or whitespace into a space, then collapses whitespace. EchoMind's own script
  scores raw strings; pass ``normalize=False`` for that.
- BLEU is NLTK's sentence BLEU definition (up to 4-grams, equal weights, clipped counts,
  brevity penalty against the reference, smoothing method 1: a zero n-gram count becomes
  0.1 / number of candidate n-grams; 0 when no unigram matches) on lower-cased tokens. The
  tokenizer is named in every result: EchoMind calls ``word_tokenize``, which needs the punkt
  data to split sentences; offline we run its word tokenizer (``NLTKWordTokenizer``) on the
  whole text, or NLTK's classic ``TreebankWordTokenizer`` on request. Neither needs NLTK data.
  NLTK is imported on first use (it costs more than a second).
- ROUGE-L F is the LCS-based F-measure (beta 1) on the tokens the ``rouge-score`` package makes
  by default: lower-case, runs of [a-z0-9] only, no stemming.
EchoMind scores an empty reference or candidate as 0 for BLEU and ROUGE-L; so do we.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

import polars as pl

BleuTokenizer = Literal["nltk_word", "treebank"]
BLEU_TOKENIZERS: dict[str, str] = {
    "nltk_word": "NLTK NLTKWordTokenizer (word_tokenize without punkt sentence splitting), lower-cased",
    "treebank": "NLTK TreebankWordTokenizer, lower-cased",
}
WER_NORMALIZER = "lower-case, apostrophes removed, other punctuation to spaces, whitespace collapsed"
_SMOOTHING_EPSILON = 0.1
_APOSTROPHES = re.compile(r"['\u2019]")
_NOT_WORD = re.compile(r"[^\w\s]")
_ROUGE_NON_TOKEN = re.compile(r"[^a-z0-9]+")


def normalize_for_wer(text: str) -> str:
    """The text as WER compares it (see the module notes)."""
    text = _APOSTROPHES.sub("", text.lower())
    return " ".join(_NOT_WORD.sub(" ", text).split())


def _edit_distance(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Word-level Levenshtein distance (substitutions, deletions, insertions all cost 1)."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref_word in enumerate(reference, start=1):
        current = [i]
        for j, hyp_word in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref_word != hyp_word)))
        previous = current
    return previous[-1]


def word_error_rate(reference: str, hypothesis: str, normalize: bool = True) -> float:
    """WER of one utterance; NaN when the reference has no words (undefined)."""
    if normalize:
        reference, hypothesis = normalize_for_wer(reference), normalize_for_wer(hypothesis)
    ref_words, hyp_words = reference.split(), hypothesis.split()
    if not ref_words:
        return math.nan
    return _edit_distance(ref_words, hyp_words) / len(ref_words)


@dataclass(frozen=True)
class WerSummary:
    """Mean of per-utterance WERs; utterances with an empty reference are skipped and counted."""

    mean: float
    n: int
    n_skipped: int
    per_utterance: tuple[float, ...]
    normalizer: str


def mean_word_error_rate(references: Sequence[str], hypotheses: Sequence[str], normalize: bool = True) -> WerSummary:
    """WER per utterance, then averaged (EchoMind's ASR figure). A missing hypothesis counts as empty."""
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    scores = tuple(word_error_rate(r or "", h or "", normalize) for r, h in zip(references, hypotheses))
    defined = [s for s in scores if not math.isnan(s)]
    return WerSummary(
        mean=sum(defined) / len(defined) if defined else math.nan,
        n=len(defined),
        n_skipped=len(scores) - len(defined),
        per_utterance=scores,
        normalizer=WER_NORMALIZER if normalize else "none (raw whitespace split)",
    )


@cache
def _tokenizer(name: BleuTokenizer) -> Callable[[str], list[str]]:
    if name == "nltk_word":
        from nltk.tokenize.destructive import NLTKWordTokenizer

        return NLTKWordTokenizer().tokenize
    if name == "treebank":
        from nltk.tokenize.treebank import TreebankWordTokenizer

        return TreebankWordTokenizer().tokenize
    raise ValueError(f"unknown BLEU tokenizer {name!r}; choose one of {', '.join(BLEU_TOKENIZERS)}")


def bleu_tokens(text: str, tokenizer: BleuTokenizer = "nltk_word") -> list[str]:
    """Lower-cased tokens as BLEU sees them."""
    return _tokenizer(tokenizer)(text.lower())


def _ngram_counts(tokens: Sequence[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu_from_tokens(reference: Sequence[str], candidate: Sequence[str], max_n: int = 4) -> float:
    """Sentence BLEU with smoothing method 1 for one reference (see the module notes)."""
    if not candidate:
        return 0.0
    log_sum = 0.0
    for n in range(1, max_n + 1):
        candidate_counts = _ngram_counts(candidate, n)
        reference_counts = _ngram_counts(reference, n)
        matches = sum(min(count, reference_counts[gram]) for gram, count in candidate_counts.items())
        total = max(1, sum(candidate_counts.values()))
        if n == 1 and matches == 0:
            return 0.0
        precision = matches / total if matches else _SMOOTHING_EPSILON / total
        log_sum += math.log(precision) / max_n
    c, r = len(candidate), len(reference)
    brevity = 1.0 if c > r else math.exp(1.0 - r / c)
    return brevity * math.exp(log_sum)


def bleu(reference: str, candidate: str, tokenizer: BleuTokenizer = "nltk_word") -> float:
    """Sentence BLEU of ``candidate`` against one ``reference``; 0 when either is blank."""
    if not reference.strip() or not candidate.strip():
        return 0.0
    return bleu_from_tokens(bleu_tokens(reference, tokenizer), bleu_tokens(candidate, tokenizer))


def rouge_tokens(text: str) -> list[str]:
    """Tokens as ``rouge-score`` makes them by default (lower-case runs of [a-z0-9])."""
    return _ROUGE_NON_TOKEN.sub(" ", text.lower()).split()


def _lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    previous = [0] * (len(b) + 1)
    for a_token in a:
        current = [0]
        for j, b_token in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if a_token == b_token else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rouge_l_f(reference: str, candidate: str) -> float:
    """ROUGE-L F-measure: LCS / len(candidate) and LCS / len(reference), harmonic mean."""
    if not reference.strip() or not candidate.strip():
        return 0.0
    ref_tokens, cand_tokens = rouge_tokens(reference), rouge_tokens(candidate)
    if not ref_tokens or not cand_tokens:
        return 0.0
    lcs = _lcs_length(ref_tokens, cand_tokens)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(cand_tokens), lcs / len(ref_tokens)
    return 2.0 * precision * recall / (precision + recall)


def text_overlap_table(
    frame: pl.DataFrame,
    reference_col: str = "reference",
    candidate_col: str = "answer",
    group_by: Sequence[str] = ("model",),
    tokenizer: BleuTokenizer = "nltk_word",
) -> pl.DataFrame:
    """Mean BLEU and ROUGE-L F per group for open responses.

    Expects ``frame`` with the ``group_by`` columns, a reference text column and a candidate
    text column (null counts as empty, so it scores 0). Returns the group columns plus ``n``,
    ``bleu``, ``rouge_l_f`` (means) and ``bleu_tokenizer`` (which tokenizer made the tokens).
    """
    refs = frame[reference_col].cast(pl.String).fill_null("").to_list()
    cands = frame[candidate_col].cast(pl.String).fill_null("").to_list()
    scored = frame.select(list(group_by)).with_columns(
        pl.Series("bleu", [bleu(r, c, tokenizer) for r, c in zip(refs, cands)], dtype=pl.Float64),
        pl.Series("rouge_l_f", [rouge_l_f(r, c) for r, c in zip(refs, cands)], dtype=pl.Float64),
    )
    return (
        scored.group_by(list(group_by))
        .agg(pl.len().alias("n"), pl.col("bleu").mean(), pl.col("rouge_l_f").mean())
        .with_columns(pl.lit(BLEU_TOKENIZERS[tokenizer]).alias("bleu_tokenizer"))
        .sort(list(group_by))
    )


def wer_table(
    frame: pl.DataFrame,
    reference_col: str = "reference",
    hypothesis_col: str = "answer",
    group_by: Sequence[str] = ("model",),
    normalize: bool = True,
) -> pl.DataFrame:
    """Mean per-utterance WER per group (EchoMind ASR).

    Expects the ``group_by`` columns, a reference transcript column and a hypothesis column.
    Returns the group columns plus ``n`` (utterances scored), ``n_skipped`` (empty references),
    ``wer`` (mean) and ``normalizer``.
    """
    refs = frame[reference_col].cast(pl.String).fill_null("").to_list()
    hyps = frame[hypothesis_col].cast(pl.String).fill_null("").to_list()
    scored = frame.select(list(group_by)).with_columns(
        pl.Series("wer", [word_error_rate(r, h, normalize) for r, h in zip(refs, hyps)], dtype=pl.Float64)
    )
    description = WER_NORMALIZER if normalize else "none (raw whitespace split)"
    return (
        scored.group_by(list(group_by))
        .agg(
            pl.col("wer").is_not_nan().sum().alias("n"),
            pl.col("wer").is_nan().sum().alias("n_skipped"),
            pl.col("wer").filter(pl.col("wer").is_not_nan()).mean().alias("wer"),
        )
        .with_columns(pl.lit(description).alias("normalizer"))
        .sort(list(group_by))
    )
