"""Generic flat tables keyed by the dataset's own stimulus ids: Parquet, CSV and JSON lines.

One row per label with the columns of `ROW_FIELDS` (`meta` as a JSON object, in CSV and Parquet as its
JSON text). The JSON-lines file is exactly the sidecar that the importers read from
`annotations/thinslice_annotations.jsonl`. Every field round-trips in all three.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from operator import methodcaller
from pathlib import Path
from typing import Any

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.importers.common import JsonRefused, ProblemLog, loads_json, read_jsonl, read_jsonl_table
from storage.importers.plan import FRAME_SCHEMAS
from storage.files import check_regular
from storage.exporters.common import (ROW_FIELDS, ExportContext, Loss, Row, atomic_write, column_reading,
                                      typed_reading)
from storage.exporters.report import ORIGIN_COLUMNS, Reading
from storage.exporters.sniff import has_columns, score, table_columns
from storage.tables import LINE, Table, read_table

SCHEMA = {"stimulus": pl.String, "annotator": pl.String, "label_set": pl.String, "label": pl.String,
          "start_s": pl.Float64, "end_s": pl.Float64, "value": pl.String, "note": pl.String,
          "media_role": pl.String, "meta": pl.String}
NEEDED = ("stimulus", "label_set", "label")  # the columns that make a table one of labels


def frame(rows: Sequence[Row]) -> pl.DataFrame:
    return pl.DataFrame([{**{k: r.get(k) for k in ROW_FIELDS},
                          "meta": json.dumps(r["meta"], ensure_ascii=False) if r.get("meta") else None}
                         for r in rows], schema=SCHEMA)


def meta_object(value: object, name: str, line: int | None) -> dict | None:
    """A label's `meta` as read (a JSON object, or its text in a table), or None when empty; `ImportFailed`
    naming file and line for anything else (a list, a number, text that is no JSON object)."""
    if value in (None, ""):
        return None
    try:
        meta = loads_json(value) if isinstance(value, str) else value
    except json.JSONDecodeError as exc:
        raise ImportFailed(RowProblem(name, line, "meta", f"<invalid JSON: {exc.msg}>", "a JSON object")) from None
    except JsonRefused as exc:
        raise ImportFailed(RowProblem(name, line, "meta", f"<{exc}>", "a JSON object")) from None
    if not isinstance(meta, dict):
        raise ImportFailed(RowProblem(name, line, "meta", f"<{type(meta).__name__}>", "a JSON object"))
    return meta or None


def _rows(table: Table) -> Reading:
    """Rows of a table read by the one table reader, each with its line (or record number)."""
    name = table.name
    missing = [c for c in NEEDED if c not in table.columns]
    if missing:
        raise ImportFailed(RowProblem(name, None, missing[0], f"columns {', '.join(table.columns)}",
                                      f"the columns {', '.join(ROW_FIELDS)}"))
    # a list or an object (a Parquet list column) where a field needs text or a time is refused, not its JSON text
    nested = sorted((lines[0], c) for c, lines in table.nested.items() if c in ROW_FIELDS and c != "meta")
    if nested:
        line, column = nested[0]
        text = table.frame.filter(pl.col(LINE) == line)[column].item()
        raise ImportFailed(RowProblem(name, line, column, repr(text), "text, or a number for a time; not a list"
                                      " or an object"))
    frame = table.frame.select(LINE, *[(pl.col(c) if c in table.columns else pl.lit(None, pl.String)).alias(c)
                                       for c in ROW_FIELDS]).with_columns(pl.col("start_s", "end_s").str.strip_chars())
    # the times converted at once, as the importers convert a number column (blank is none); the first text
    # that is not a finite number is refused with the importers' words
    times = {c: pl.col(c).cast(pl.Float64, strict=False) for c in ("start_s", "end_s")}
    wrong = {c: pl.col(c).ne("") & ~t.is_finite().fill_null(False) for c, t in times.items()}
    for line, *texts in frame.filter(pl.any_horizontal(*wrong.values())).head(1).select(
            LINE, *[pl.when(w).then(pl.col(c)) for c, w in wrong.items()]).iter_rows():
        column, text = next((c, t) for c, t in zip(times, texts) if t is not None)
        raise ImportFailed(RowProblem(name, line, column, repr(text), "a number, finite"))
    # each distinct `meta` checked and turned into the JSON text the store keeps once, in the order first met,
    # so the first bad one refused is the one on the earliest line
    stored: dict[str, str | None] = {}
    for text, line in frame.filter(pl.col("meta") != "").unique("meta", keep="first", maintain_order=True).select(
            "meta", LINE).iter_rows():
        meta = meta_object(text, name, line)
        stored[text] = json.dumps(meta) if meta else None
    meta = pl.col("meta").replace_strict(pl.Series(list(stored), dtype=pl.String),
                                         pl.Series(list(stored.values()), dtype=pl.String), default=None)
    labels = frame.select(*ROW_FIELDS).with_columns(**times, meta=meta).with_columns(
        pl.lit(name, pl.String).alias(ORIGIN_COLUMNS["file"]), pl.lit(None, pl.String).alias(ORIGIN_COLUMNS["tier"]),
        pl.lit(None, pl.Int64).alias(ORIGIN_COLUMNS["item"]), frame[LINE].alias(ORIGIN_COLUMNS["line"]))
    reading = Reading(labels=labels)
    reading.report.count_read(name, None, labels.height)
    return reading


class _Table:
    """A table holds every field of every label."""

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        return []


# the Arrow types a JSON-lines file's columns may have for its labels to be read as a table: values of one
# kind, the kind each field takes (a time's whole numbers are numbers too), and no meta
_PLAIN_TYPES = {"start_s": ("double", "int64", "null"), "end_s": ("double", "int64", "null"), "meta": ("null",)}


def _plain_labels(table: Any) -> pl.DataFrame | None:
    """The labels of a JSON-lines file read as an Arrow table (`read_jsonl_table`), typed as the readers type
    them; None when a field holds another kind of value than its own or any label has meta, which the
    line-by-line reading refuses or keeps value by value."""
    schema = FRAME_SCHEMAS["annotations"]
    present = set(table.column_names)
    for field in ROW_FIELDS:
        if field in present and str(table.schema.field(field).type) not in _PLAIN_TYPES.get(field, ("string", "null")):
            return None
    return pl.from_arrow(table.select([f for f in schema if f in present])).select(
        [(pl.col(f) if f in present else pl.lit(None)).cast(t).alias(f) for f, t in schema.items()])


class ParquetExporter(_Table):
    name = "parquet"
    title = "Parquet table"
    extension = ".parquet"
    per_stimulus = False

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        data = frame(rows)
        context.report.count_written(Path(out_path).name, None, len(rows))
        return atomic_write(Path(out_path), context, lambda temp: data.write_parquet(temp))

    def read(self, path: Path) -> Reading:
        return _rows(read_table(check_regular(path), Path(path).name, form="parquet"))

    def detect(self, path: Path) -> float:
        return score(path, self.extension, has_columns(table_columns(path, "parquet"), NEEDED))


class CsvExporter(_Table):
    name = "csv"
    title = "CSV table"
    extension = ".csv"
    per_stimulus = False

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        data = frame(rows)
        context.report.count_written(Path(out_path).name, None, len(rows))
        return atomic_write(Path(out_path), context, lambda temp: data.write_csv(temp))

    def read(self, path: Path) -> Reading:
        return _rows(read_table(check_regular(path), Path(path).name, form="delimited"))

    def detect(self, path: Path) -> float:
        return score(path, self.extension, has_columns(table_columns(path, "delimited"), NEEDED))


class JsonLinesExporter(_Table):
    name = "jsonl"
    title = "JSON lines (the annotation sidecar format)"
    extension = ".jsonl"
    per_stimulus = False

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        text = "".join(json.dumps({k: r.get(k) for k in ROW_FIELDS}, ensure_ascii=False) + "\n" for r in rows)
        context.report.count_written(Path(out_path).name, None, len(rows))

        def write(temp: Path) -> None:
            temp.write_text(text, encoding="utf-8", newline="\n")
        return atomic_write(Path(out_path), context, write)

    def read(self, path: Path) -> Reading:
        name = Path(path).name
        table = read_jsonl_table(check_regular(path))
        labels = None if table is None else _plain_labels(table)
        if labels is not None:
            reading = typed_reading(name, labels, pl.lit(None, pl.String), pl.lit(None, pl.Int64),
                                    pl.int_range(1, labels.height + 1, dtype=pl.Int64))
            reading.report.count_read(name, None, labels.height)
            return reading
        # JSON lines as the table reader reads them, but with the values' own kinds (a list where a label is
        # expected is refused later, not turned into its text)
        records = read_jsonl(check_regular(path), ProblemLog(skip_bad=False, limit=1), name)
        lines, values = (list(column) for column in zip(*records)) if records else ([], [])
        columns = {k: list(map(methodcaller("get", k), values)) for k in ROW_FIELDS}
        columns["meta"] = [None if meta is None else meta_object(meta, name, line)
                           for meta, line in zip(columns["meta"], lines)]
        reading = column_reading(name, columns, None, lines)
        reading.report.count_read(name, None, len(lines))
        return reading

    def detect(self, path: Path) -> float:
        return score(path, self.extension, has_columns(table_columns(path, "jsonl"), NEEDED))
