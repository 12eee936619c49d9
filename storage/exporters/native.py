"""Dataset-native shapes: FriendBench (CSV per clip and annotator) and EchoMind (JSON list by case_id).

FriendBench: one row per clip and annotator; `clip_id`, `annotator`, one column per whole-stimulus label
set holding that annotator's label, and `ranges`, a JSON list of the time-range labels
[{label_set, label, start_s, end_s, value, note, media_role, meta}]. A clip's column holds one label of a set
per annotator and nothing else: `unrepresentable` names a second one, and a whole-stimulus label's value,
note, media role or meta.
EchoMind: a JSON list of {"case_id", "annotations": [{annotator, label_set, label, start_s, end_s, value,
note, media_role, meta}]}, in the order of the release's own case ids; it holds every field.
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from operator import methodcaller
from pathlib import Path

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.importers.common import JsonRefused, loads_json, read_json
from storage.files import check_regular
from storage.exporters.common import (ROW_FIELDS, ExportContext, ExportRefused, Loss, Row, atomic_write, blank_row,
                                      column_reading, fields_lost, write_text)
from storage.exporters.report import Reading
from storage.exporters.sniff import has_columns, head, score, table_columns
from storage.exporters.tables import meta_object
from storage.tables import read_table

RANGE_FIELDS = ("label_set", "label", "start_s", "end_s", "value", "note", "media_role", "meta")
NEEDED = ("clip_id", "annotator", "ranges")  # a FriendBench table's own columns; the others are label sets
_CASE = re.compile(r'"case_id"\s*:')
_RANGE_ROW_FIELDS = [k for k in ROW_FIELDS if k in RANGE_FIELDS and k != "meta"]   # what a range gives a row
_CASE_ROW_FIELDS = [k for k in ROW_FIELDS if k not in ("stimulus", "meta")]      # what a case's label gives


def _add_labels(columns: dict[str, list], items: list[dict], fields: Sequence[str], **same: object) -> None:
    """Add to `columns` (a list per field) the labels `items` hold: `fields` from each, `same` for all."""
    for field, value in same.items():
        columns[field] += [value] * len(items)
    for field in fields:
        columns[field] += map(methodcaller("get", field), items)


def _metas(items: list[dict], name: str, line: int) -> list[dict | None]:
    """Each label's `meta` as read (`meta_object`), the first that is no JSON object refused at `line`."""
    return [None if item.get("meta") is None else meta_object(item["meta"], name, line) for item in items]


def _shown(value: object) -> str:
    """A JSON value as a refusal shows it: short, and never the whole of a long one."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


class FriendBenchExporter:
    name = "friendbench"
    title = "FriendBench CSV (one row per clip and annotator)"
    extension = ".csv"
    per_stimulus = False

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        whole = [r for r in rows if r.get("start_s") is None]
        seen: set[tuple] = set()
        losses = []
        for row in whole:
            key = (row["stimulus"], row.get("annotator"), row.get("label_set"))
            if key in seen:
                losses.append(Loss(row, "a clip's column holds one label of the set per annotator"))
            seen.add(key)
        shown = {id(loss.row) for loss in losses}
        return losses + fields_lost([r for r in whole if id(r) not in shown],
                                    ("stimulus", "annotator", "label_set", "label"))

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        if not rows:
            raise ExportRefused("There are no annotations to export (check the dataset, annotator and filters).")
        context.report.count_written(Path(out_path).name, None, len(rows))
        whole_sets = sorted({r["label_set"] for r in rows if r.get("start_s") is None})
        records: dict[tuple[str, str], dict] = {}
        order = {s: i for i, s in enumerate(context.stimulus_ids)}
        for row in rows:
            key = (str(row["stimulus"]), row.get("annotator") or "")
            record = records.setdefault(key, {"clip_id": key[0], "annotator": key[1],
                                              **dict.fromkeys(whole_sets), "ranges": []})
            if row.get("start_s") is None:
                record[row["label_set"]] = row.get("label")
            else:
                record["ranges"].append({k: row.get(k) for k in RANGE_FIELDS})
        ordered = sorted(records.values(), key=lambda r: (order.get(r["clip_id"], len(order)), r["clip_id"],
                                                          r["annotator"]))
        for record in ordered:
            record["ranges"] = json.dumps(record["ranges"], ensure_ascii=False)
        data = pl.DataFrame(ordered, schema={"clip_id": pl.String, "annotator": pl.String,
                                             **{s: pl.String for s in whole_sets}, "ranges": pl.String})
        return atomic_write(Path(out_path), context, lambda temp: data.write_csv(temp))

    def read(self, path: Path) -> Reading:
        name = Path(path).name
        table = read_table(check_regular(path), name, form="delimited")
        for column in NEEDED:
            if column not in table.columns:
                raise ImportFailed(RowProblem(name, None, column, f"columns {', '.join(table.columns)}",
                                              "clip_id, annotator, label set columns and ranges"))
        whole_sets = [c for c in table.columns if c not in NEEDED]
        columns: dict[str, list] = {k: [] for k in ROW_FIELDS}
        lines: list[int] = []
        for line, record in table.rows():
            stimulus, annotator = record["clip_id"], record["annotator"] or None
            for label_set in whole_sets:
                if record[label_set]:
                    for field, value in blank_row(stimulus=stimulus, annotator=annotator, label_set=label_set,
                                                  label=record[label_set]).items():
                        columns[field].append(value)
                    lines.append(line)
            try:
                ranges = loads_json(record["ranges"] or "[]")
            except json.JSONDecodeError as exc:
                raise ImportFailed(RowProblem(name, line, "ranges", f"<invalid JSON: {exc.msg}>",
                                              "a JSON list of ranges")) from None
            except JsonRefused as exc:
                raise ImportFailed(RowProblem(name, line, "ranges", f"<{exc}>", "a JSON list of ranges")) from None
            if not isinstance(ranges, list) or not all(isinstance(item, dict) for item in ranges):
                raise ImportFailed(RowProblem(name, line, "ranges", repr(record["ranges"][:60]),
                                              "a JSON list of ranges"))
            _add_labels(columns, ranges, _RANGE_ROW_FIELDS, stimulus=stimulus, annotator=annotator)
            columns["meta"] += _metas(ranges, name, line)
            lines += [line] * len(ranges)
        reading = column_reading(name, columns, None, lines)
        reading.report.count_read(name, None, len(lines))
        return reading

    def detect(self, path: Path) -> float:
        return score(path, self.extension, has_columns(table_columns(path, "delimited"), NEEDED))


class EchoMindExporter:
    name = "echomind"
    title = "EchoMind JSON (a list keyed by case_id)"
    extension = ".json"
    per_stimulus = False

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        return []

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        if not rows:
            raise ExportRefused("There are no annotations to export (check the dataset, annotator and filters).")
        context.report.count_written(Path(out_path).name, None, len(rows))
        cases: dict[str, list[dict]] = {}
        for row in rows:
            cases.setdefault(str(row["stimulus"]), []).append(
                {k: row.get(k) for k in ROW_FIELDS if k != "stimulus"})
        order = {s: i for i, s in enumerate(context.stimulus_ids)}
        ordered = sorted(cases, key=lambda c: (order.get(c, len(order)), c))
        data = [{"case_id": case, "annotations": cases[case]} for case in ordered]
        # one case a line: json's indenting encoder is pure Python, and took seconds for 100,000 labels
        text = "[\n" + ",\n".join(json.dumps(case, ensure_ascii=False) for case in data) + "\n]\n"
        return write_text(Path(out_path), context, text)

    def read(self, path: Path) -> Reading:
        name = Path(path).name
        data = read_json(check_regular(path), name)
        if not isinstance(data, list):
            raise ImportFailed(RowProblem(name, None, None, f"<{type(data).__name__}>", "a JSON list of cases"))
        columns: dict[str, list] = {k: [] for k in ROW_FIELDS}
        numbers: list[int] = []
        for number, case in enumerate(data, start=1):
            if not isinstance(case, dict) or "case_id" not in case:
                raise ImportFailed(RowProblem(name, number, "case_id", "<missing>", "an object with case_id"))
            if not isinstance(case["case_id"], (str, int)) or isinstance(case["case_id"], bool):
                raise ImportFailed(RowProblem(name, number, "case_id", _shown(case["case_id"]), "a case id"))
            labels = case.get("annotations") or []
            if not isinstance(labels, list) or not all(isinstance(item, dict) for item in labels):
                raise ImportFailed(RowProblem(name, number, "annotations", _shown(labels),
                                              "a list of annotation objects"))
            _add_labels(columns, labels, _CASE_ROW_FIELDS, stimulus=str(case["case_id"]))
            columns["meta"] += _metas(labels, name, number)
            numbers += [number] * len(labels)
        reading = column_reading(name, columns, numbers, None)
        reading.report.count_read(name, None, len(numbers))
        return reading

    def detect(self, path: Path) -> float:
        """A JSON list whose first object names a `case_id` and its `annotations`."""
        text = head(path).decode("utf-8-sig", errors="replace").lstrip()  # one case may fill the head alone
        return score(path, self.extension, text.startswith("[") and text[1:].lstrip().startswith("{")
                     and bool(_CASE.search(text)) and '"annotations"' in text)
