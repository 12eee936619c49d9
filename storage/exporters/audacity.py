"""Audacity label track text: `start<TAB>end<TAB>label` per line, times in seconds.

A file holds one stimulus. A point label has start = end. A frequency line `\\<TAB>low<TAB>high` after a
label gives that label's frequency range in Hz (kept in `meta` as `low_hz`/`high_hz`); a negative frequency is
Audacity's "undefined" (it writes -1 for a bound the selection did not set), so that bound is not kept, and
one the label lacks is written as -1. When the exported
labels come from one annotator and one label set the text is the label alone (what a user wants to see in
Audacity); otherwise, or when there are whole-stimulus labels or media roles, it is prefixed with the
tier name the other formats use, `[annotator | set] ` (`[annotator | set | role=audio:A] ` for one
medium's labels, `[annotator | set | whole] ` for a whole-stimulus label, spanning the stimulus) so that
the labels can be told apart and read back. Reading takes what Audacity itself reads: `.` or `,` as the decimal
separator, a line whose second field is not a time as a point label, and an end before the start (Audacity
writes none, but reads one, an end of -1 too, by swapping the two: `SelectedRegion::setTimes`) as the label
between them, which the report names. A line short of its fields (a time alone, or two times and no label
field) is refused, as is a time that is not finite (`inf`, which Audacity's strtod would read), by the one
value rule every label meets (`storage.validation`).
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import compress
from operator import lt
from pathlib import Path

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.files import read_regular_bytes
from storage.exporters.common import (ExportContext, Loss, Row, by_stimulus, fields_lost, files_to_read,
                                      per_stimulus_targets, span_end, tier_name, write_text)
from storage.exporters.report import ORIGIN_COLUMNS, Origin, Reading, merged
from storage.exporters.sniff import head_text, score

_PREFIXED = re.compile(r"^\[(?P<annotator>.*?) \| (?P<label_set>.*?)(?: \| role=(?P<role>.*?))?(?P<whole> \| whole)?\]"
                       r" (?P<label>.*)$", re.S)
# a time as Audacity's reader (C's strtod) takes it, so "inf" and "nan" are read as the numbers they spell, which
# the store's value rule then refuses, rather than as label text after a one-time line
_TIME = re.compile(r"[-+]?(?:(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][-+]?\d+)?|inf(?:inity)?|nan)", re.I)
CARRIED = ("stimulus", "annotator", "label_set", "label", "start_s", "end_s", "media_role")
CARRIED_META = ("low_hz", "high_hz")
UNDEFINED_HZ = -1   # Audacity's SelectedRegion::UndefinedFrequency: no bound at this end of the range


def _time(text: str) -> float | None:
    text = text.strip()
    return float(text.replace(",", ".")) if _TIME.fullmatch(text) else None


def _seconds(value: float) -> str:
    return f"{value:.6f}"


def label_track(rows: Sequence[Row], prefixed: bool, duration_s: float | None) -> str:
    """The label file of one stimulus's rows."""
    end = span_end(rows, duration_s)
    lines = []
    whole = [(0.0, end, r) for r in rows if r.get("start_s") is None]
    timed = [(float(r["start_s"]), float(r["end_s"]), r) for r in rows if r.get("start_s") is not None]
    for start, stop, row in sorted(whole + timed, key=lambda item: (item[0], item[1])):
        text = row.get("label") or ""
        if prefixed:
            name = tier_name(row.get("annotator") or "", row.get("label_set") or "", row.get("media_role"),
                             row.get("start_s") is None)
            text = f"[{name}] {text}"
        lines.append(f"{_seconds(start)}\t{_seconds(stop)}\t{text}")
        meta = row.get("meta") or {}
        if meta.get("low_hz") is not None or meta.get("high_hz") is not None:
            low, high = (UNDEFINED_HZ if meta.get(k) is None else meta[k] for k in ("low_hz", "high_hz"))
            lines.append(f"\\\t{low}\t{high}")
    return "".join(line + "\n" for line in lines)


class AudacityExporter:
    name = "audacity"
    title = "Audacity labels (.txt)"
    extension = ".txt"
    per_stimulus = True

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        broken = [Loss(r, "its text holds a tab or a line break, which end an Audacity label") for r in rows
                  if re.search(r"[\t\r\n]", r.get("label") or "")]
        seen = {id(loss.row) for loss in broken}
        return broken + fields_lost([r for r in rows if id(r) not in seen], CARRIED, CARRIED_META)

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        prefixed = (len({(r.get("annotator"), r.get("label_set")) for r in rows}) > 1
                    or any(r.get("start_s") is None or r.get("media_role") or _PREFIXED.match(r.get("label") or "")
                           for r in rows))
        grouped = by_stimulus(rows)
        for stimulus, target in per_stimulus_targets(self, rows, out_path).items():
            write_text(target, context, label_track(grouped[stimulus], prefixed, context.durations.get(stimulus)))
            context.report.count_written(target.name, None, len(grouped[stimulus]))
        if not prefixed and rows:
            context.report.note(f"the labels are all by '{rows[0].get('annotator')}' in the set"
                                f" '{rows[0].get('label_set')}', so the files hold the labels alone: give --annotator"
                                " and --label-set when importing them back")
        return Path(out_path)

    def read(self, path: Path) -> Reading:
        return merged([read_label_track(file) for file in files_to_read(path, self.extension)])

    def detect(self, path: Path) -> float:
        """Tab-separated label lines that start with a time (and frequency lines), as far as the head shows."""
        lines = [line for line in head_text(path).splitlines() if line.strip()]
        return score(path, self.extension, bool(lines) and "\t" in lines[0] and all(
            line.startswith("\\") or _time(line.split("\t")[0]) is not None for line in lines))


def read_label_track(path: Path) -> Reading:
    """Labels of one Audacity label file; the file names no stimulus (the importer places it by name)."""
    path = Path(path)
    raw = read_regular_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")  # Audacity before 2.0 wrote the system's code page
    name = path.name
    reading = _plain_track(text, name)
    if reading is not None:
        return reading
    reading = Reading([])
    reading.report.count_read(name, None, 0)
    found = reading.rows
    previous: Row | None = None
    swapped: list[int] = []   # lines whose end came before their start
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if line.startswith("\\"):
            low, high = (_time(f) for f in (fields + ["", ""])[1:3])
            if previous is None or low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
                raise ImportFailed(RowProblem(name, number, "frequency range", repr(line[:60]),
                                              "\\<TAB>low<TAB>high in Hz, finite, after a label line"))
            if 0 <= high < low:
                low, high = high, low   # Audacity keeps a range in order
            bounds = {k: v for k, v in (("low_hz", low), ("high_hz", high)) if v >= 0}
            if bounds:
                previous["meta"] = {**(previous["meta"] or {}), **bounds}
            continue
        start = _time(fields[0])
        end = _time(fields[1]) if len(fields) > 1 else None
        if start is None:
            raise ImportFailed(RowProblem(name, number, "start", repr(line[:60]),
                                          "start<TAB>end<TAB>label with times in seconds"))
        if len(fields) == 1 or (len(fields) == 2 and (end is not None or not fields[1].strip())):
            # every field of a label line is there, or (Audacity's one-time form) a time and its label's text
            raise ImportFailed(RowProblem(name, number, None, repr(line[:60]),
                                          "start<TAB>end<TAB>label, every field of the line"))
        label = "\t".join(fields[2:]) if end is not None else "\t".join(fields[1:])
        if end is None:
            end = start   # Audacity reads a line with one time as a point label
        if end < start:
            start, end = end, start
            swapped.append(number)
        origin = Origin(name, None, None, number)
        match = _PREFIXED.match(label)
        # a row of ROW_FIELDS and its origin, made whole at once
        if match:
            whole = match["whole"]
            previous = {"stimulus": None, "annotator": match["annotator"] or None,
                        "label_set": match["label_set"] or None, "label": match["label"],
                        "start_s": None if whole else start, "end_s": None if whole else end, "value": None,
                        "note": None, "media_role": match["role"] or None, "meta": None, "origin": origin}
        else:
            previous = {"stimulus": None, "annotator": None, "label_set": None, "label": label, "start_s": start,
                        "end_s": end, "value": None, "note": None, "media_role": None, "meta": None, "origin": origin}
        found.append(previous)
    reading.report.count_read(name, None, len(found))
    _note_swapped(reading, name, swapped)
    return reading


def _note_swapped(reading: Reading, name: str, swapped: list[int]) -> None:
    if swapped:
        shown = ", ".join(str(n) for n in swapped[:5]) + (f" and {len(swapped) - 5} more" if len(swapped) > 5 else "")
        reading.report.note(f"{name}: {len(swapped)} labels end before they start (line {shown}); read as"
                            " Audacity reads them, from the earlier time to the later")


# A label line as Audacity writes one: two times in decimals (which Python's `float` and `_time` read alike),
# then the label's text, which may begin with a tier name (`_PREFIXED`'s groups, taken as it takes them); lines
# end in a line feed (after a carriage return or not), and no character `str.splitlines` would also break a line
# at is in the file. A line of another kind is caught by the last group, and the file read line by line.
_PLAIN_LINES = re.compile(r"^(?:([-+]?[0-9]+(?:\.[0-9]+)?)\t([-+]?[0-9]+(?:\.[0-9]+)?)\t"
                          r"(?:\[(.*?) \| (.*?)(?: \| role=(.*?))?( \| whole)?\] )?(.*)|(.+))$", re.M)
_OTHER_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"   # once each "\r\n" is one "\n"
_NO_NAME = {"": None}   # a tier name's empty part names nothing


def _plain_track(text: str, name: str) -> Reading | None:
    """The labels of a file whose every line is empty or a plain label line (`_PLAIN_LINES`), read as columns at
    once; None when any line is not (a frequency line, a comma, a time alone), for the reading line by line."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if any(map(text.__contains__, _OTHER_BREAKS)):
        return None
    found = _PLAIN_LINES.findall(text)
    if not found:
        return None
    firsts, seconds, annotators, label_sets, roles, wholes, labels, others = zip(*found)
    if any(others):
        return None
    count = len(found)
    # each label's line: the file's lines counted, blank ones passed over
    lines = range(1, count + 1) if "\n\n" not in text and not text.startswith("\n") else \
        list(compress(range(1, text.count("\n") + 2), text.split("\n")))
    starts, ends = list(map(float, firsts)), list(map(float, seconds))
    swapped = list(compress(lines, map(lt, ends, starts)))
    if swapped:   # read as Audacity reads a label ending before it starts: from the earlier time to the later
        starts, ends = list(map(min, starts, ends)), list(map(max, ends, starts))
    if any(wholes):
        starts = [None if whole else start for start, whole in zip(starts, wholes)]
        ends = [None if whole else end for end, whole in zip(ends, wholes)]
    nothing = pl.Series([None], dtype=pl.String)
    labels = pl.DataFrame([
        nothing.new_from_index(0, count).alias("stimulus"),
        pl.Series("annotator", list(map(_NO_NAME.get, annotators, annotators)), pl.String),
        pl.Series("label_set", list(map(_NO_NAME.get, label_sets, label_sets)), pl.String),
        pl.Series("label", labels, pl.String), pl.Series("start_s", starts, pl.Float64),
        pl.Series("end_s", ends, pl.Float64), nothing.new_from_index(0, count).alias("value"),
        nothing.new_from_index(0, count).alias("note"),
        pl.Series("media_role", list(map(_NO_NAME.get, roles, roles)), pl.String),
        nothing.new_from_index(0, count).alias("meta"),
        pl.Series(ORIGIN_COLUMNS["file"], [name], pl.String).new_from_index(0, count),
        nothing.new_from_index(0, count).alias(ORIGIN_COLUMNS["tier"]),
        pl.Series(ORIGIN_COLUMNS["item"], [None], pl.Int64).new_from_index(0, count),
        pl.Series(ORIGIN_COLUMNS["line"], lines, pl.Int64)])
    reading = Reading(labels=labels)
    reading.report.count_read(name, None, count)
    _note_swapped(reading, name, swapped)
    return reading
