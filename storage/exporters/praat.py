"""Praat `.TextGrid` in the long text format: one tier per annotator and label set.

Gaps between labels are filled with empty intervals (Praat needs an interval tier to cover its whole span);
overlapping labels go to extra tiers `... #2`; point labels go to a TextTier; whole-stimulus labels are a
tier `annotator | set | whole` spanning the stimulus. A tier read from another tool's file keeps its name.
Notes and values go on a tier `<tier> :note` (`:value`) at the labels' times. Label, times, annotator,
label set, media role (`annotator | set | role=audio:A`), note and value round-trip; what `meta` holds
beyond the tier's name does not, and a label with no text cannot be told from a gap: `unrepresentable`
says so. Reading is `textgrid_reader` (every form Praat writes).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from storage.exporters.common import (ATTACHED, ExportContext, Loss, Row, build_tiers, by_stimulus, fields_lost,
                                      files_to_read, per_stimulus_targets, write_text)
from storage.exporters.report import Reading, merged
from storage.exporters.sniff import head, score
from storage.exporters.textgrid_reader import decode, read_textgrid

CARRIED = ("stimulus", "annotator", "label_set", "label", "start_s", "end_s", "media_role", "note", "value")


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _num(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def _tier_lines(number: int, name: str, points: bool, items: list[tuple[float, float, str]], end: float) -> list[str]:
    """One tier of a long-format TextGrid; an interval tier's gaps are filled with empty intervals."""
    if points:
        out = [f"    item [{number}]:", '        class = "TextTier" ', f"        name = {_quote(name)} ",
               "        xmin = 0 ", f"        xmax = {_num(end)} ", f"        points: size = {len(items)} "]
        for index, (time, _, text) in enumerate(items, start=1):
            out += [f"        points [{index}]:", f"            number = {_num(time)} ", f"            mark = {_quote(text)} "]
        return out
    filled: list[tuple[float, float, str]] = []
    cursor = 0.0
    for start, stop, text in items:
        if start > cursor:
            filled.append((cursor, start, ""))
        filled.append((start, stop, text))
        cursor = stop
    if cursor < end or not filled:
        filled.append((cursor, end, ""))
    out = [f"    item [{number}]:", '        class = "IntervalTier" ', f"        name = {_quote(name)} ",
           "        xmin = 0 ", f"        xmax = {_num(end)} ", f"        intervals: size = {len(filled)} "]
    for index, (start, stop, text) in enumerate(filled, start=1):
        out += [f"        intervals [{index}]:", f"            xmin = {_num(start)} ", f"            xmax = {_num(stop)} ",
                f"            text = {_quote(text)} "]
    return out


def textgrid_text(rows: Sequence[Row], duration_s: float | None, file: str, context: ExportContext) -> str:
    """The long-format TextGrid of one stimulus's labels (counted in `context.report` under `file`). A tier
    whose labels have notes (values) is followed by a tier `<tier> :note` (`:value`) holding them at the
    same times."""
    tiers, end = build_tiers(rows, duration_s, separate_points=True)
    written: list[tuple[str, bool, list[tuple[float, float, str]]]] = []
    for tier in tiers:
        context.report.count_written(file, tier.name, len(tier.intervals))
        if tier.source_name and tier.annotator:
            context.report.note(f"{file}, tier '{tier.name}': written under its own name, so without its annotator"
                                f" '{tier.annotator}' (Praat tiers have none); give --annotator when importing it back")
        written.append((tier.name, tier.points, [(start, stop, text) for start, stop, text, _ in tier.intervals]))
        for field, suffix in ATTACHED.items():
            attached = [(start, stop, str(row[field])) for start, stop, _, row in tier.intervals
                        if row.get(field) not in (None, "")]
            if attached:
                written.append((tier.name + suffix, tier.points, attached))
    out = ['File type = "ooTextFile"', 'Object class = "TextGrid"', "", "xmin = 0 ", f"xmax = {_num(end)} ",
           "tiers? <exists> ", f"size = {len(written)} ", "item []: "]
    for number, (name, points, items) in enumerate(written, start=1):
        out += _tier_lines(number, name, points, items, end)
    return "\n".join(out) + "\n"


class TextGridExporter:
    name = "textgrid"
    title = "Praat TextGrid (.TextGrid)"
    extension = ".TextGrid"
    per_stimulus = True

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        losses = [Loss(r, "a label with no text would be read back as a gap") for r in rows
                  if not r.get("label") and (r.get("start_s") is None or r["end_s"] > r["start_s"])]
        empty = {id(loss.row) for loss in losses}
        return losses + fields_lost([r for r in rows if id(r) not in empty], CARRIED, ("tier",))

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        grouped = by_stimulus(rows)
        for stimulus, target in per_stimulus_targets(self, rows, out_path).items():
            write_text(target, context, textgrid_text(grouped[stimulus], context.durations.get(stimulus),
                                                      target.name, context))
        return Path(out_path)

    def read(self, path: Path) -> Reading:
        return merged([read_textgrid(file) for file in files_to_read(path, self.extension)])

    def detect(self, path: Path) -> float:
        """Praat's header, in any of its encodings: a text file's `File type = "ooTextFile"` (or the
        chronological form's title), or the binary form's `ooBinaryFile`, then the class TextGrid."""
        raw = head(path, 256)
        text = raw.decode("latin-1") if raw.startswith(b"ooBinaryFile") else decode(raw[: len(raw) // 2 * 2])
        return score(path, self.extension, "TextGrid" in text[:120]
                     and any(mark in text[:60] for mark in ("ooTextFile", "ooBinaryFile", "chronological TextGrid")))
