"""What every exporter shares: the row shape, the context, atomic writing, and tier names.

A row is one label as a dict with the keys of `ROW_FIELDS` (the same shape as the annotation sidecar
`annotations/thinslice_annotations.jsonl`): `stimulus` is the dataset's own id, `start_s`/`end_s` are
None for a whole-stimulus label, and equal for a point label (a moment: a Praat point, an ELAN zero-length
annotation, an Audacity point label). `meta` is a dict of what another tool said about the label beyond
these fields, or None. Readers return rows of the same shape, each with an `origin`
(`report.Origin`); a field a format cannot carry comes back as None. A writer that cannot carry a field or
a label says so before writing (`unrepresentable`), and the user chooses to skip it or not export.
"""
from __future__ import annotations

import functools
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from storage.errors import ThinsliceError
from storage.exporters.report import ORIGIN_COLUMNS, Origin, Reading, TransferReport
from storage.records import MediaRef

if TYPE_CHECKING:
    import polars as pl

ROW_FIELDS = ("stimulus", "annotator", "label_set", "label", "start_s", "end_s", "value", "note", "media_role",
              "meta")
Row = dict[str, Any]
# What `meta` holds: `tier`, the source tier's name when it is not Thinslice's own `annotator | set` form;
# from ELAN `speaker` (the tier's participant), `parent_tier`, `tier_type` (its constraint),
# `linguistic_type`, `times` (where a dependent annotation's times came from: "parent", "subdivision of
# parent", "interpolated"), `cve` (its controlled-vocabulary entry) and `language`; from Audacity `low_hz`
# and `high_hz`, a label's frequency range.


class ExportRefused(ThinsliceError):
    """An export that would overwrite a file of the dataset itself, has nothing to write, or would lose
    what the format cannot hold (then `unrepresentable` counts the labels that leaving it out would touch,
    and `items` names the first of them, each 'where: what')."""

    def __init__(self, message: str, unrepresentable: int = 0, items: list[str] | None = None) -> None:
        super().__init__(message)
        self.unrepresentable = unrepresentable
        self.items = items or []


@dataclass(frozen=True)
class ExportContext:
    """What an exporter may need beyond the rows. `durations` and `media` are keyed by the stimulus's own id."""

    dataset_name: str | None = None
    benchmark: str | None = None
    root: Path | None = None
    stimulus_ids: tuple[str, ...] = ()
    durations: Mapping[str, float] = field(default_factory=dict)
    media: Mapping[str, Sequence[MediaRef]] = field(default_factory=dict)  # each stimulus's files, absolute paths
    source_files: frozenset[Path] = frozenset()   # resolved paths
    report: TransferReport = field(default_factory=TransferReport)  # where the writer tallies what it wrote


class Exporter(Protocol):
    name: str           # used on the command line: thinslice export NAME OUT
    title: str
    extension: str      # with the dot
    per_stimulus: bool  # one file per stimulus (a folder when several stimuli are exported)

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        """What of `rows` this format cannot hold, found before anything is written."""

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        """Write the rows atomically, counting them in `context.report`; returns the file (or folder) written."""

    def read(self, path: Path) -> Reading:
        """Read a file (or folder) in this format (written by this exporter or by the other tool) into rows."""

    def detect(self, path: Path) -> float:
        """How sure this reader is, from the file's content, that it reads the file `path` (0 to 1)."""


@dataclass(frozen=True)
class Loss:
    """A label a format cannot hold (`fields` empty) or fields of it that it cannot hold."""

    row: Row
    reason: str
    fields: tuple[str, ...] = ()

    @property
    def whole_label(self) -> bool:
        return not self.fields


def tier_of(row: Row) -> str:
    """The tier a row is written to or read from, for reports: the source tier, else `annotator | set`."""
    meta = row.get("meta") or {}
    return meta.get("tier") or TIER_SEPARATOR.join([row.get("annotator") or "", row.get("label_set") or ""])


def fields_lost(rows: Iterable[Row], carried: Iterable[str], carried_meta: Iterable[str] = ()) -> list[Loss]:
    """A `Loss` for each row with a value in a field (or `meta` key) outside `carried` (`carried_meta`)."""
    carried = set(carried)
    others = [name for name in ROW_FIELDS if name not in carried and name != "meta"]
    carried_meta = set(carried_meta)
    losses = []
    for row in rows:
        lost = [name for name in others if row.get(name) not in (None, "")]
        meta = row.get("meta")
        if meta:
            lost += [f"meta.{key}" for key, value in meta.items() if key not in carried_meta and value not in (None, "")]
        if lost:
            losses.append(Loss(row, "the format has no place for " + ", ".join(lost), tuple(lost)))
    return losses


def column_reading(name: str, columns: Mapping[str, list[Any]], items: list[int | None] | None,
                   lines: list[int | None] | None) -> Reading:
    """Labels of the file `name` read as a list per field of `ROW_FIELDS` (`meta` a dict or None), each from
    its item or line: a table (`Reading.labels`) when every value has the kind its field takes, else the rows
    as read, so that the importer says which value is of the wrong kind, and where."""
    import polars as pl

    from storage.annotations import meta_texts
    from storage.importers.plan import FRAME_SCHEMAS
    from storage.validation import label_kind_problems

    height = len(columns["label"])
    items, lines = items or [None] * height, lines or [None] * height
    problems, labels, _ = label_kind_problems({k: columns[k] for k in FRAME_SCHEMAS["annotations"]})
    if problems:
        return Reading([{**{k: columns[k][i] for k in ROW_FIELDS}, "origin": Origin(name, None, items[i], lines[i])}
                        for i in range(height)])
    return typed_reading(name, labels, pl.Series("meta", meta_texts(columns["meta"]), dtype=pl.String),
                         pl.Series(ORIGIN_COLUMNS["item"], items, dtype=pl.Int64),
                         pl.Series(ORIGIN_COLUMNS["line"], lines, dtype=pl.Int64))


def typed_reading(name: str, labels: pl.DataFrame, meta: pl.Series | pl.Expr, items: pl.Series | pl.Expr,
                  lines: pl.Series | pl.Expr) -> Reading:
    """The table of the file `name`'s labels (`labels`: the annotation fields, every value of its kind, typed as
    `FRAME_SCHEMAS` types them) with each label's meta as JSON text, and its item and line."""
    import polars as pl

    return Reading(labels=labels.with_columns(
        meta.alias("meta"), pl.lit(name, pl.String).alias(ORIGIN_COLUMNS["file"]),
        pl.lit(None, pl.String).alias(ORIGIN_COLUMNS["tier"]), items.alias(ORIGIN_COLUMNS["item"]),
        lines.alias(ORIGIN_COLUMNS["line"])))


def blank_row(**values: Any) -> Row:
    row: Row = dict.fromkeys(ROW_FIELDS)
    row.update(values)
    return row


def check_destination(out_path: Path, context: ExportContext) -> Path:
    """The resolved destination; refuses a path that is one of the dataset's source files (which
    `ExportContext.source_files` holds resolved)."""
    target = Path(out_path).expanduser().resolve()
    if target in context.source_files:
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
        # mkstemp makes the file 0600; an export is for sharing, so it gets what any new file would get
        os.chmod(temp, 0o666 & ~current_umask())
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


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux /proc)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
ROLE_PREFIX = "role="  # `annotator | set | role=audio:A`: the labels of one medium of the stimulus
# A tier `<tier> :note` (or `:value`) beside or under a tier holds its labels' notes (values), item by item.
ATTACHED = {"note": " :note", "value": " :value"}


class TierName(NamedTuple):
    annotator: str | None
    label_set: str | None
    whole: bool
    media_role: str | None


def tier_name(annotator: str, label_set: str, media_role: str | None, whole: bool) -> str:
    """Thinslice's own name for a tier: `annotator | set`, then `| role=...` and `| whole` where they apply."""
    return TIER_SEPARATOR.join([annotator, label_set] + ([ROLE_PREFIX + media_role] if media_role else [])
                               + ([WHOLE_SUFFIX] if whole else []))


@dataclass
class Tier:
    """One tier of a written file: its labels (start, end, text, row), sorted and never overlapping."""

    annotator: str
    label_set: str
    whole: bool
    intervals: list[tuple[float, float, str, Row]]
    copy: int = 1                 # 2, 3 ... for extra tiers holding overlapping labels
    points: bool = False          # a tier of moments (a Praat TextTier)
    source_name: str | None = None  # the tier's name in the file the labels came from
    speaker: str | None = None
    media_role: str | None = None

    @property
    def name(self) -> str:
        name = self.source_name or tier_name(self.annotator, self.label_set, self.media_role, self.whole)
        return f"{name} #{self.copy}" if self.copy > 1 else name


@functools.lru_cache(maxsize=4096)
def parse_tier_name(name: str) -> TierName:
    """Annotator, label set, whole and media role from a tier name written by `Tier.name`; a tier of another
    tool (no `annotator | set` in its name) is a label set of that name with no annotator."""
    if TIER_SEPARATOR not in name:
        return TierName(None, name or None, False, None)
    parts = re.sub(r" #\d+$", "", name).split(TIER_SEPARATOR)
    whole = len(parts) >= 3 and parts[-1] == WHOLE_SUFFIX
    if whole:
        parts = parts[:-1]
    role = parts.pop()[len(ROLE_PREFIX):] if len(parts) >= 3 and parts[-1].startswith(ROLE_PREFIX) else None
    return TierName(parts[0] or None, TIER_SEPARATOR.join(parts[1:]) or None, whole, role or None)


def _source_tier(row: Row) -> str | None:
    """The source tier name to write `row` under: kept only while it still names the row's label set (and
    the row has no media role, which only Thinslice's own tier names carry)."""
    name = (row.get("meta") or {}).get("tier")
    if name and row.get("start_s") is not None and not row.get("media_role") \
            and parse_tier_name(name).label_set == row.get("label_set"):
        return name
    return None


def span_end(rows: Sequence[Row], duration_s: float | None) -> float:
    """Where a file of these labels ends (and a whole-stimulus label with it): the stimulus duration, else
    the last label's end, else 1 s; never before a label's end."""
    ends = [r["end_s"] for r in rows if r.get("end_s") is not None]
    return max([duration_s or max(ends, default=0.0) or 1.0, *ends])


def build_tiers(rows: Sequence[Row], duration_s: float | None, *, separate_points: bool = False,
                by_speaker: bool = False) -> tuple[list[Tier], float]:
    """Tiers for one stimulus's rows and the end time used.

    Overlapping labels go to extra tiers; with `separate_points`, point labels go to tiers of their own
    (Praat keeps moments in TextTiers); with `by_speaker`, labels of different speakers go to different
    tiers (an ELAN tier has one participant). A whole-stimulus label becomes one interval spanning
    [0, end], where end is the stimulus duration, else the last label's end, else 1 s.
    """
    end = span_end(rows, duration_s)
    grouped: dict[tuple, list[tuple[float, float, str, Row]]] = {}
    for row in rows:
        whole = row.get("start_s") is None
        span = (0.0, end) if whole else (float(row["start_s"]), float(row["end_s"]))
        point = separate_points and not whole and span[0] == span[1]
        speaker = (row.get("meta") or {}).get("speaker") if by_speaker else None
        key = (row.get("annotator") or "", whole, row.get("label_set") or "", row.get("media_role") or "",
               _source_tier(row) or "", speaker or "", point)
        grouped.setdefault(key, []).append((*span, row.get("label") or "", row))
    tiers: list[Tier] = []
    copies: dict[str, int] = {}
    for (annotator, whole, label_set, role, source, speaker, point), items in sorted(grouped.items()):
        lanes: list[list[tuple[float, float, str, Row]]] = []
        for item in sorted(items, key=lambda i: (i[0], i[1])):
            for lane in lanes:
                last = lane[-1]
                if (last[0] < item[0]) if point else (last[1] <= item[0] and (last[0], last[1]) != (item[0], item[1])):
                    lane.append(item)
                    break
            else:
                lanes.append([item])
        for lane in lanes:
            # only one tier can have the source tier's own name: a copy of it (a second annotator's, or
            # overlapping labels) is named `annotator | set #n`, which reads back as the same label set
            own = source if source and source not in copies else None
            tier = Tier(annotator, label_set, whole, lane, points=point, source_name=own, speaker=speaker or None,
                        media_role=role or None)
            base = tier.name
            copies[base] = copies.get(base, 0) + 1
            tier.copy = copies[base]
            tiers.append(tier)
    return tiers, end


class TierRows:
    """Rows read from one tier of a file: annotator, label set and media role come from the tier's name (or, for
    another tool's tier, `annotator`), and the tier's own name is kept in `meta` when it is another
    tool's; a whole tier's labels lose their times. Worked out once per tier, since a corpus has
    100,000 labels on a few tiers."""

    def __init__(self, stimulus: str | None, name: str, *, annotator: str | None = None,
                 meta: Mapping[str, Any] | None = None) -> None:
        parsed_annotator, self.label_set, self.whole, self.media_role = parse_tier_name(name)
        self.stimulus = stimulus
        self.annotator = parsed_annotator or annotator or None
        self.meta = {k: v for k, v in (meta or {}).items() if v not in (None, "")}
        if TIER_SEPARATOR not in name:
            self.meta["tier"] = name

    def row(self, start: float, end: float, text: str, origin: Any, extra: Mapping[str, Any] | None = None) -> Row:
        """One label of the tier; `extra` adds to its `meta` (None values left out). The labels without
        `extra` share one `meta` (read, never changed), which the store then encodes once for all of them."""
        meta: Mapping[str, Any] | None = self.meta or None
        if extra:
            meta = {**self.meta, **{k: v for k, v in extra.items() if v is not None}} or None
        whole = self.whole
        return {"stimulus": self.stimulus, "annotator": self.annotator, "label_set": self.label_set, "label": text,
                "start_s": None if whole else start, "end_s": None if whole else end, "value": None, "note": None,
                "media_role": self.media_role, "meta": meta, "origin": origin}


def reading_schema() -> dict[str, pl.DataType]:
    """The columns of a reading's table (`Reading.labels`) and their types."""
    import polars as pl

    return {"stimulus": pl.String, "annotator": pl.String, "label_set": pl.String, "label": pl.String,
            "start_s": pl.Float64, "end_s": pl.Float64, "value": pl.String, "note": pl.String, "media_role": pl.String,
            "meta": pl.String, ORIGIN_COLUMNS["file"]: pl.String, ORIGIN_COLUMNS["tier"]: pl.String,
            ORIGIN_COLUMNS["item"]: pl.Int64, ORIGIN_COLUMNS["line"]: pl.Int64}


class TierTable:
    """A reading's table (`reading_schema`) of one file built a tier at a time from columns: a tier's labels
    come as lists, what its name and `TierRows` say once for all of them. Labels have no value or note unless
    `give` gives them one."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.columns: dict[str, list[Any]] = {column: [] for column in _PER_LABEL}
        self._tiers: list[tuple[TierRows, str, int]] = []   # each tier's rows, name and count of labels
        self._given: dict[str, dict[int, str]] = {"value": {}, "note": {}}

    def add(self, made: TierRows, tier: str, labels: Sequence[str], starts: Sequence[float], ends: Sequence[float],
            items: Iterable[int], lines: Sequence[int | None] | None = None,
            metas: Sequence[str | None] | None = None) -> None:
        """The labels of the tier named `tier` (each with its times, item number and line); a whole tier's
        labels lose their times. Each label's `meta` (JSON text) is its own in `metas`, else the tier's."""
        count = len(labels)
        columns = self.columns
        columns["label"] += labels
        columns["start_s"] += [None] * count if made.whole else starts
        columns["end_s"] += [None] * count if made.whole else ends
        columns["meta"] += metas if metas is not None else [json.dumps(made.meta) if made.meta else None] * count
        columns[ORIGIN_COLUMNS["item"]] += items
        columns[ORIGIN_COLUMNS["line"]] += [None] * count if lines is None else lines
        self._tiers.append((made, tier, count))

    def give(self, field_name: str, row: int, text: str) -> None:
        """Give the label in `row` (counted over the whole table) its `value` or `note`."""
        self._given[field_name][row] = text

    def frame(self) -> pl.DataFrame:
        import polars as pl

        schema = reading_schema()
        height = len(self.columns["label"])

        def per_tier(name: str, values: list[Any]) -> pl.Series:
            # one value a tier, repeated for its labels without a Python object per label
            series = pl.Series(name, values or [None], schema[name])
            if len(set(values)) <= 1:
                return series.new_from_index(0, height)
            return pl.concat([series.new_from_index(index, count) for index, (*_, count) in enumerate(self._tiers)])

        made = [tier[0] for tier in self._tiers]
        columns = {"stimulus": per_tier("stimulus", [m.stimulus for m in made]),
                   "annotator": per_tier("annotator", [m.annotator for m in made]),
                   "label_set": per_tier("label_set", [m.label_set for m in made]),
                   "media_role": per_tier("media_role", [m.media_role for m in made]),
                   ORIGIN_COLUMNS["file"]: per_tier(ORIGIN_COLUMNS["file"], [self.file] * len(made)),
                   ORIGIN_COLUMNS["tier"]: per_tier(ORIGIN_COLUMNS["tier"], [tier[1] for tier in self._tiers])}
        for name, given in self._given.items():
            if given:
                values: list[str | None] = [None] * height
                for row, text in given.items():
                    values[row] = text
                columns[name] = pl.Series(name, values, schema[name])
            else:
                columns[name] = per_tier(name, [])
        columns |= {name: pl.Series(name, values, schema[name]) for name, values in self.columns.items()}
        return pl.DataFrame([columns[name] for name in schema])


# the columns of a `TierTable` given a value per label; the rest are given one per tier
_PER_LABEL = ("label", "start_s", "end_s", "meta", ORIGIN_COLUMNS["item"], ORIGIN_COLUMNS["line"])
