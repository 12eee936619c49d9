"""Predictions read in place from Parquet files, and the views every read of predictions goes through.

A dataset attached in place (`storage/attach_parquet.py`) keeps its stimuli, models and runs in the store like an
imported one, and its predictions in its Parquet files: `attachment` holds its column map and `attached_file` each
file with the size and modification time it had when attached. Reads of predictions go through two views:

- `prediction_all`: the stored `prediction` table with, for each attached dataset, its files read by DuckDB
  (`read_parquet`) with every column a stored prediction has (`id` negative: made from the dataset, the file
  and the row, so it names one row and is never a stored prediction's);
- `prediction_counts`: the same rows counted per dataset, run and correctness; an attached dataset's files are
  counted by their model and conditions first and only the counts are matched to runs, so counting reads at the
  speed of the files themselves, and its rows carry the dataset's id as a constant, so a count of another dataset
  does not open its files.

Writes go to `prediction` alone. The views are made again each time the store is opened for writing
(`refresh_views`): a dataset whose files are gone is left out of them, one whose files changed is read as they are
now, and either is said in one line per dataset (`attachment_problems`).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from storage.importers.correctness import correct_word_sql, same_answer_sql

# every column of the stored predictions, in the table's order: the union view has the same
PREDICTION_COLUMNS = ("id", "run_id", "stimulus_id", "raw_output", "answer", "correct", "latency_s", "meta",
                      "prompt", "tokens_in", "tokens_out")
COUNT_COLUMNS = ("dataset_id", "run_id", "correct", "n")
# the stored predictions as the union views take them
STORED_SQL = {
    "all": "SELECT " + ", ".join(PREDICTION_COLUMNS) + " FROM prediction",
    "counts": "SELECT r.dataset_id, p.run_id, p.correct, count(*) AS n FROM prediction p JOIN run r ON r.id = p.run_id"
              " GROUP BY ALL"}
# the column DuckDB names each row's file in (one a results table is unlikely to have)
FILE_COLUMN = "_thinslice_file"
# the map fields a predictions table read in place may use
ATTACH_FIELDS = ("stimulus", "model", "modality", "prompt", "vision", "answer", "raw", "correct", "label", "split",
                 "latency")
# run conditions: map field -> the run's column
RUN_CONDITIONS = {"modality": "modality", "prompt": "prompt_setting", "vision": "vision_mode"}


@dataclass(frozen=True)
class AttachedFile:
    """One Parquet file of an attached dataset as recorded when attached."""

    path: str
    size_bytes: int
    mtime_ns: int
    rows: int

    def status(self) -> str:
        """'same', 'changed' (size or modification time differ) or 'gone'."""
        try:
            info = os.stat(self.path)
        except OSError:
            return "gone"
        return "same" if (info.st_size, info.st_mtime_ns) == (self.size_bytes, self.mtime_ns) else "changed"


@dataclass(frozen=True)
class Attachment:
    """An attached dataset: its id and name, the column map, how each mapped column is read, and its files."""

    dataset_id: int
    name: str
    mapping: dict[str, str]
    columns: dict[str, dict]    # source column -> {"type": DuckDB type, "padded": values need trimming}
    files: tuple[AttachedFile, ...]


def literal(text: str) -> str:
    """`text` as a SQL string literal (a view's text cannot hold parameters)."""
    return "'" + text.replace("'", "''") + "'"


def source_sql(paths: list[str]) -> str:
    """DuckDB's reader over the files, each row with its file and its row number in that file (from 0)."""
    files = "[" + ", ".join(literal(p) for p in paths) + "]"
    return (f"read_parquet({files}, filename={literal(FILE_COLUMN)}, file_row_number=true,"
            " union_by_name=true)")


def attachments(cur: duckdb.DuckDBPyConnection, dataset_id: int | None = None) -> list[Attachment]:
    """Every attached dataset (or the one of `dataset_id`), by id."""
    where, params = ("WHERE a.dataset_id = ?", [dataset_id]) if dataset_id is not None else ("", [])
    found = []
    for did, name, mapping, columns in cur.execute(
            "SELECT a.dataset_id, d.name, CAST(a.mapping AS VARCHAR), CAST(a.columns AS VARCHAR) FROM attachment a"
            f" JOIN dataset d ON d.id = a.dataset_id {where} ORDER BY a.dataset_id", params).fetchall():
        files = tuple(AttachedFile(*row) for row in cur.execute(
            "SELECT path, size_bytes, mtime_ns, rows FROM attached_file WHERE dataset_id = ? ORDER BY ord",
            [did]).fetchall())
        found.append(Attachment(int(did), name, json.loads(mapping), json.loads(columns), files))
    return found


def problem_line(attachment: Attachment) -> str | None:
    """One line saying which of the dataset's files moved or changed since it was attached; None when none did."""
    statuses = [(f, f.status()) for f in attachment.files]
    gone = [f.path for f, s in statuses if s == "gone"]
    changed = [f.path for f, s in statuses if s == "changed"]
    if not gone and not changed:
        return None
    total = len(attachment.files)
    if gone:
        return (f"dataset {attachment.name!r}: {len(gone)} of {total} attached Parquet file(s) moved or gone"
                f" (first: {gone[0]}); its predictions are left out until they are back or it is attached again")
    return (f"dataset {attachment.name!r}: {len(changed)} of {total} attached Parquet file(s) changed since"
            f" attached (size or modification time; first: {changed[0]}); its predictions are read as the files"
            " are now: attach it again to check them")


def attachment_problems(cur: duckdb.DuckDBPyConnection, dataset_id: int | None = None) -> list[str]:
    """One line per attached dataset (or for `dataset_id`) whose files moved or changed since attached."""
    if not _has_attachments(cur):
        return []
    return [line for a in attachments(cur, dataset_id) if (line := problem_line(a)) is not None]


def _has_attachments(cur: duckdb.DuckDBPyConnection) -> bool:
    present = cur.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'attachment'"
                          " AND schema_name = 'main'").fetchall()[0][0]
    return bool(present) and bool(cur.execute("SELECT EXISTS (SELECT 1 FROM attachment)").fetchall()[0][0])


# ----------------------------------------------------------------------------------------------- the views
NUMBER_TYPES = ("DOUBLE", "FLOAT", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                "UINTEGER", "UBIGINT", "DECIMAL")


def value_sql(attachment: Attachment, field: str) -> str | None:
    """The SQL of a mapped field's value in a row of the files (`f`), as the generic importer reads it: text
    trimmed where the column has padded values, an empty text as null; a number as DOUBLE; None when unmapped."""
    column = attachment.mapping.get(field)
    if column is None:
        return None
    info = attachment.columns[column]
    quoted = 'f."' + column.replace('"', '""') + '"'
    if field == "latency" and info["type"].split("(")[0] in NUMBER_TYPES:
        return f"CAST({quoted} AS DOUBLE)"
    text = quoted if info["type"] == "VARCHAR" else f"CAST({quoted} AS VARCHAR)"
    if info["padded"]:
        # trimmed of the characters the generic importer trims (only here: it reads with polars)
        from storage.importers.generic import WHITE_SPACE
        text = f"nullif(trim({text}, {literal(''.join(WHITE_SPACE))}), '')"
    if field == "latency":
        return f"TRY_CAST({text} AS DOUBLE)"
    return text


def correct_sql(attachment: Attachment) -> str:
    """Whether a row's answer is correct, by the generic importer's rule: the table's own correctness column (its
    true and false words); without one, the answer equal to the row's label ignoring case; else null."""
    column = attachment.mapping.get("correct")
    if column is not None:
        if attachment.columns[column]["type"] == "BOOLEAN":
            return 'f."' + column.replace('"', '""') + '"'
        return correct_word_sql(str(value_sql(attachment, "correct")))
    if "label" in attachment.mapping and "answer" in attachment.mapping:
        return same_answer_sql(str(value_sql(attachment, "answer")), str(value_sql(attachment, "label")))
    return "CAST(NULL AS BOOLEAN)"


def _run_keys(attachment: Attachment) -> dict[str, str]:
    """A row's run as SQL over the files' row `f`: its model and each condition (an unmapped one is '')."""
    return {"model": str(value_sql(attachment, "model")),
            **{c: f"coalesce({value_sql(attachment, field) or 'NULL'}, '')" for field, c in RUN_CONDITIONS.items()}}


def _run_join(attachment: Attachment, keys: dict[str, str]) -> str:
    """The join of rows whose run is `keys` (see `_run_keys`) to the dataset's runs, as `r`."""
    return (f" JOIN (SELECT r.id, m.name AS model, r.modality, r.prompt_setting, r.vision_mode FROM run r"
            f" JOIN model m ON m.id = r.model_id WHERE r.dataset_id = {attachment.dataset_id} AND r.context = '') r"
            " ON " + " AND ".join(f"r.{column} = {sql}" for column, sql in keys.items()))


def counts_sql(attachment: Attachment) -> str:
    """One attached dataset's rows counted per run and correctness, with the columns of `COUNT_COLUMNS`: counted
    by model and conditions first, so only the counts are matched to runs."""
    keys = _run_keys(attachment)
    counted = (", ".join(f"{sql} AS {column}" for column, sql in keys.items())
               + f", {correct_sql(attachment)} AS correct, count(*) AS n")
    return (f"SELECT {attachment.dataset_id} AS dataset_id, r.id AS run_id, c.correct, c.n FROM"
            f" (SELECT {counted} FROM {source_sql([f.path for f in attachment.files])} f GROUP BY ALL) c"
            + _run_join(attachment, {column: f"c.{column}" for column in keys}))


def branch_sql(attachment: Attachment) -> str:
    """One attached dataset's rows with the columns of `prediction`."""
    paths = [f.path for f in attachment.files]
    raw, answer = value_sql(attachment, "raw") or "NULL", value_sql(attachment, "answer") or "NULL"
    latency = value_sql(attachment, "latency") or "NULL"
    values = {"run_id": "r.id", "answer": f"CAST({answer} AS VARCHAR)", "correct": correct_sql(attachment),
              "latency_s": f"CAST({latency} AS DOUBLE)"}
    files = "[" + ", ".join(literal(p) for p in paths) + "]"
    values |= {
        # the dataset, the file and the row, as one negative number: never a stored prediction's id
        "id": f"-((CAST({attachment.dataset_id} AS BIGINT) << 40) + (CAST(list_position({files}, f.{FILE_COLUMN})"
              " AS BIGINT) << 32) + f.file_row_number + 1)",
        "stimulus_id": "s.id", "raw_output": f"CAST({raw} AS VARCHAR)", "meta": "CAST(NULL AS JSON)",
        "prompt": "CAST(NULL AS VARCHAR)", "tokens_in": "CAST(NULL AS INTEGER)", "tokens_out": "CAST(NULL AS INTEGER)"}
    return ("SELECT " + ", ".join(f"{values[c]} AS {c}" for c in PREDICTION_COLUMNS)
            + f" FROM {source_sql(paths)} f{_run_join(attachment, _run_keys(attachment))}"
            f" JOIN stimulus s ON s.dataset_id = {attachment.dataset_id}"
            f" AND s.external_id = {value_sql(attachment, 'stimulus')}")


def union_sql(stored: str, branches: list[str]) -> str:
    """The stored predictions (`STORED_SQL`) and every branch's rows."""
    return " UNION ALL ".join([stored, *branches])


def views_sql(cur: duckdb.DuckDBPyConnection, *, temp: bool = False) -> list[str]:
    """The statements that make `prediction_all` and `prediction_counts` from the stored table and every attached
    dataset whose files are all there and still read as attached (one whose files changed in shape is left out);
    with `temp`, as views of one connection that hide the stored ones (a store opened for reading only)."""
    full, counts = [], []
    for attachment in (attachments(cur) if _has_attachments(cur) else []):
        if any(f.status() == "gone" for f in attachment.files):
            continue
        branch = branch_sql(attachment)
        try:
            cur.execute(f"DESCRIBE {branch}")
        except duckdb.Error:
            continue   # the files no longer hold the mapped columns: said by `attachment_problems`
        full.append(branch)
        counts.append(counts_sql(attachment))
    create = "CREATE OR REPLACE TEMP VIEW" if temp else "CREATE OR REPLACE VIEW"
    return [f"{create} prediction_all AS {union_sql(STORED_SQL['all'], full)}",
            f"{create} prediction_counts AS {union_sql(STORED_SQL['counts'], counts)}"]


def refresh_views(cur: duckdb.DuckDBPyConnection) -> None:
    """Make the store's `prediction_all` and `prediction_counts` again (see `views_sql`)."""
    for statement in views_sql(cur):
        cur.execute(statement)


@dataclass(frozen=True)
class Opening:
    """What opening a store found: one line per attached dataset whose files moved or changed, and the statements
    each new cursor of a store opened for reading only runs so that its reads leave out files that are gone (the
    stored views, made when the store was last opened for writing, may still name them)."""

    notes: list[str]
    cursor_sql: list[str]


def open_attached(cur: duckdb.DuckDBPyConnection, *, writable: bool) -> Opening:
    """What opening a store does for its attached datasets: the views made again (when `writable`), or views of each
    connection where files moved or changed (when not), and the lines that say so."""
    if not _has_attachments(cur):
        return Opening([], [])
    notes = attachment_problems(cur)
    if writable:
        refresh_views(cur)
        return Opening(notes, [])
    return Opening(notes, views_sql(cur, temp=True) if notes else [])
