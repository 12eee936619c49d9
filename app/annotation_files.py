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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from storage.annotations import AnnotationStore
from storage.exporters.common import Row, files_to_read, safe_file_stem
from storage.errors import ImportFailed
from storage.exporters.registry import detect_format, get_exporter
from storage.exporters.report import SHOWN_ITEMS, Origin, TransferReport, describe, refused, without_cycle_collection
from storage.validation import label_problems

DEFAULT_IMPORT_LABEL_SET = "imported"
AUTO = "auto"  # the format the file's content shows
# Times come to the millisecond from ELAN and as decimals from Praat and Audacity: a label may end this far
# past the media's end before it counts as outside it.
DURATION_SLACK_S = 0.0005


@dataclass
class ImportReading:
    """Rows ready for `AnnotationModel.import_rows` (with `stimulus_id` and `origin`), the report so far,
    and the controlled vocabularies the files define (label set -> [(label, description)])."""

    rows: list[dict[str, Any]]
    report: TransferReport
    vocabularies: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)


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


def stimulus_for_name(stem: str, by_external: dict[str, int]) -> tuple[str | None, list[str]]:
    """The stimulus a file name names (the id itself, or the file name an export gives it) and, when
    several do, all of them."""
    if stem in by_external:
        return stem, [stem]
    matches = [ext for ext in by_external if safe_file_stem(ext) == stem]
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
    result = ImportReading([], TransferReport())
    problems: list[str] = []
    outside: list[str] = []  # the labels `clip` or `skip_outside` would take, also in `problems` (with the options named)
    unrepresentable: list[str] = []
    unrepresentable_count = 0
    stopped_early = False
    for file in files:
        found = exporter.read(file)
        if found.report.left_out:
            unrepresentable += found.report.left_out_items
            unrepresentable_count += found.report.left_out
        result.report.merge(found.report)
        for name, entries in found.vocabularies.items():
            result.vocabularies.setdefault(name, []).extend(entries)
        placed = _place(file, _storable(found.rows, problems), found.media, exporter.per_stimulus, stimulus,
                        by_external, ref.name, result.report, problems)
        for row, external in placed:
            prepared = _prepared(row, external, by_external, durations, annotator, label_set, choice, result.report,
                                 problems, outside)
            if prepared is not None:
                result.rows.append(prepared)
        if len(problems) > 50:
            stopped_early = True
            break
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
    for external in sorted({r["stimulus"] for r in result.rows} - set(durations)):
        result.report.note(f"the stimulus {external!r} has no media duration in the store: its label times"
                           " were not checked against one")
    return result


def _storable(rows: list[Row], problems: list[str]) -> list[Row]:
    """The rows the store may hold by the importers' value rule (`label_problems`); each other one is a
    problem naming where it was read, what was found and what was expected. A time before 0 is a label
    outside its stimulus, which `_prepared` refuses or, as asked, cuts to it or leaves out."""
    bad = label_problems(rows, before_zero=True)
    for index, field_name, found, expected in bad:
        problems.append(f"{rows[index].get('origin') or Origin('?')}: field '{field_name}' found {found};"
                        f" expected {expected}")
    refused_rows = {index for index, *_ in bad}
    return [row for index, row in enumerate(rows) if index not in refused_rows] if refused_rows else rows


def _place(file: Path, rows: list[Row], media: list[str], per_stimulus: bool, stimulus: str | None,
           by_external: dict[str, int], dataset: str, report: TransferReport,
           problems: list[str]) -> list[tuple[Row, str]]:
    """Each row with the stimulus (its id in the dataset) it lands on."""
    if not per_stimulus:
        placed = []
        for row in rows:
            named = str(row["stimulus"]) if row.get("stimulus") not in (None, "") else stimulus
            if named not in by_external:
                problems.append(f"{row['origin']}: the stimulus {named!r} is not in the dataset {dataset!r}")
            elif stimulus is not None and named != stimulus:
                problems.append(f"{row['origin']}: the row is for the stimulus {named!r}, not --stimulus {stimulus!r}")
            else:
                placed.append((row, named))
        return placed
    inside = sorted({str(r["stimulus"]) for r in rows if r.get("stimulus")})
    if stimulus is not None:
        if inside and inside != [stimulus]:
            report.note(f"{file.name} names the stimulus {inside[0]!r} inside; placed on {stimulus!r} as --stimulus asks")
        target = stimulus
    elif inside and inside[0] in by_external:
        target = inside[0]
    else:
        target, matches = stimulus_for_name(file.stem, by_external)
        for linked in media:  # else the recording it links (an ELAN file names its media)
            if target is None and not matches:
                target, _ = stimulus_for_name(PurePosixPath(linked).stem, by_external)
                if target is not None:
                    report.note(f"{file.name} placed on the stimulus {target!r} by its media file {linked!r}")
        if target is None:
            why = (f"its name matches several stimuli ({', '.join(matches[:4])})" if matches else
                   f"neither its name{' nor the id inside it (' + inside[0] + ')' if inside else ''}"
                   f" is a stimulus of the dataset {dataset!r}")
            problems.append(f"{file.name}: cannot tell which stimulus it belongs to: {why}; name the file after"
                            " its stimulus, or import it alone with --stimulus ID")
            return []
    return [(row, target) for row in rows]


def _prepared(row: Row, external: str, by_external: dict[str, int], durations: dict[str, float],
              annotator: str | None, label_set: str | None, choice: _Choice, report: TransferReport,
              problems: list[str], outside: list[str]) -> dict[str, Any] | None:
    """The row (one `_storable` let through) as the annotation model takes it, with its times checked against
    the stimulus; None when
    it is refused (a problem is recorded, and also in `outside` when `clip` or `skip_outside` would take it),
    or clipped away or left out (the report says so)."""
    origin: Origin = row.get("origin") or Origin("?")
    who = row.get("annotator") or annotator
    if not who:
        problems.append(f"{origin}: the label has no annotator; give one with --annotator")
        return None
    start, end = row.get("start_s"), row.get("end_s")
    duration = durations.get(external)
    if start is not None and (start < 0 or (duration is not None and end > duration + DURATION_SLACK_S)):
        limit = f"0-{duration:g} s" if duration is not None else "times from 0 s"
        if choice.skip_outside and not choice.clip:
            report.leave_out(origin, f"outside the stimulus ({limit}), left out with --skip-outside", describe(row))
            return None
        if not choice.clip:
            outside.append(f"{origin}: {describe(row)} lies outside the stimulus {external!r} ({limit})")
            problems.append(outside[-1])
            return None
        top = duration if duration is not None else end
        new_start, new_end = min(max(start, 0.0), top), min(max(end, 0.0), top)
        if start == end or new_start == new_end:
            report.leave_out(origin, f"wholly outside the stimulus ({limit}), nothing left when cut", describe(row))
            return None
        report.change(origin, f"cut to the stimulus ({limit}) with --clip")
        start, end = new_start, new_end
    prepared = dict(row)  # the row's fields (ROW_FIELDS) and its origin
    prepared.update(stimulus_id=by_external[external], stimulus=external, annotator=who, start_s=start, end_s=end,
                    origin=origin, label_set=row.get("label_set") or label_set or DEFAULT_IMPORT_LABEL_SET)
    return prepared
