"""Stimulus ids in natural order: each run of digits compares as the number it writes (0, 1, 2, 10, 100;
clip-9 before clip-10), text runs as text, and a number before text at the same place.

The key is computed once, as a stimulus is imported (`stimulus.sort_key`), because computing it costs far
more than sorting by it: a window that sorts a million stimuli by id reads a page of them ordered by the
stored key in milliseconds.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from storage.frame_sql import evaluate_sql

if TYPE_CHECKING:   # the store loads this module on opening: polars waits for an import
    import polars as pl


def _number_key(digits: str) -> str:
    """SQL for the key of a digit run, given its digits without leading zeros (SQL text): a mark (chr(1), below
    any character of text), the digits' count, then the digits, so that comparing keys as text compares the
    numbers however many digits they have."""
    return f"chr(1) || lpad(CAST(length({digits}) AS VARCHAR), 6, '0') || {digits}"


def natural_key_sql(column: str) -> str:
    """SQL for the natural sort key of the text in `column`: each digit run replaced by its `_number_key`, text
    kept as it is, so that ids equal as numbers ("01", "1") get equal keys (the readers order those by their
    text).

    Most ids are text ending in one number ("clip-12", "0042"): their key is made from the text and the number
    directly, two thirds of the cost of splitting the id into runs. Other ids are split; the split is made of
    every row (of an empty text for the first kind), since DuckDB takes twice as long over a list's lambda
    inside a branch of a CASE."""
    one_number = f"regexp_full_match({column}, '[^0-9]*[0-9]+')"
    # the trailing number's digits from its first that is not 0 (none for a number of zeros)
    number = f"regexp_extract({column}, '[1-9][0-9]*$')"
    direct = f"CASE WHEN {one_number} THEN regexp_extract({column}, '^[^0-9]*') || {_number_key(number)} ELSE '' END"
    run = _number_key("ltrim(p, '0')")
    split = (f"array_to_string(list_transform(regexp_extract_all(CASE WHEN {one_number} THEN '' ELSE {column} END,"
             f" '[0-9]+|[^0-9]+'), lambda p: CASE WHEN p[1] BETWEEN '0' AND '9' THEN {run} ELSE p END), '')")
    return f"{direct} || {split}"


def natural_keys(ids: pl.Series) -> pl.Series:
    """`natural_key_sql` of each id (null for null): an import finds its new stimuli's keys while it checks the
    rest of its table, rather than as it writes them."""
    import polars as pl

    return evaluate_sql(pl.DataFrame({"id": ids}), natural_key_sql("id")).cast(pl.String)
