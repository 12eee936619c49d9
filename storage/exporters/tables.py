"""Generic flat tables keyed by the dataset's own stimulus ids: Parquet, CSV and JSON lines.

One row per label with the columns of `ROW_FIELDS` (`meta` as a JSON object, in CSV and Parquet as its
JSON text). The JSON-lines file is exactly the sidecar that the importers read from
`annotations/thinslice_annotations.jsonl`. Every field round-trips in all three.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.importers.common import JsonRefused, loads_json
from storage.files import check_regular, read_regular_bytes, read_regular_text
from storage.exporters.common import ROW_FIELDS, ExportContext, Loss, Row, atomic_write, blank_row
from storage.exporters.report import Origin, Reading

SCHEMA = {"stimulus": pl.String, "annotator": pl.String, "label_set": pl.String, "label": pl.String,
          "start_s": pl.Float64, "end_s": pl.Float64, "value": pl.String, "note": pl.String,
          "media_role": pl.String, "meta": pl.String}


def frame(rows: Sequence[Row]) -> pl.DataFrame:
    return pl.DataFrame([{**{k: r.get(k) for k in ROW_FIELDS},
                          "meta": json.dumps(r["meta"], ensure_ascii=False) if r.get("meta") else None}
                         for r in rows], schema=SCHEMA)


def _meta(value: object, name: str, line: int) -> dict | None:
    if value in (None, ""):
        return None
    try:
        meta = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError as exc:
        raise ImportFailed(RowProblem(name, line, "meta", f"<invalid JSON: {exc.msg}>", "a JSON object")) from None
    if not isinstance(meta, dict):
        raise ImportFailed(RowProblem(name, line, "meta", f"<{type(meta).__name__}>", "a JSON object"))
    return meta or None


def _rows(data: pl.DataFrame, name: str, first_line: int) -> Reading:
    """Rows of a table; `first_line` is the file line (or record number) of its first row."""
    missing = [c for c in ("stimulus", "label_set", "label") if c not in data.columns]
    if missing:
        raise ImportFailed(RowProblem(name, None, missing[0], f"columns {', '.join(data.columns)}",
                                      f"the columns {', '.join(ROW_FIELDS)}"))
    columns = [(pl.col(c) if c in data.columns else pl.lit(None)).cast(SCHEMA[c] if c not in ("start_s", "end_s")
                                                                      else pl.String).alias(c) for c in ROW_FIELDS]
    records = data.select(columns).to_dicts()
    reading = Reading(records)
    for number, row in enumerate(records, start=first_line):
        row["origin"] = Origin(name, None, None, number)
        for key in ("start_s", "end_s"):
            if row[key] is not None:
                try:
                    row[key] = float(row[key]) if row[key].strip() else None
                except ValueError:
                    raise ImportFailed(RowProblem(name, number, key, repr(row[key]), "a time in seconds")) from None
        if row["meta"] is not None:
            row["meta"] = _meta(row["meta"], name, number)
    reading.report.count_read(name, None, len(records))
    return reading


class _Table:
    """A table holds every field of every label."""

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        return []


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
        try:
            return _rows(pl.read_parquet(check_regular(path)), Path(path).name, 1)
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise ImportFailed(RowProblem(Path(path).name, None, None, f"<{exc}>", "a Parquet file")) from None


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
        try:
            # all as text: `_rows` reads the times and names the line of one that is not a number
            text = read_regular_text(path).removeprefix("\ufeff")
            data = pl.read_csv(text.encode("utf-8"), infer_schema=False)
        except (OSError, pl.exceptions.PolarsError) as exc:
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            raise ImportFailed(RowProblem(Path(path).name, None, None, f"<{first}>", "a CSV file")) from None
        return _rows(data, Path(path).name, 2)


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
        reading = Reading([])
        try:
            lines = read_regular_bytes(path).decode("utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ImportFailed(RowProblem(Path(path).name, None, None, f"<{exc}>", "a UTF-8 JSON-lines file")) from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = loads_json(line)
            except json.JSONDecodeError as exc:
                raise ImportFailed(RowProblem(Path(path).name, number, None, f"<invalid JSON: {exc.msg}>",
                                              "one JSON object per line")) from None
            except JsonRefused as exc:
                raise ImportFailed(RowProblem(Path(path).name, number, None, f"<{exc}>",
                                              "one JSON object per line")) from None
            if not isinstance(record, dict):
                raise ImportFailed(RowProblem(Path(path).name, number, None, f"<{type(record).__name__}>",
                                              "a JSON object"))
            reading.rows.append(blank_row(**{k: record.get(k) for k in ROW_FIELDS}, origin=Origin(name, None, None, number)))
            reading.rows[-1]["meta"] = _meta(record.get("meta"), name, number)
        reading.report.count_read(name, None, len(reading.rows))
        return reading
