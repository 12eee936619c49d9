"""Stimulus ids in natural order: each run of digits compares as the number it writes (0, 1, 2, 10, 100;
clip-9 before clip-10), text runs as text, and a number before text at the same place.

The key is computed once, when a stimulus is written (`stimulus.sort_key`), because computing it costs far
more than sorting by it: a window that sorts a million stimuli by id reads a page of them ordered by the
stored key in milliseconds.
"""
from __future__ import annotations


def natural_key_sql(column: str) -> str:
    """SQL for the natural sort key of the text in `column`. A digit run becomes a mark (chr(1), below any
    character of text), its length without leading zeros, then those digits, so that comparing the keys as
    text compares the numbers, however many digits they have; ids equal as numbers ("01", "1") get equal
    keys, and the readers order those by their text."""
    return (f"array_to_string(list_transform(regexp_extract_all({column}, '[0-9]+|[^0-9]+'), lambda p:"
            " CASE WHEN p[1] BETWEEN '0' AND '9' THEN chr(1) || lpad(CAST(length(ltrim(p, '0')) AS VARCHAR),"
            " 6, '0') || ltrim(p, '0') ELSE p END), '')")
