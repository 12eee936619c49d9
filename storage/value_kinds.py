"""The kind of Python value a typed column holds, and the values read from a file (JSON and the like) that are
of another kind: a list where a label is expected, true where a time is, a lone surrogate where text is.

Both the import plan (which refuses such rows as they are added, before polars would convert them) and the
values check in `storage.validation` (which holds labels to it) ask here, so the rule sits below both.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import polars as pl

LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# value kinds that always fit a column of that type (str needs its surrogate check, so it is not among them)
_PLAIN_KINDS: dict[Any, tuple[type, ...]] = {pl.Float64: (float, int, type(None)), pl.Int32: (int, type(None)),
                                             pl.Boolean: (bool, type(None))}
KIND_OF = {pl.String: "text", pl.Float64: "a number", pl.Int32: "a whole number", pl.Boolean: "true or false"}


def value_fits(value: Any, dtype: Any) -> bool:
    """Whether a Python value read from a file is of the kind a typed column holds (None always is)."""
    if value is None:
        return True
    if dtype == pl.String:
        # a lone surrogate (from a JSON escape) is no character and cannot be stored as UTF-8 text
        return isinstance(value, str) and (value.isascii() or not LONE_SURROGATE.search(value))
    if dtype == pl.Boolean:
        return isinstance(value, bool)
    if dtype == pl.Float64:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if dtype == pl.Int32:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(dtype, pl.List):
        return isinstance(value, (list, tuple)) and all(value_fits(v, dtype.inner) for v in value)
    return True


def wrong_kinds(schema: Mapping[str, Any], columns: Mapping[str, Sequence[Any]]) -> Iterator[tuple[int, str, Any, str]]:
    """(row index, column, value, expected kind) for each value of the wrong kind for its column's type in
    `schema`, column by column (`columns` holds each column's values in row order)."""
    for column, values in columns.items():
        dtype = schema[column]
        # the kinds present first (fast); only a column holding a suspect value is looked at value by value
        kinds = set(map(type, values))
        if kinds <= set(_PLAIN_KINDS.get(dtype, ())):
            continue
        if dtype == pl.String and kinds <= {str, type(None)}:
            text = "".join(filter(None, values))
            if text.isascii() or not LONE_SURROGATE.search(text):
                continue
        for index, value in enumerate(values):
            if not value_fits(value, dtype):
                yield index, column, value, KIND_OF.get(dtype, str(dtype))


def shown_value(value: Any) -> str:
    """A value found in a file as a refusal shows it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
