"""Reading one table file as text: CSV, TSV, JSON lines, JSON or Parquet, with each row's line. The one reader
of every table a user names: the release importers and the annotation readers alike, so that one kind of
damage (a ragged row, UTF-16 text, a quote never closed) gets one message, naming file and line, wherever the
table came in.

Every column is a string (numbers as written, booleans as true/false, nested JSON values dumped, and their
lines kept in `Table.nested`) and an empty field is null. Each row keeps where it came from: its 1-based line in a delimited or JSON-lines file (the CSV
header is line 1), its record number in a JSON or Parquet file. A delimited file whose rows are one line each
(the usual case) is read by polars, which is fast enough for millions of rows; one with blank lines, line
breaks inside quoted fields, ragged rows or a repeated column name is read again row by row, so that every row
has its true line and a bad row is a problem of that line (skipped with --skip-bad) rather than of the file.
A row with fewer or more fields than the header is such a problem: it is never padded with nulls.
"""
from __future__ import annotations

import csv
import io
import json
import mmap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.files import utf16_hint
from storage.importers.common import ProblemLog, read_json, read_jsonl

LINE = "__line"
DELIMITED_SUFFIXES = (".csv", ".tsv", ".tab", ".txt")
TABLE_SUFFIXES = (*DELIMITED_SUFFIXES, ".jsonl", ".ndjson", ".json", ".parquet")
# An object holding its records under one of these keys (or as its only list of objects) is a table.
_RECORD_KEYS = ("data", "rows", "records", "items", "results", "predictions")


@dataclass
class Table:
    """A table read as text. `frame` holds the columns and, first, `LINE`: each row's line or record number."""

    name: str              # shown in problems, e.g. "validation/data/metadata.csv"
    frame: pl.DataFrame
    # column -> the lines (record numbers) whose value was a list or an object, dumped as JSON text: a field
    # that needs a name or a number can refuse it rather than take its text
    nested: dict[str, list[int]] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        return [c for c in self.frame.columns if c != LINE]

    @property
    def data(self) -> pl.DataFrame:
        """The columns without the line numbers."""
        return self.frame.drop(LINE)

    @property
    def lines(self) -> list[int]:
        return self.frame[LINE].to_list()

    def rows(self) -> Iterable[tuple[int, dict[str, str | None]]]:
        """(line, {column: text}) for every row, in file order."""
        return zip(self.frame[LINE].to_list(), self.data.iter_rows(named=True))


FORMS = ("delimited", "jsonl", "json", "parquet")


def form_of(path: Path) -> str | None:
    """The form a file's suffix says it is in (one of `FORMS`), or None."""
    suffix = Path(path).suffix.lower()
    if suffix in DELIMITED_SUFFIXES:
        return "delimited"
    return {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet"}.get(suffix)


def read_table(path: Path, name: str | None = None, log: ProblemLog | None = None,
               n_rows: int | None = None, *, form: str | None = None) -> Table:
    """Read a table file; malformed rows go to `log` (without one, the first fails the read).

    `form` (one of `FORMS`) is how to read it when its content, not its suffix, said so; by default the
    suffix decides. Raises `ImportFailed` naming `name` (default: the file name) for a file that cannot be
    read at all: not there, not UTF-8, no header, not JSON, not Parquet. `n_rows` reads only the first rows
    (for a preview). No size is refused here: a table a program wrote may be of any size, and a reader of a
    file a person writes checks its limit first (`storage.files.check_regular`).
    """
    path = Path(path)
    name = name or path.name
    log = log if log is not None else ProblemLog(skip_bad=False, limit=1)
    suffix = path.suffix.lower()
    form = form or form_of(path)
    if not path.is_file():
        raise ImportFailed(RowProblem(name, None, None, "<no such file>", "an existing file"))
    if form == "delimited":
        return _read_delimited(path, name, log, n_rows)
    if form == "jsonl":
        records = read_jsonl(path, log, name, max_bytes=None)
        return _records_table(name, records[:n_rows] if n_rows else records)
    if form == "json":
        return _records_table(name, _json_records(path, name, log)[:n_rows or None])
    if form == "parquet":
        return _read_parquet(path, name, n_rows)
    raise ImportFailed(RowProblem(name, None, None, f"<a {suffix or 'suffix-less'} file>",
                                  "a .csv, .tsv, .jsonl, .json or .parquet table"))


# -- delimited ----------------------------------------------------------------------------------------

def _decode(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ImportFailed(RowProblem(name, line, None, f"<byte 0x{raw[exc.start]:02x} that is not UTF-8"
                                      f"{utf16_hint(raw)}>", "UTF-8 text")) from None


def delimited_header(path: Path, name: str | None = None) -> tuple[list[str], str]:
    """The column names of a delimited table and its delimiter, from the first line alone (a tab in a .tsv or
    .tab file, else whichever of comma, semicolon and tab the header holds most of). Raises `ImportFailed`
    for a file without a header row or whose first line is not UTF-8."""
    path = Path(path)
    name = name or path.name
    try:
        with path.open("rb") as fh:
            first = _decode(fh.readline(), name)
    except OSError as exc:
        raise ImportFailed(RowProblem(name, None, None, f"<unreadable: {exc.strerror}>", "a readable file")) from None
    if not first.strip():
        raise ImportFailed(RowProblem(name, 1, None, "<no header row>", "a header row naming the columns"))
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") else max(",;\t", key=first.count)
    try:
        header = next(csv.reader([first.rstrip("\r\n")], delimiter=delimiter))
    except csv.Error:  # a quoted name holding a line break: the whole read names what is wrong
        header = []
    return [h.strip() for h in header], delimiter


def _read_delimited(path: Path, name: str, log: ProblemLog, n_rows: int | None) -> Table:
    _, delimiter = delimited_header(path, name)
    fast = _read_fast(path, delimiter, n_rows)
    if fast is not None:
        return Table(name, fast)
    return _read_by_row(_decode(path.read_bytes(), name), name, delimiter, log, n_rows)


def _read_fast(path: Path, delimiter: str, n_rows: int | None) -> pl.DataFrame | None:
    """The table read by polars, or None when a row's index would not be its line (a blank line, an empty
    row, a line break inside a quoted field) or polars refuses the file (ragged rows, bytes that are not
    UTF-8: the row-by-row path names their lines)."""
    try:
        frame = pl.read_csv(path, separator=delimiter, infer_schema=False, n_rows=n_rows,
                            empty_string_is_null=True, raise_if_empty=True)
    except (pl.exceptions.PolarsError, OSError):
        return None
    if any("_duplicated_" in c for c in frame.columns) or any(c != c.strip() for c in frame.columns):
        return None
    if frame.width and frame.height and frame.select(pl.all_horizontal(pl.all().is_null()).any()).item():
        return None
    # Only a quoted field can hold a line break; looking for a quote in the mapped file is far cheaper than
    # looking for a line break in every field.
    if frame.width and frame.height and _has_quote(path) and frame.select(
            pl.any_horizontal(pl.all().str.contains("\n", literal=True)).any()).item():
        return None
    # polars fills a short row's missing fields with nulls, so a short row always ends in a null: a file whose
    # last column is never empty costs nothing more, and another is read through once more, strictly.
    if frame.width > 1 and frame.height and frame[frame.columns[-1]].null_count():
        if not _every_row_full(path, delimiter, frame.height):
            return None
    return _with_lines(frame, 2)


def _with_lines(frame: pl.DataFrame, first: int) -> pl.DataFrame:
    """`frame` with its rows' lines (`LINE`, Int64) counted from `first`, as its first column.

    The line column is split where the frame's other columns are split into chunks. A parallel reader's
    columns come in hundreds of chunks, and a column of one chunk beside them makes polars realign every
    column at each later step over the frame (a third of a second per step at 10M rows)."""
    columns = frame.get_columns()
    lengths = columns[0].chunk_lengths() if columns else []
    if not columns or any(c.chunk_lengths() != lengths for c in columns[1:]):
        return frame.with_row_index(LINE, offset=first).with_columns(pl.col(LINE).cast(pl.Int64))
    starts = [first]
    for length in lengths:
        starts.append(starts[-1] + length)
    pieces = [pl.int_range(start, end, dtype=pl.Int64, eager=True) for start, end in zip(starts, starts[1:])]
    lines = pl.concat(pieces, rechunk=False) if pieces else pl.Series(dtype=pl.Int64)
    return pl.DataFrame([lines.alias(LINE), *columns])


def _every_row_full(path: Path, delimiter: str, rows: int) -> bool:
    """Whether every one of the `rows` rows has as many fields as the header, by DuckDB's own CSV reader,
    strict about the count of fields: it streams the file, so a table of any size is checked in constant
    memory (reading the file's lines into memory cost several times its size)."""
    try:
        with duckdb.connect() as con:
            found = con.execute(
                "SELECT count(*) FROM read_csv(?, delim = ?, quote = '\"', escape = '\"', header = true,"
                " all_varchar = true, strict_mode = true, null_padding = false)", [str(path), delimiter]).fetchone()
    except duckdb.Error:   # a short row (or anything else it cannot read): the row-by-row reader names it
        return False
    return found is not None and found[0] == rows


def _has_quote(path: Path) -> bool:
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        return mapped.find(b'"') != -1


def _read_by_row(text: str, name: str, delimiter: str, log: ProblemLog, n_rows: int | None) -> Table:
    # strict: a quote opened and never closed is an error, not a field swallowing the rest of the file
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    start = 1
    try:
        header = [h.strip() for h in next(reader)]
        rows: list[list[str | None]] = []
        lines: list[int] = []
        start = reader.line_num + 1
        for record in reader:
            line, start = start, reader.line_num + 1
            if not any(field.strip() for field in record):
                continue
            if len(record) != len(header):
                log.add(name, line, None, f"<{len(record)} fields>", f"{len(header)} fields as in the header")
                continue
            rows.append([field if field != "" else None for field in record])
            lines.append(line)
            if n_rows is not None and len(rows) >= n_rows:
                break
    except csv.Error as exc:
        if "end of data" in str(exc):
            raise ImportFailed(RowProblem(name, start, None, "<a quote opened in this row and never closed>",
                                          "a closing quote for every opening one")) from None
        raise ImportFailed(RowProblem(name, reader.line_num, None, f"<{exc}>", "well-formed CSV")) from None
    return Table(name, _frame(name, header, rows, lines, log))


def _frame(name: str, header: list[str], rows: list[list[str | None]], lines: list[int],
           log: ProblemLog) -> pl.DataFrame:
    seen: dict[str, int] = {}
    unique = []
    for column in header:
        if column in seen:
            log.add(name, 1, column, "<a repeated column name>", "unique column names")
            seen[column] += 1
            column = f"{column}_{seen[column]}"
        seen.setdefault(column, 1)
        unique.append(column)
    data: dict[str, list[Any]] = {LINE: lines}
    data.update({c: [row[i] for row in rows] for i, c in enumerate(unique)})
    return pl.DataFrame(data, schema={LINE: pl.Int64, **{c: pl.String for c in unique}})


# -- records ------------------------------------------------------------------------------------------

def _json_records(path: Path, name: str, log: ProblemLog) -> list[tuple[int, dict[str, Any]]]:
    value = read_json(path, name)
    if isinstance(value, dict):
        lists = [value[k] for k in _RECORD_KEYS if isinstance(value.get(k), list)]
        if not lists:
            lists = [v for v in value.values() if isinstance(v, list) and v and isinstance(v[0], dict)]
        value = lists[0] if len(lists) == 1 else [value]
    if not isinstance(value, list):
        raise ImportFailed(RowProblem(name, None, None, f"<{type(value).__name__}>",
                                      "a list of objects, or an object holding one"))
    records = []
    for number, item in enumerate(value, start=1):
        if isinstance(item, dict):
            records.append((number, item))
        else:
            log.add(name, number, None, f"<{type(item).__name__}>", "a JSON object in each record")
    return records


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value if value != "" else None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _records_table(name: str, records: list[tuple[int, dict[str, Any]]]) -> Table:
    columns: dict[str, None] = {}
    for _, record in records:
        for key in record:
            columns.setdefault(str(key), None)
    data: dict[str, list[Any]] = {LINE: [number for number, _ in records]}
    data.update({column: [_as_text(record.get(column)) for _, record in records] for column in columns})
    nested: dict[str, list[int]] = {}
    for number, record in records:
        for key, value in record.items():
            if isinstance(value, (list, dict)):
                nested.setdefault(str(key), []).append(number)
    return Table(name, pl.DataFrame(data, schema={LINE: pl.Int64, **{c: pl.String for c in columns}}), nested)


def _parquet_damage(path: Path) -> str:
    """What is wrong with a Parquet file polars cannot read, as its writer would say it: every Parquet file
    ends with the mark PAR1, so one without it was cut short (or is no Parquet file); one with it is damaged
    inside."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(path.stat().st_size - 4, 0))
            whole = fh.read() == b"PAR1"
    except OSError:
        whole = False
    return ("Parquet data that cannot be read: the file is damaged inside" if whole else
            "a file cut short, or not Parquet: it does not end with the mark every Parquet file ends with")


def _read_parquet(path: Path, name: str, n_rows: int | None) -> Table:
    try:
        frame = pl.read_parquet(path, n_rows=n_rows)
    except Exception:  # polars raises several unrelated types, in its own words, for damaged files
        raise ImportFailed(RowProblem(name, None, None, f"<{_parquet_damage(path)}>", "a Parquet file")) from None
    texts = []
    nested: dict[str, list[int]] = {}
    for column, dtype in frame.schema.items():
        if dtype == pl.String:
            texts.append(pl.col(column).replace("", None))
        elif isinstance(dtype, (pl.List, pl.Struct, pl.Array)) or dtype == pl.Object:
            nested[column] = [index + 1 for index in frame[column].is_not_null().arg_true().to_list()]
            texts.append(pl.col(column).map_elements(
                lambda v: _as_text(v.to_list() if isinstance(v, pl.Series) else v), return_dtype=pl.String,
                skip_nulls=True))
        else:
            texts.append(pl.col(column).cast(pl.String))
    frame = _with_lines(frame.select(texts), 1)
    return Table(name, frame, {column: lines for column, lines in nested.items() if lines})
