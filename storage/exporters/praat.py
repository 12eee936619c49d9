"""Praat `.TextGrid` in the long text format: one IntervalTier per annotator and label set.

Gaps between labels are filled with empty intervals (Praat needs a tier to cover its whole span);
overlapping labels go to extra tiers `... #2`; whole-stimulus labels are a tier `annotator | set | whole`
spanning the stimulus. Zero-length labels cannot be intervals and are left out. Label, times, annotator
and label set round-trip; value, note and media role do not.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from storage.errors import ImportFailed, RowProblem
from storage.exporters.common import (ExportContext, Row, build_tiers, by_stimulus, files_to_read,
                                      per_stimulus_targets, rows_from_tier, write_text)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _num(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def textgrid_text(rows: Sequence[Row], duration_s: float | None) -> str:
    """The long-format TextGrid of one stimulus's labels."""
    tiers, end = build_tiers([r for r in rows if r.get("start_s") is None or r["end_s"] > r["start_s"]],
                             duration_s)
    out = ['File type = "ooTextFile"', 'Object class = "TextGrid"', "", "xmin = 0 ", f"xmax = {_num(end)} ",
           "tiers? <exists> ", f"size = {len(tiers)} ", "item []: "]
    for number, tier in enumerate(tiers, start=1):
        filled: list[tuple[float, float, str]] = []
        cursor = 0.0
        for start, stop, text in tier.intervals:
            if start > cursor:
                filled.append((cursor, start, ""))
            filled.append((start, stop, text))
            cursor = stop
        if cursor < end or not filled:
            filled.append((cursor, end, ""))
        out += [f"    item [{number}]:", '        class = "IntervalTier" ', f"        name = {_quote(tier.name)} ",
                "        xmin = 0 ", f"        xmax = {_num(end)} ", f"        intervals: size = {len(filled)} "]
        for index, (start, stop, text) in enumerate(filled, start=1):
            out += [f"        intervals [{index}]:", f"            xmin = {_num(start)} ",
                    f"            xmax = {_num(stop)} ", f"            text = {_quote(text)} "]
    return "\n".join(out) + "\n"


class TextGridExporter:
    name = "textgrid"
    title = "Praat TextGrid (.TextGrid)"
    extension = ".TextGrid"
    per_stimulus = True

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        grouped = by_stimulus(rows)
        for stimulus, target in per_stimulus_targets(self, rows, out_path).items():
            write_text(target, context, textgrid_text(grouped[stimulus], context.durations.get(stimulus)))
        return Path(out_path)

    def read(self, path: Path) -> list[Row]:
        rows: list[Row] = []
        for file in files_to_read(path, self.extension):
            rows += read_textgrid(file)
        return rows


# Praat text files (long or short) are a stream of values: quoted strings, numbers and <flags>. Index
# brackets such as "item [1]:" are matched too so that their digits are not taken as values.
_TOKEN = re.compile(r'"(?:[^"]|"")*"|\[\s*\d*\s*\]|<\w+>|-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?')


def _tokens(text: str) -> list[str | float]:
    values: list[str | float] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token.startswith("["):
            continue
        if token.startswith('"'):
            values.append(token[1:-1].replace('""', '"'))
        elif token.startswith("<"):
            values.append(token)
        else:
            values.append(float(token))
    return values


def read_textgrid(path: Path) -> list[Row]:
    """Labels of one TextGrid (long or short text format); the stimulus is the file name."""
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-16") if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else raw.decode("utf-8-sig")
        values = _tokens(text)
        if values[:2] != ["ooTextFile", "TextGrid"]:
            raise ValueError("not a TextGrid text file")
        position = 6 if values[4] == "<exists>" else 5
        n_tiers = int(values[position - 1])
        rows: list[Row] = []
        for _ in range(n_tiers):
            kind, name = values[position], str(values[position + 1])
            count = int(values[position + 4])
            position += 5
            if kind == "IntervalTier":
                intervals = [(float(values[position + 3 * i]), float(values[position + 3 * i + 1]),
                              str(values[position + 3 * i + 2])) for i in range(count)]
                position += 3 * count
                rows += rows_from_tier(path.stem, name, intervals)
            else:  # a TextTier of points: no ranges to read
                position += 2 * count
        return rows
    except (OSError, UnicodeDecodeError, ValueError, IndexError, TypeError) as exc:
        raise ImportFailed(RowProblem(path.name, None, None, f"<{exc}>", "a Praat TextGrid text file")) from None
