"""Audacity label track text: `start<TAB>end<TAB>label` per line, times in seconds.

A file holds one stimulus. When the exported labels come from one annotator and one label set the text is
the label alone (what a user wants to see in Audacity); otherwise it is prefixed `[annotator | set] `
so that the labels can be told apart and read back. Whole-stimulus labels have no place in a label
track and are left out.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from storage.errors import ImportFailed, RowProblem
from storage.exporters.common import (ExportContext, Row, blank_row, by_stimulus, files_to_read,
                                      per_stimulus_targets, write_text)

_PREFIXED = re.compile(r"^\[(?P<annotator>.*?) \| (?P<label_set>.*?)\] (?P<label>.*)$")


def label_track(rows: Sequence[Row], prefixed: bool) -> str:
    lines = []
    for row in sorted(rows, key=lambda r: (r["start_s"], r["end_s"])):
        text = row.get("label") or ""
        if prefixed:
            text = f"[{row.get('annotator') or ''} | {row.get('label_set') or ''}] {text}"
        text = text.replace("\t", " ").replace("\n", " ")
        lines.append(f"{row['start_s']:.6f}\t{row['end_s']:.6f}\t{text}")
    return "".join(line + "\n" for line in lines)


class AudacityExporter:
    name = "audacity"
    title = "Audacity labels (.txt)"
    extension = ".txt"
    per_stimulus = True

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        ranges = [r for r in rows if r.get("start_s") is not None]
        prefixed = len({(r.get("annotator"), r.get("label_set")) for r in ranges}) > 1
        grouped = by_stimulus(ranges)
        for stimulus, target in per_stimulus_targets(self, ranges, out_path).items():
            write_text(target, context, label_track(grouped[stimulus], prefixed))
        return Path(out_path)

    def read(self, path: Path) -> list[Row]:
        rows: list[Row] = []
        for file in files_to_read(path, self.extension):
            rows += read_label_track(file)
        return rows


def read_label_track(path: Path) -> list[Row]:
    """Labels of one Audacity label file; the stimulus is the file name. Frequency lines are skipped."""
    rows = []
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFailed(RowProblem(path.name, None, None, f"<{exc}>", "an Audacity label file")) from None
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("\\"):
            continue  # "\\\tlow\thigh" lines carry a label's frequency range
        parts = line.split("\t", 2)
        try:
            start, end = float(parts[0]), float(parts[1])
        except (ValueError, IndexError):
            raise ImportFailed(RowProblem(path.name, number, None, repr(line[:60]),
                                          "start<TAB>end<TAB>label with times in seconds")) from None
        text = parts[2] if len(parts) > 2 else ""
        match = _PREFIXED.match(text)
        if match:
            rows.append(blank_row(stimulus=path.stem, annotator=match["annotator"] or None,
                                  label_set=match["label_set"] or None, label=match["label"],
                                  start_s=start, end_s=end))
        else:
            rows.append(blank_row(stimulus=path.stem, label=text, start_s=start, end_s=end))
    return rows
