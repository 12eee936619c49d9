"""What every exporter shares: the row shape, the context, atomic writing, and tier names.

A row is one label as a dict with the keys of `ROW_FIELDS` (the same shape as the annotation sidecar
`annotations/thinslice_annotations.jsonl`): `stimulus` is the dataset's own id, `start_s`/`end_s` are
None for a whole-stimulus label. Readers return rows of the same shape; a field a format cannot carry
comes back as None.
"""
from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from storage.errors import ThinsliceError

ROW_FIELDS = ("stimulus", "annotator", "label_set", "label", "start_s", "end_s", "value", "note", "media_role")
Row = dict[str, Any]


class ExportRefused(ThinsliceError):
    """An export that would overwrite a file of the dataset itself, or that has nothing to write."""


@dataclass(frozen=True)
class ExportContext:
    """What an exporter may need beyond the rows. `durations` is keyed by the stimulus's own id."""

    dataset_name: str | None = None
    benchmark: str | None = None
    root: Path | None = None
    stimulus_ids: tuple[str, ...] = ()
    durations: Mapping[str, float] = field(default_factory=dict)
    source_files: frozenset[Path] = frozenset()


class Exporter(Protocol):
    name: str           # used on the command line: thinslice export NAME OUT
    title: str
    extension: str      # with the dot
    per_stimulus: bool  # one file per stimulus (a folder when several stimuli are exported)

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        """Write the rows atomically; returns the file (or folder) written."""

    def read(self, path: Path) -> list[Row]:
        """Read a file (or folder) this exporter wrote back into rows."""


def blank_row(**values: Any) -> Row:
    row: Row = dict.fromkeys(ROW_FIELDS)
    row.update(values)
    return row


def check_destination(out_path: Path, context: ExportContext) -> Path:
    """The resolved destination; refuses a path that is one of the dataset's source files."""
    target = Path(out_path).expanduser().resolve()
    sources = {Path(p).expanduser().resolve() for p in context.source_files}
    if target in sources:
        raise ExportRefused(f"Refusing to write {target}: it is a source file of the dataset"
                            f"{' ' + repr(context.dataset_name) if context.dataset_name else ''}. "
                            "Choose another file name.")
    return target


def atomic_write(out_path: Path, context: ExportContext, write: Callable[[Path], None]) -> Path:
    """Write through `write(temp_path)` into a temp file beside `out_path`, fsync, then rename over it.

    A crash leaves either the old file or the new one, never half of one.
    """
    target = check_destination(out_path, context)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    temp = Path(temp_name)
    try:
        write(temp)
        with open(temp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return target  # some file systems cannot open a folder; the rename itself is done
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return target


def write_text(out_path: Path, context: ExportContext, text: str) -> Path:
    def write(temp: Path) -> None:
        temp.write_text(text, encoding="utf-8", newline="\n")
    return atomic_write(out_path, context, write)


def by_stimulus(rows: Iterable[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(str(row["stimulus"]), []).append(row)
    return grouped


def safe_file_stem(stimulus: str) -> str:
    """A file name for a stimulus id (path separators and other awkward characters become '_')."""
    return re.sub(r"[^\w.\-]+", "_", stimulus).strip(".") or "stimulus"


def per_stimulus_targets(exporter: Exporter, rows: Sequence[Row], out_path: Path) -> dict[str, Path]:
    """Where each stimulus's file goes: `out_path` itself for one stimulus named like a file of this
    format, otherwise `out_path/<stimulus><extension>` in a folder."""
    grouped = by_stimulus(rows)
    if not grouped:
        raise ExportRefused("There are no annotations to export (check the dataset, annotator and filters).")
    out_path = Path(out_path)
    if len(grouped) == 1 and out_path.suffix.lower() == exporter.extension.lower():
        return {next(iter(grouped)): out_path}
    return {stimulus: out_path / f"{safe_file_stem(stimulus)}{exporter.extension}" for stimulus in grouped}


def files_to_read(path: Path, extension: str) -> list[Path]:
    """`path` itself, or the files with `extension` inside the folder `path`, sorted."""
    path = Path(path)
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix.lower() == extension.lower() and p.is_file())
    return [path]


# -- tiers: one per annotator and label set, whole-stimulus labels in their own tier ---------------
TIER_SEPARATOR = " | "
WHOLE_SUFFIX = "whole"


@dataclass
class Tier:
    annotator: str
    label_set: str
    whole: bool
    intervals: list[tuple[float, float, str]]  # non-overlapping, sorted
    copy: int = 1                              # 2, 3 ... for extra tiers holding overlapping labels

    @property
    def name(self) -> str:
        parts = [self.annotator, self.label_set] + ([WHOLE_SUFFIX] if self.whole else [])
        name = TIER_SEPARATOR.join(parts)
        return f"{name} #{self.copy}" if self.copy > 1 else name


def parse_tier_name(name: str) -> tuple[str | None, str | None, bool]:
    """(annotator, label_set, whole) from a tier name written by `Tier.name` (None parts for foreign tiers)."""
    name = re.sub(r" #\d+$", "", name)
    parts = name.split(TIER_SEPARATOR)
    whole = len(parts) >= 3 and parts[-1] == WHOLE_SUFFIX
    if whole:
        parts = parts[:-1]
    if len(parts) >= 2:
        return parts[0], TIER_SEPARATOR.join(parts[1:]), whole
    return None, name or None, False


def build_tiers(rows: Sequence[Row], duration_s: float | None) -> tuple[list[Tier], float]:
    """Tiers for one stimulus's rows (overlapping labels split into extra tiers) and the end time used.

    A whole-stimulus label becomes one interval spanning [0, end], where end is the stimulus duration,
    else the last label's end, else 1 s.
    """
    ends = [r["end_s"] for r in rows if r.get("end_s") is not None]
    end = duration_s if duration_s else max(ends, default=0.0) or 1.0
    end = max([end, *ends])
    grouped: dict[tuple[str, str, bool], list[tuple[float, float, str]]] = {}
    for row in rows:
        whole = row.get("start_s") is None
        span = (0.0, end) if whole else (float(row["start_s"]), float(row["end_s"]))
        key = (row.get("annotator") or "", row.get("label_set") or "", whole)
        grouped.setdefault(key, []).append((*span, row.get("label") or ""))
    tiers: list[Tier] = []
    for (annotator, label_set, whole), intervals in sorted(grouped.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
        lanes: list[list[tuple[float, float, str]]] = []
        for interval in sorted(intervals):
            for lane in lanes:
                if lane[-1][1] <= interval[0]:
                    lane.append(interval)
                    break
            else:
                lanes.append([interval])
        tiers += [Tier(annotator, label_set, whole, lane, copy=i + 1) for i, lane in enumerate(lanes)]
    return tiers, end


def rows_from_tier(stimulus: str, tier_name: str, intervals: Iterable[tuple[float, float, str]]) -> list[Row]:
    """Rows from a tier read back: empty intervals are gaps; a whole tier's labels lose their times."""
    annotator, label_set, whole = parse_tier_name(tier_name)
    rows = []
    for start, end, text in intervals:
        if not text.strip():
            continue
        times = {} if whole else {"start_s": start, "end_s": end}
        rows.append(blank_row(stimulus=stimulus, annotator=annotator, label_set=label_set, label=text, **times))
    return rows
