"""Whether a model's answer is right, by the rule every results table follows, whichever path reads it.

A table's own correctness column is read by its words (`TRUE_WORDS`, `FALSE_WORDS`, any case); without one,
an answer is right when it equals the row's label ignoring case, and unknown (null) when either is missing.
An import evaluates the rule over its plan's frame and a release read in place over its files inside a DuckDB
view. The comparison of answer and label runs in DuckDB (`lower`) on both paths: polars lowercases some
letters differently (a final sigma, a dotted capital I), and one answer must not be right when imported and
wrong when read in place.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from storage.frame_sql import evaluate_sql
from storage.importers.words import FALSE_WORDS, TRUE_WORDS

if TYPE_CHECKING:   # the store loads this module on opening (for attached releases): polars waits for an import
    import polars as pl


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def correct_word_sql(text: str) -> str:
    """SQL of a correctness column's value (`text`, an SQL text expression): true, false, or null for
    anything that is none of the words."""
    lowered = f"lower({text})"
    return (f"CASE WHEN {lowered} IN ({', '.join(map(_literal, sorted(TRUE_WORDS)))}) THEN true"
            f" WHEN {lowered} IN ({', '.join(map(_literal, sorted(FALSE_WORDS)))}) THEN false END")


def same_answer_sql(answer: str, label: str) -> str:
    """SQL of whether an answer equals the label ignoring case (null when either is null). Texts that are equal as
    they are need not be lowercased, and most right answers are: lowering is most of the cost over millions."""
    return f"CASE WHEN {answer} = {label} THEN true ELSE lower({answer}) = lower({label}) END"


def correct_word_expr(text: pl.Expr) -> pl.Expr:
    """`correct_word_sql` as a polars expression, for an import's typed frame. The words are plain ASCII, which
    polars and DuckDB lowercase alike, so the two read every text the same (a test holds them to it)."""
    import polars as pl

    lowered = text.str.to_lowercase()
    return pl.when(lowered.is_in(sorted(TRUE_WORDS))).then(True).when(lowered.is_in(sorted(FALSE_WORDS))) \
        .then(False).otherwise(None)


def same_answers(answers: pl.Series, labels: pl.Series) -> pl.Series:
    """Each answer against its row's label by `same_answer_sql`, named `correct`."""
    import polars as pl

    return evaluate_sql(pl.DataFrame({"a": answers, "l": labels}), same_answer_sql("a", "l")).cast(pl.Boolean) \
        .alias("correct")
