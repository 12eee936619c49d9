"""Reading an annotation file (or a folder of them) into rows for the store, landing each label where it belongs.

Reads only, so a worker may run it. A per-recording file (ELAN, Praat, Audacity) is placed on one stimulus:
the one `--stimulus` names (one file only), else the id the file holds inside (ELAN's `thinslice:stimulus`),
else the one its file name names, either as the id itself or as the file name an export gives that id
(`synthesis/901` is written as `synthesis_901`), else the one its linked media file is named after. A file
that cannot be placed is refused. A label outside its stimulus's duration is refused, cut to it with `clip`,
or left out with `skip_outside` (with both, `clip` decides). A label the reader could not represent (an ELAN
annotation with no time to be found) refuses the file unless `skip_unrepresentable`; every label read, left
out or cut is in the report. A refusal that only those options would lift is an `ImportNeedsChoice`, so the
window can ask which the user wants. The format `auto` is the one the file's content shows
(`detect_format`), as the window reads a file.

The labels of every file read are checked, placed and prepared together as one table of columns, so a
100,000-label corpus costs a few table operations, not a Python step per label; only the labels refused,
cut or left out are looked at one by one, to say which they are.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, groupby, repeat
from operator import itemgetter
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl

from storage.annotations import AnnotationStore, meta_texts
from storage.exporters.common import Row, files_to_read, safe_file_stem
from storage.errors import ImportFailed
from storage.exporters.registry import detect_format, get_exporter
from storage.exporters.report import (ORIGIN_COLUMNS, SHOWN_ITEMS, Origin, Reading, TransferReport, describe,
                                      refused, without_cycle_collection)
from storage.importers.plan import FRAME_SCHEMAS
from storage.validation import label_kind_problems, label_value_problems

DEFAULT_IMPORT_LABEL_SET = "imported"
AUTO = "auto"  # the format the file's content shows
# Times come to the millisecond from ELAN and as decimals from Praat and Audacity: a label may end this far
# past the media's end before it counts as outside it.
DURATION_SLACK_S = 0.0005


# the fields a reader's row holds that the store judges and keeps (`meta` besides, as JSON text)
LABEL_FIELDS = tuple(FRAME_SCHEMAS["annotations"])


@dataclass
class ImportReading:
    """Labels ready for `AnnotationModel.import_rows`, one row each in the order read: the store's columns
    (`storage.annotations.NEW_ROW_COLUMNS`, `meta` as JSON text), `stimulus` (the dataset's own id) and where
    each was read (`ORIGIN_COLUMNS`, see `origins`); the report so far, and the controlled vocabularies the
    files define (label set -> [(label, description)])."""

    labels: pl.DataFrame
    report: TransferReport
    vocabularies: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)

    def origins(self) -> list[Origin]:
        """Where each label was read, in row order."""
        return [Origin(*values) for values in self.labels.select(*ORIGIN_COLUMNS.values()).iter_rows()]


class ImportNeedsChoice(ImportFailed):
    """A refusal the user may lift: `outside` labels lie outside their stimulus (`clip` cuts them to it,
    `skip_outside` leaves them out) and `unrepresentable` labels could not be represented
    (`skip_unrepresentable` leaves them out); nothing else was wrong with the file. `items` names the first
    of them, each 'where: what'."""

    def __init__(self, message: str, outside: int, unrepresentable: int, items: list[str]) -> None:
        super().__init__(message)
        self.outside = outside
        self.unrepresentable = unrepresentable
        self.items = items


class StimulusNames:
    """The stimuli of a dataset by the names a file may give them: the id itself, or the file name an export
    gives that id (`synthesis/901` is written as `synthesis_901`)."""

    def __init__(self, by_external: dict[str, int]) -> None:
        self.by_external = by_external
        self._stems: dict[str, list[str]] | None = None   # made when a name is first not an id

    def find(self, stem: str) -> tuple[str | None, list[str]]:
        """The stimulus a file name names and, when several do, all of them."""
        if stem in self.by_external:
            return stem, [stem]
        if self._stems is None:
            self._stems = {}
            for external in self.by_external:
                self._stems.setdefault(safe_file_stem(external), []).append(external)
        matches = self._stems.get(stem, [])
        return (matches[0] if len(matches) == 1 else None), matches


def read_annotation_file(annotations: AnnotationStore, format: str, path: Path | str, dataset: str | None,
                         annotator: str | None = None, label_set: str | None = None,
                         stimulus: str | None = None, *, clip: bool = False,
                         skip_unrepresentable: bool = False, skip_outside: bool = False) -> ImportReading:
    """Read `path` in `format` (`auto`: the one its content shows) into rows of the dataset's stimuli. A row
    without an annotator gets `annotator`; without a label set, `label_set` (default "imported"). Raises
    `ImportFailed` naming file, tier or line, and item, for anything that does not fit; nothing is written
    either way."""
    with without_cycle_collection():
        return _read(annotations, format, Path(path), dataset, annotator, label_set, stimulus,
                     _Choice(clip, skip_unrepresentable, skip_outside))


@dataclass(frozen=True)
class _Choice:
    clip: bool
    skip_unrepresentable: bool
    skip_outside: bool


def _read(annotations: AnnotationStore, format: str, path: Path, dataset: str | None, annotator: str | None,
          label_set: str | None, stimulus: str | None, choice: _Choice) -> ImportReading:
    if not path.exists():
        raise refused([f"{path}: no such file or folder"])
    exporter = detect_format(path) if format == AUTO else get_exporter(format)
    ref = annotations.dataset(dataset)
    stimuli = annotations.stimulus_ids(ref.id)
    by_external = {ext: sid for sid, ext in stimuli.items()}
    durations = {stimuli[sid]: d for sid, d in annotations.stimulus_durations(stimuli).items()}
    files = files_to_read(path, exporter.extension) if exporter.per_stimulus else [path]
    if not files:
        raise refused([f"{path}: the folder holds no {exporter.extension} files to import as {exporter.name}"])
    if stimulus is not None and stimulus not in by_external:
        raise refused([f"--stimulus {stimulus!r}: the dataset {ref.name!r} has no stimulus with that id"])
    if stimulus is not None and len(files) > 1:
        raise refused([f"{path}: --stimulus places one file on one stimulus, and this folder holds {len(files)}"
                       f" {exporter.extension} files; name each file after its stimulus instead"])
    readings: list[tuple[Path, Reading]] = []
    failure: Exception | None = None
    for file in files:
        try:
            readings.append((file, exporter.read(file)))
        except Exception as exc:  # raised below, unless the files before it refuse the import first
            failure = exc
            break
    checked = _Checked(_Batch(readings))
    checked.place(exporter.per_stimulus, stimulus, by_external, ref.name)
    checked.prepare(durations, annotator, choice)
    result = ImportReading(pl.DataFrame(), TransferReport())
    problems: list[str] = []
    outside: list[str] = []  # the labels `clip` or `skip_outside` would take, also in `problems` (with the options named)
    unrepresentable: list[str] = []
    unrepresentable_count = 0
    stopped_early = False
    for index, (_file, found) in enumerate(readings):
        if found.report.left_out:
            unrepresentable += found.report.left_out_items
            unrepresentable_count += found.report.left_out
        result.report.merge(found.report)
        for name, entries in found.vocabularies.items():
            result.vocabularies.setdefault(name, []).extend(entries)
        problems += checked.problems[index]
        outside += checked.outside[index]
        for apply in checked.report_entries[index]:
            apply(result.report)
        if len(problems) > 50:
            stopped_early = True
            break
    if failure is not None and not stopped_early:
        raise failure
    if unrepresentable and not choice.skip_unrepresentable:
        problems.append(f"{unrepresentable[0]} (add --skip-unrepresentable to import the rest and list"
                        " what was left out)")
    # the way past labels outside their stimulus is said once, with their count, however many there are
    fixes = [f"{len(outside)}{' or more' if stopped_early else ''} labels lie outside their stimulus: add --clip"
             " to cut them to it, or --skip-outside to leave them out"] if outside else []
    if problems and len(problems) == len(outside) + bool(unrepresentable and not choice.skip_unrepresentable):
        if choice.skip_unrepresentable:
            unrepresentable, unrepresentable_count = [], 0
        raise ImportNeedsChoice(str(refused(problems, fixes)), len(outside), unrepresentable_count,
                                (outside + unrepresentable)[:SHOWN_ITEMS])
    if problems:
        raise refused(problems, fixes)
    result.labels = checked.labels(by_external, label_set)
    for external in sorted(set(result.labels["stimulus"].unique().to_list()) - set(durations)):
        result.report.note(f"the stimulus {external!r} has no media duration in the store: its label times"
                           " were not checked against one")
    return result


class _Batch:
    """The labels of every file read as one typed frame, in file and row order: the fields the store judges
    (`LABEL_FIELDS`), `meta` as JSON text, where each was read (`ORIGIN_COLUMNS`), `_row` (its place among
    all rows read) and `_file` (its file's index in the readings). A reader's row holding a value of the wrong
    kind (a list where a label is expected) is not in it: `refused` says, per file, which and why."""

    def __init__(self, readings: list[tuple[Path, Reading]]) -> None:
        self.files = [file for file, _ in readings]
        self.media = [found.media for _, found in readings]
        self.refused: list[list[tuple[int, str]]] = [[] for _ in readings]
        frames = []
        offset = 0
        # the rows of files read one dict each are typed together, however many files there are
        for as_rows, run in groupby(enumerate(readings), key=lambda item: item[1][1].labels is None):
            run = list(run)
            if not as_rows:  # the tables of a run of files as one, each row with its file's index
                heights = [found.labels.height for _, (_, found) in run]
                frame = pl.concat([found.labels for _, (_, found) in run], how="diagonal_relaxed").select(
                    *LABEL_FIELDS, "meta", *ORIGIN_COLUMNS.values())
                frames.append(frame.with_columns(
                    _row=pl.int_range(offset, offset + frame.height, dtype=pl.Int64),
                    _file=pl.Series(list(chain.from_iterable(map(repeat, [index for index, _ in run], heights))),
                                    dtype=pl.Int64)))
                offset += frame.height
                continue
            rows: list[Row] = []
            file_of: list[int] = []
            for index, (_, found) in run:
                rows += found.rows
                file_of += [index] * len(found.rows)
            frame, refused = _typed(rows)
            frames.append(frame.with_columns(_file=pl.Series(file_of, dtype=pl.Int64).gather(frame["_row"]),
                                             _row=pl.col("_row") + offset))
            for row, text in refused:
                self.refused[file_of[row]].append((offset + row, text))
            offset += len(rows)
        schema = {**FRAME_SCHEMAS["annotations"], "meta": pl.String, **_ORIGIN_SCHEMA, "_row": pl.Int64,
                  "_file": pl.Int64}
        self.frame = pl.concat([f.select(pl.col(c).cast(t) for c, t in schema.items()) for f in frames]) \
            if frames else pl.DataFrame(schema=schema)


_ORIGIN_SCHEMA = dict(zip(ORIGIN_COLUMNS.values(), (pl.String, pl.String, pl.Int64, pl.Int64)))


def _typed(rows: list[Row]) -> tuple[pl.DataFrame, list[tuple[int, str]]]:
    """A reader's rows as a frame of `_Batch`'s columns (with `_row`, each one's index among `rows`), and
    (index, problem) for each row holding a value of the wrong kind, which is left out of it."""
    fields = (*LABEL_FIELDS, "meta", "origin")
    try:  # the fields of all rows at once, when every row has every field, as the readers' rows do
        columns = dict(zip(fields, zip(*map(itemgetter(*fields), rows)))) if rows else {f: () for f in fields}
    except KeyError:
        columns = {name: [row.get(name) for row in rows] for name in fields}
    problems, frame, fit = label_kind_problems({name: columns[name] for name in LABEL_FIELDS})
    origins = [origin or Origin("?") for origin in columns["origin"]]
    refused = [(row, f"{origins[row]}: field '{field_name}' found {found}; expected {expected}")
               for row, field_name, found, expected in problems]
    if problems:
        origins = [origins[i] for i in fit]
    metas = meta_texts([columns["meta"][i] for i in fit] if problems else columns["meta"])
    where = list(zip(*origins)) if origins else [()] * len(ORIGIN_COLUMNS)
    return frame.with_columns(
        pl.Series("meta", metas, dtype=pl.String),
        *(pl.Series(name, values, dtype=dtype, strict=False)
          for (name, dtype), values in zip(_ORIGIN_SCHEMA.items(), where)),
        pl.Series("_row", fit, dtype=pl.Int64)), refused


def _origin(row: dict[str, Any]) -> Origin:
    """Where a row of `_Batch.frame` (as a dict) was read."""
    return Origin(*(row[name] for name in ORIGIN_COLUMNS.values()))


class _Checked:
    """What the value rule (`label_column_problems`) lets through of a batch, as one typed frame, and each
    file's problems so far, in the order a user reads them: the refused values, then placing, then the checks
    against the stimulus."""

    def __init__(self, batch: _Batch) -> None:
        self.batch = batch
        count = len(batch.files)
        self.problems: list[list[str]] = [[] for _ in range(count)]
        self.outside: list[list[str]] = [[] for _ in range(count)]
        self.report_entries: list[list[Any]] = [[] for _ in range(count)]
        self.frame = batch.frame
        found: list[list[tuple[int, str]]] = [list(refused) for refused in batch.refused]
        # the whole batch is judged at once; a file with a problem is judged again alone, so that what is said
        # of it (the first 50 of each kind of damage) is what judging it alone says
        if label_value_problems(self.frame, before_zero=True):
            bad_rows: list[int] = []
            for index in range(count):
                rows = self.frame.filter(pl.col("_file") == index)
                for at, field_name, value, expected in label_value_problems(rows, before_zero=True):
                    row = rows.row(at, named=True)
                    found[index].append((row["_row"], f"{_origin(row)}: field '{field_name}' found {value};"
                                                      f" expected {expected}"))
                    bad_rows.append(row["_row"])
            self.frame = self.frame.filter(~pl.col("_row").is_in(bad_rows))
        for index, problems in enumerate(found):
            self.problems[index] += [text for _, text in sorted(problems, key=lambda p: p[0])]

    def place(self, per_stimulus: bool, stimulus: str | None, by_external: dict[str, int], dataset: str) -> None:
        """Put in `stimulus` the one each row lands on, and take out those that land on none. A table's row
        names its own (else `stimulus`); a per-recording file's rows all land where `stimulus`, the id inside
        the file, its name, or its linked media file says."""
        named = pl.col("stimulus")
        if not per_stimulus:
            frame = self.frame.with_columns(stimulus=pl.when(named.is_not_null() & (named != "")).then(named)
                                            .otherwise(pl.lit(stimulus, pl.String)))
            elsewhere = ~named.is_in(list(by_external)).fill_null(False)
            wrong = (named != stimulus).fill_null(True) if stimulus is not None else pl.lit(False)
            for row in frame.filter(elsewhere | wrong).iter_rows(named=True):
                origin, found = _origin(row), row["stimulus"]
                self.problems[row["_file"]].append(
                    f"{origin}: the stimulus {found!r} is not in the dataset {dataset!r}" if found not in by_external
                    else f"{origin}: the row is for the stimulus {found!r}, not --stimulus {stimulus!r}")
            self.frame = frame.filter(~(elsewhere | wrong))
            return
        inside: dict[int, list[str]] = {index: sorted(names) for index, names in self.frame.filter(
            named.is_not_null() & (named != "")).group_by("_file").agg(named.unique()).iter_rows()}
        targets = {}
        names = StimulusNames(by_external)
        for index, file in enumerate(self.batch.files):
            target = self._target(file, inside.get(index, []), self.batch.media[index], stimulus, names,
                                  dataset, index)
            if target is not None:
                targets[index] = target
        self.frame = self.frame.filter(pl.col("_file").is_in(list(targets))).with_columns(
            stimulus=_looked_up(pl.col("_file"), targets, pl.Int64, pl.String))

    def _target(self, file: Path, inside: list[str], media: list[str], stimulus: str | None,
                names: StimulusNames, dataset: str, index: int) -> str | None:
        """The stimulus a per-recording file's labels land on (the ids its rows hold are `inside`); None,
        with the problem said, when there is none to be told."""
        if stimulus is not None:
            if inside and inside != [stimulus]:
                self.report_entries[index].append(_note(f"{file.name} names the stimulus {inside[0]!r} inside;"
                                                        f" placed on {stimulus!r} as --stimulus asks"))
            return stimulus
        if inside and inside[0] in names.by_external:
            return inside[0]
        target, matches = names.find(file.stem)
        for linked in media:  # else the recording it links (an ELAN file names its media)
            if target is None and not matches:
                target, _ = names.find(PurePosixPath(linked).stem)
                if target is not None:
                    self.report_entries[index].append(
                        _note(f"{file.name} placed on the stimulus {target!r} by its media file {linked!r}"))
        if target is None:
            why = (f"its name matches several stimuli ({', '.join(matches[:4])})" if matches else
                   f"neither its name{' nor the id inside it (' + inside[0] + ')' if inside else ''}"
                   f" is a stimulus of the dataset {dataset!r}")
            self.problems[index].append(f"{file.name}: cannot tell which stimulus it belongs to: {why}; name the"
                                        " file after its stimulus, or import it alone with --stimulus ID")
        return target

    def prepare(self, durations: dict[str, float], annotator: str | None, choice: _Choice) -> None:
        """Each placed row's annotator (its own, else `annotator`) and times checked against its stimulus's
        duration: a row without annotator is refused; one outside its stimulus is refused (and listed in
        `outside`), cut to it with `clip`, or left out with `skip_outside`."""
        frame = self.frame.with_columns(
            annotator=pl.when(pl.col("annotator") != "").then(pl.col("annotator")).otherwise(pl.lit(annotator or None)),
            _duration=_looked_up(pl.col("stimulus"), durations, pl.String, pl.Float64))
        nobody = frame.filter(pl.col("annotator").is_null())
        start, end, duration = pl.col("start_s"), pl.col("end_s"), pl.col("_duration")
        beyond = frame.filter(pl.col("annotator").is_not_null() & start.is_not_null()
                              & ((start < 0) | (duration.is_not_null() & (end > duration + DURATION_SLACK_S))))
        problems: list[tuple[int, int, str]] = [
            (row["_file"], row["_row"], f"{_origin(row)}: the label has no annotator; give one"
                                        " with --annotator") for row in nobody.iter_rows(named=True)]
        gone = set(nobody["_row"].to_list())
        cut: dict[int, tuple[float, float]] = {}
        for row in beyond.iter_rows(named=True):
            origin, external, index = _origin(row), row["stimulus"], row["_file"]
            start_s, end_s, top = row["start_s"], row["end_s"], row["_duration"]
            limit = f"0-{top:g} s" if top is not None else "times from 0 s"
            if choice.skip_outside and not choice.clip:
                self.report_entries[index].append(_leave_out(origin, f"outside the stimulus ({limit}), left out with"
                                                                     " --skip-outside", describe(row)))
                gone.add(row["_row"])
                continue
            if not choice.clip:
                self.outside[index].append(f"{origin}: {describe(row)} lies outside the stimulus {external!r}"
                                           f" ({limit})")
                problems.append((index, row["_row"], self.outside[index][-1]))
                gone.add(row["_row"])
                continue
            top = top if top is not None else end_s
            new_start, new_end = min(max(start_s, 0.0), top), min(max(end_s, 0.0), top)
            if start_s == end_s or new_start == new_end:
                self.report_entries[index].append(_leave_out(origin, f"wholly outside the stimulus ({limit}), nothing"
                                                                     " left when cut", describe(row)))
                gone.add(row["_row"])
                continue
            self.report_entries[index].append(_change(origin, f"cut to the stimulus ({limit}) with --clip"))
            cut[row["_row"]] = (new_start, new_end)
        for index, _row, text in sorted(problems, key=lambda p: p[1]):
            self.problems[index].append(text)
        if gone:
            frame = frame.filter(~pl.col("_row").is_in(list(gone)))
        if cut:
            frame = frame.with_columns(
                start_s=_looked_up(pl.col("_row"), {r: times[0] for r, times in cut.items()}, pl.Int64, pl.Float64,
                                   pl.col("start_s")),
                end_s=_looked_up(pl.col("_row"), {r: times[1] for r, times in cut.items()}, pl.Int64, pl.Float64,
                                 pl.col("end_s")))
        self.frame = frame.drop("_duration")

    def labels(self, by_external: dict[str, int], label_set: str | None) -> pl.DataFrame:
        """The rows as `ImportReading.labels` holds them."""
        set_name = label_set or DEFAULT_IMPORT_LABEL_SET
        return self.frame.select(
            _looked_up(pl.col("stimulus"), by_external, pl.String, pl.Int64).alias("stimulus_id"), "annotator",
            pl.when(pl.col("label_set") != "").then("label_set").otherwise(pl.lit(set_name)).alias("label_set"),
            "label", "start_s", "end_s", "value", "note", "media_role", "meta", "stimulus", *ORIGIN_COLUMNS.values())


def _looked_up(column: pl.Expr, mapping: dict[Any, Any], key: Any, value: Any, default: Any = None) -> pl.Expr:
    """`column`'s values looked up in `mapping` (keys of polars type `key`, values of `value`); `default`
    (none unless given) for one it lacks."""
    return column.replace_strict(pl.Series(list(mapping), dtype=key), pl.Series(list(mapping.values()), dtype=value),
                                 default=default, return_dtype=value)


def _leave_out(origin: Origin, reason: str, what: str) -> Any:
    return lambda report: report.leave_out(origin, reason, what)


def _change(origin: Origin, how: str) -> Any:
    return lambda report: report.change(origin, how)


def _note(text: str) -> Any:
    return lambda report: report.note(text)
