"""Attach a predictions table kept as Parquet (one file or a folder of parts) as a new dataset, read in place.

The column map and what a mapped table holds are the generic importer's (`guess_mapping`, `table_kind` and its
check of a map); only a predictions table can be read in place. Its rows are checked by DuckDB queries over the
files, as the generic importer checks a table it reads: a stimulus id and a model on every row, correctness one of
the true/false words, a latency a finite number of 0 s or more, names without control characters, one answer per
stimulus, model and condition. Any bad row refuses the attach, naming file and row (all or nothing). Then, in one
transaction, the dataset, its stimuli (one per id, with the first row's label and split, as an import makes them),
models and runs are written to the store, the files recorded with their size and modification time, and the
views every read of predictions goes through made again (`storage/attached.py`); the predictions stay in the
files.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from storage.attached import (ATTACH_FIELDS, FILE_COLUMN, RUN_CONDITIONS, AttachedFile, Attachment, correct_sql,
                              literal, refresh_views, source_sql, value_sql)
from storage.errors import ImportCancelled, ImportFailed, RowProblem
from storage.files import check_regular
from storage.importers.common import MAP_FIELDS
from storage.importers.generic import WHITE_SPACE, check_mapping, guess_mapping, table_kind
from storage.natural_order import natural_key_sql
from storage.store import Store
from storage.validation import CONTROL_CHARACTERS, NAME_COLUMNS

IMPORTER = "parquet_in_place"
IMPORTER_VERSION = 1
SHOWN_ROWS = 20   # bad rows named per rule
SAMPLE_ROWS = 1000   # rows the column map is guessed from
# the plan's column of each field whose value is a name (no control characters): `NAME_COLUMNS` says which
_NAME_FIELDS = {"stimulus": "stimulus", "model": "model", "modality": "modality", "prompt": "prompt_setting",
                "vision": "vision_mode", "split": "split"}

Progress = Callable[[float, str], None]


@dataclass
class AttachSummary:
    """What an attach wrote and read: the dataset, counts of what the store gained, and notes on what was read and
    what was left out."""

    dataset: str
    dataset_id: int
    written: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)


def parquet_files(path: Path) -> list[Path]:
    """The Parquet files of `path`: the file itself, or every `*.parquet` under a folder, in name order. Each must
    be a regular file (of any size: a table a program wrote)."""
    path = Path(path).expanduser()
    if path.is_dir():
        found = sorted(p for p in path.rglob("*.parquet"))
        if not found:
            raise ImportFailed(RowProblem(str(path), None, None, "no .parquet files", "a folder of Parquet parts"))
    else:
        found = [path]
    return [check_regular(p, max_bytes=None).resolve() for p in found]


def _shown_name(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


def _schema(cur: duckdb.DuckDBPyConnection, files: list[Path], base: Path) -> tuple[dict[str, str], list[int]]:
    """The columns (name -> DuckDB type) the files hold together, and each file's row count; a file DuckDB cannot
    read as Parquet is named."""
    rows = []
    for path in files:
        try:
            rows.append(int(cur.execute(f"SELECT count(*) FROM read_parquet({literal(str(path))})").fetchall()[0][0]))
        except duckdb.Error as exc:
            raise ImportFailed(RowProblem(_shown_name(path, base), None, None,
                                          f"<unreadable: {str(exc).splitlines()[0]}>", "a Parquet file")) from None
    described = cur.execute(f"DESCRIBE SELECT * FROM read_parquet({_paths(files)}, union_by_name=true)").fetchall()
    return {name: str(kind) for name, kind, *_ in described}, rows


def _paths(files: list[Path]) -> str:
    return "[" + ", ".join(literal(str(p)) for p in files) + "]"


def _mapping(cur: duckdb.DuckDBPyConnection, files: list[Path], columns: dict[str, str],
             given: dict[str, str] | None, shown: str) -> dict[str, str]:
    """The map given, or the generic importer's guess from the first rows read as text; checked as the generic
    importer checks it, and refused unless it makes a predictions table of fields a view can read."""
    if given:
        mapping = dict(given)
    else:
        texts = ", ".join(f'CAST("{c}" AS VARCHAR) AS "{c}"' for c in (n.replace('"', '""') for n in columns))
        sample = cur.sql(f"SELECT {texts} FROM read_parquet({_paths(files)}, union_by_name=true)"
                         f" LIMIT {SAMPLE_ROWS}").pl()
        mapping = guess_mapping(sample.cast(pl.String))
    check_mapping(shown, mapping, list(columns))
    if table_kind(mapping) != "predictions":
        raise ImportFailed(RowProblem(shown, None, None, f"a table of {table_kind(mapping).replace('_', ' ')}"
                                      f" ({', '.join(f'{k}={v}' for k, v in sorted(mapping.items()))})",
                                      "a predictions table (--map model=COLUMN and answer, raw or correct) to read"
                                      " in place; import other tables"))
    others = sorted(set(mapping) - set(ATTACH_FIELDS))
    if others:
        raise ImportFailed(RowProblem(shown, None, others[0], f"<mapped: {', '.join(others)}>",
                                      "only fields a predictions table read in place holds: " + ", ".join(ATTACH_FIELDS)
                                      + "; import the table to keep the others"))
    nested = [(f, c) for f, c in mapping.items() if any(k in columns[c] for k in ("[]", "STRUCT", "MAP", "UNION"))]
    if nested:
        f, c = nested[0]
        raise ImportFailed(RowProblem(shown, None, c, f"<a column of {columns[c]}>",
                                      f"a {MAP_FIELDS[f]}: a name, a number or a text, not a list or object"))
    return mapping


def _read_as(cur: duckdb.DuckDBPyConnection, files: list[Path], columns: dict[str, str],
             mapping: dict[str, str]) -> dict[str, dict]:
    """How each mapped column is read: its type, and whether any text in it is padded or empty (then each value is
    trimmed and an empty one taken as missing, as the generic importer does; otherwise taken as it is)."""
    texts = sorted({c for c in mapping.values() if columns[c] == "VARCHAR"})
    padded: dict[str, bool] = {c: False for c in mapping.values()}
    if texts:
        blank = literal("".join(WHITE_SPACE))
        # only a first or last character can be trimmed: asking for those two is ten times faster than trimming
        checks = ", ".join(f'coalesce(bool_or("{c}" = \'\' OR contains({blank}, "{c}"[1])'
                           f' OR contains({blank}, "{c}"[-1])), false)' for c in (t.replace('"', '""') for t in texts))
        padded |= dict(zip(texts, cur.execute(f"SELECT {checks} FROM read_parquet({_paths(files)},"
                                              " union_by_name=true)").fetchall()[0]))
    return {c: {"type": columns[c], "padded": bool(padded[c])} for c in sorted(set(mapping.values()))}


def _checks(attachment: Attachment) -> list[tuple[str, str, str, str]]:
    """(bad-row condition, the user's column, the value shown, expected) for every rule a row must meet."""
    m, found = attachment.mapping, []
    for f in ("stimulus", "model"):
        found.append((f"{value_sql(attachment, f)} IS NULL", m[f], "'<empty>'", f"a {MAP_FIELDS[f]}"))
    if "correct" in m and attachment.columns[m["correct"]]["type"] != "BOOLEAN":
        text = value_sql(attachment, "correct")
        found.append((f"{text} IS NOT NULL AND ({correct_sql(attachment)}) IS NULL", m["correct"], text,
                      "true/false, yes/no or 1/0"))
    if "latency" in m:
        number, column = value_sql(attachment, "latency"), m["latency"]
        shown = f'CAST(f."{column.replace(chr(34), chr(34) * 2)}" AS VARCHAR)'
        found.append((f"{shown} IS NOT NULL AND trim({shown}) <> '' AND ({number} IS NULL OR NOT isfinite({number}))",
                      column, shown, "a number, finite"))
        found.append((f"isfinite({number}) AND {number} < 0", column, shown, "a finite time of 0 s or more"))
    names = set(NAME_COLUMNS["predictions"]) | set(NAME_COLUMNS["stimuli"])
    for f, plan_column in _NAME_FIELDS.items():
        if f in m and (plan_column in names or plan_column == "stimulus"):
            text = value_sql(attachment, f)
            found.append((f"regexp_matches({text}, {literal(CONTROL_CHARACTERS)})", m[f], text,
                          "text without control characters"))
    return found


def _key(attachment: Attachment) -> list[str]:
    """One prediction's key: stimulus, model and conditions (an unmapped condition is the same in every row)."""
    return [value_sql(attachment, f) or "''" for f in ("stimulus", "model", *RUN_CONDITIONS)]


def _problems(cur: duckdb.DuckDBPyConnection, attachment: Attachment, base: Path, source: str,
              progress: Progress) -> list[RowProblem]:
    """Every rule's bad rows (at most `SHOWN_ROWS` each), by file and row (from 1), found in one pass over the
    files and read again only for a rule some row breaks."""
    checks = _checks(attachment)
    key = ", ".join(_key(attachment))
    answered = cur.execute(
        "SELECT count(*), count(DISTINCT hash(" + key + "))"
        + "".join(f", coalesce(bool_or({bad}), false)" for bad, *_ in checks) + f" FROM {source} f").fetchall()[0]
    total, distinct, failing = answered[0], answered[1], answered[2:]
    progress(0.5, "rows checked")
    problems: list[RowProblem] = []
    order = f"list_position({_paths([Path(f.path) for f in attachment.files])}, f.{FILE_COLUMN}), f.file_row_number"
    for (bad, column, shown, expected), fails in zip(checks, failing):
        if fails:
            for file, row, value in cur.execute(
                    f"SELECT f.{FILE_COLUMN}, f.file_row_number + 1, {shown} FROM {source} f WHERE {bad}"
                    f" ORDER BY {order} LIMIT {SHOWN_ROWS}").fetchall():
                problems.append(RowProblem(_shown_name(Path(file), base), int(row), column,
                                           repr(value) if value not in (None, "<empty>") else "<empty>", expected))
    if distinct != total:   # a hash said two rows may share a key: find them, if they do
        keys = _key(attachment)
        for file, row, stimulus, model in cur.execute(
                f"SELECT file, row, stimulus, model FROM (SELECT f.{FILE_COLUMN} AS file, f.file_row_number + 1 AS row,"
                f" {keys[0]} AS stimulus, {keys[1]} AS model, row_number() OVER (PARTITION BY {key} ORDER BY {order})"
                f" AS n FROM {source} f) WHERE n > 1 ORDER BY file, row LIMIT {SHOWN_ROWS}"
        ).fetchall():
            problems.append(RowProblem(_shown_name(Path(file), base), int(row), ",".join(
                attachment.mapping[f] for f in ("stimulus", "model", *RUN_CONDITIONS) if f in attachment.mapping),
                f"<a second row with stimulus={stimulus!r}, model={model!r}>", "one prediction per key"))
    return problems


def attach_parquet(store: Store, path: Path, dataset_name: str | None = None,
                   mapping: dict[str, str] | None = None, progress: Progress | None = None,
                   should_cancel: Callable[[], bool] | None = None) -> AttachSummary:
    """Attach the Parquet file or folder `path` as the new dataset `dataset_name` (default "Generic <name>"),
    reading its predictions in place through `mapping` (given, or guessed as the generic importer guesses).

    Raises `ImportFailed` naming file and row of every bad row (or the map's problem), a `FileRefused`, or
    `ImportCancelled` when `should_cancel` says so between two steps; the store is then unchanged."""
    report = progress or (lambda _f, _m: None)
    cancelled = should_cancel or (lambda: False)

    def progress(fraction: float, message: str) -> None:
        if cancelled():
            raise ImportCancelled()
        report(fraction, message)

    path = Path(path).expanduser()
    files = parquet_files(path)
    stats = [os.stat(p) for p in files]   # before reading: a file changed while it is read is found later
    base = path.resolve().parent
    shown = _shown_name(path.resolve(), base)
    name = dataset_name or f"Generic {path.stem}"
    cur = store.cursor()
    columns, rows = _schema(cur, files, base)
    mapping = _mapping(cur, files, columns, mapping, shown)
    progress(0.1, "columns read")
    records = tuple(AttachedFile(str(p), s.st_size, s.st_mtime_ns, n) for p, s, n in zip(files, stats, rows))
    attachment = Attachment(0, name, mapping, _read_as(cur, files, columns, mapping), records)
    source = source_sql([str(p) for p in files])
    problems = _problems(cur, attachment, base, source, progress)
    if problems:
        raise ImportFailed(problems)
    summary = AttachSummary(name, 0, mapping=mapping)
    with store.transaction() as cur:
        if cur.execute("SELECT count(*) FROM dataset WHERE name = ?", [name]).fetchall()[0][0]:
            raise ImportFailed(RowProblem(shown, None, "dataset", repr(name),
                                          "the name of a new dataset (attaching makes one; choose --dataset)"))
        root = path.resolve() if path.is_dir() else path.resolve().parent
        dataset_id = int(cur.execute(
            "INSERT INTO dataset (name, benchmark, root, source, importer, importer_version, meta)"
            " VALUES (?, 'generic', ?, ?, ?, ?, ?) RETURNING id",
            [name, str(root), str(path.resolve()), IMPORTER, IMPORTER_VERSION,
             json.dumps({"read_in_place": True})]).fetchall()[0][0])
        summary.dataset_id = dataset_id
        progress(0.6, "stimuli")
        order = f"(CAST(list_position({_paths(files)}, f.{FILE_COLUMN}) AS BIGINT) << 32) + f.file_row_number"
        label, split = value_sql(attachment, "label") or "NULL", value_sql(attachment, "split") or "NULL"
        cur.execute(
            "INSERT INTO stimulus (dataset_id, external_id, kind, ground_truth, split, sort_key)"
            " SELECT ?, stimulus, 'generic', arg_min_null(label, o), arg_min_null(split, o),"
            f" {natural_key_sql('stimulus')} FROM (SELECT {value_sql(attachment, 'stimulus')} AS stimulus,"
            f" {label} AS label, {split} AS split, {order} AS o FROM {source} f) GROUP BY stimulus ORDER BY min(o)",
            [dataset_id])
        progress(0.8, "models and runs")
        conditions = [f"coalesce({value_sql(attachment, f) or 'NULL'}, '') AS {c}" for f, c in RUN_CONDITIONS.items()]
        cur.execute(f"CREATE OR REPLACE TEMP TABLE attach_runs AS SELECT DISTINCT {value_sql(attachment, 'model')}"
                    f" AS model, {', '.join(conditions)} FROM {source} f")
        summary.written["models"] = int(cur.execute(
            "INSERT INTO model (name) SELECT DISTINCT model FROM attach_runs WHERE model NOT IN (SELECT name FROM"
            " model) ORDER BY model").fetchall()[0][0])
        summary.written["runs"] = int(cur.execute(
            "INSERT INTO run (dataset_id, model_id, modality, prompt_setting, vision_mode, context)"
            " SELECT ?, m.id, a.modality, a.prompt_setting, a.vision_mode, '' FROM attach_runs a"
            " JOIN model m ON m.name = a.model ORDER BY ALL", [dataset_id]).fetchall()[0][0])
        cur.execute("DROP TABLE attach_runs")
        summary.written["stimuli"] = int(cur.execute("SELECT count(*) FROM stimulus WHERE dataset_id = ?",
                                                     [dataset_id]).fetchall()[0][0])
        cur.execute("INSERT INTO attachment (dataset_id, mapping, columns) VALUES (?, ?, ?)",
                    [dataset_id, json.dumps(mapping), json.dumps(attachment.columns)])
        cur.executemany("INSERT INTO attached_file VALUES (?, ?, ?, ?, ?, ?)",
                        [[dataset_id, i, f.path, f.size_bytes, f.mtime_ns, f.rows] for i, f in enumerate(records)])
        refresh_views(cur)
    progress(1.0, "done")
    summary.written["predictions_in_place"] = sum(rows)
    unread = sorted(set(columns) - set(mapping.values()))
    summary.notes.append(f"read {sum(rows)} rows of {len(files)} Parquet file(s) as predictions, kept in place"
                         f" ({', '.join(f'{k}={v}' for k, v in sorted(mapping.items()))}); 0 rows left out")
    if unread:
        summary.notes.append(f"columns not read: {', '.join(unread)}")
    return summary
