"""Recognising an annotation file by what it holds, not by its name: the pieces every reader's `detect` uses.

A reader's `detect(path)` scores how sure it is that it reads `path`: `BY_CONTENT` when the file's first bytes
(or a table's columns) are its format's, `BY_SUFFIX` when only the file's suffix is its own (so a damaged file
still reaches the reader that names what is wrong with it), 0 otherwise. Only the head of a file is looked at,
so recognising a large export costs no more than a small one.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from storage.errors import ThinsliceError
from storage.files import open_regular
from storage.tables import delimited_header

BY_CONTENT = 0.9
BY_SUFFIX = 0.05
HEAD_BYTES = 64 * 1024


def head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """The first `size` bytes of a regular file; b"" for anything that cannot be read."""
    try:
        with open_regular(path) as fh:
            return fh.read(size)
    except (OSError, ThinsliceError):
        return b""


def head_text(path: Path, size: int = HEAD_BYTES) -> str:
    """The head of a file as UTF-8 text, a byte that is not UTF-8 replaced, without a last line that the
    head may have cut."""
    raw = head(path, size)
    if len(raw) == size and b"\n" in raw:
        raw = raw[: raw.rfind(b"\n") + 1]
    return raw.decode("utf-8-sig", errors="replace")


def score(path: Path, extension: str, recognised: bool) -> float:
    """`BY_CONTENT` when the content was recognised, else `BY_SUFFIX` for a file named with `extension`."""
    if recognised:
        return BY_CONTENT
    path = Path(path)
    return BY_SUFFIX if path.is_file() and path.suffix.lower() == extension.lower() else 0.0


def has_columns(columns: Iterable[str], needed: Iterable[str]) -> bool:
    """Whether `columns` include every one of `needed`."""
    return set(needed) <= set(columns)


def table_columns(path: Path, form: str) -> list[str]:
    """The columns of a table in `form` (`delimited`, `jsonl` or `parquet`), read from its head; [] when the
    file is not such a table."""
    path = Path(path)
    if not path.is_file():
        return []
    if form == "parquet":
        if head(path, 4) != b"PAR1":
            return []
        try:
            return list(pl.read_parquet_schema(path))
        except Exception:  # polars raises several unrelated types for a damaged file; then it is not one
            return []
    if form == "jsonl":
        first = next((line for line in head_text(path).splitlines() if line.strip()), "")
        try:
            record = json.loads(first)
        except ValueError:
            return []
        return [str(key) for key in record] if isinstance(record, dict) else []
    raw = head(path)
    if len(raw) == HEAD_BYTES and b"\n" not in raw:
        return []   # no line of text in the head: not a delimited table (a recording chosen by mistake)
    try:  # the header alone says what the table is; a damaged row further on is the reader's to name
        return delimited_header(path)[0]
    except (ThinsliceError, OSError):
        return []
