"""Export annotations from the store to a file format, and import them back. Qt-free; used by the CLI and GUI.

Exports never overwrite a file of the dataset itself: every file under the dataset root (except the
`annotations/` folder, where Thinslice's own sidecar lives) and every media path counts as a source file.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.annotation_files import ImportReading, read_annotation_file
from app.annotation_model import AnnotationModel
from storage.annotations import NATURAL_KEY, Annotation, AnnotationError, AnnotationStore, DatasetRef
from storage.errors import ImportFailed
from storage.exporters.common import ExportContext, Exporter, ExportRefused, Row, per_stimulus_targets, tier_of
from storage.exporters.registry import get_exporter
from storage.exporters.report import (ORIGIN_COLUMNS, SHOWN_ITEMS, Origin, TransferReport, describe,
                                      without_cycle_collection)
from storage.queries import stimulus_media
from storage.store import Store

if TYPE_CHECKING:
    import polars as pl

# --filter keys: annotation fields and stimulus fields
ANNOTATION_FILTERS = ("label_set", "label", "media_role")
STIMULUS_FILTERS = ("stimulus", "split", "kind")
FILTER_KEYS = ANNOTATION_FILTERS + STIMULUS_FILTERS
SHOWN_LOSSES = 3


@dataclass(frozen=True)
class ExportResult:
    """The file or folder written, and what was written, per file and tier, and what was left out."""

    path: Path
    report: TransferReport


def source_files(annotations: AnnotationStore, dataset: DatasetRef) -> frozenset[Path]:
    """Files an export must never replace: the dataset's media and every file under its root
    outside `annotations/`."""
    root = Path(dataset.root).expanduser()
    found = {(root / p) if not Path(p).is_absolute() else Path(p) for p in annotations.media_paths(dataset.id)}
    if dataset.source and Path(dataset.source).is_file():
        found.add(Path(dataset.source))
    if root.is_dir():
        for folder, subfolders, files in os.walk(root):
            if Path(folder) == root and "annotations" in subfolders:
                subfolders.remove("annotations")
            found.update(Path(folder) / name for name in files)
    return frozenset(p.resolve() for p in found)


def _check_filters(filters: Mapping[str, str]) -> None:
    unknown = sorted(set(filters) - set(FILTER_KEYS))
    if unknown:
        raise AnnotationError(f"Unknown filter {', '.join(unknown)}; filters are {', '.join(FILTER_KEYS)}.")


def export_rows(annotations: AnnotationStore, dataset: DatasetRef, annotator: str | None,
                filters: Mapping[str, str]) -> tuple[list[Row], dict[int, str]]:
    """The rows to export and the stimuli they were chosen from (store id -> the dataset's own id)."""
    _check_filters(filters)
    stimuli = annotations.stimulus_ids(dataset.id, external_id=filters.get("stimulus"),
                                       split=filters.get("split"), kind=filters.get("kind"))
    rows = annotations.export_rows(stimuli, annotator=annotator, **{k: filters.get(k) for k in ANNOTATION_FILTERS})
    return rows, stimuli


def export_annotations(store: Store, format: str, out: Path | str, dataset: str | None = None,
                       annotator: str | None = None, filters: Mapping[str, str] | None = None, *,
                       skip_unrepresentable: bool = False) -> ExportResult:
    """Write the dataset's live annotations (optionally one annotator's, filtered) in `format` to `out`.

    A label (or a field of one) the format cannot hold refuses the export, naming it, unless
    `skip_unrepresentable`: then it is left out and listed in the report. Raises a `ThinsliceError` with a
    clear message on refusal; nothing is written then.
    """
    exporter = get_exporter(format)
    annotations = AnnotationStore(store)
    ref = annotations.dataset(dataset)
    with without_cycle_collection():
        rows, stimuli = export_rows(annotations, ref, annotator, filters or {})
        durations = annotations.stimulus_durations(stimuli)
        media = stimulus_media(store.cursor(), list(stimuli), Path(ref.root).expanduser())
        context = ExportContext(dataset_name=ref.name, benchmark=ref.benchmark, root=Path(ref.root),
                                stimulus_ids=tuple(stimuli.values()),
                                durations={stimuli[i]: d for i, d in durations.items()},
                                media={stimuli[i]: tuple(files) for i, files in media.items()},
                                source_files=source_files(annotations, ref))
        rows = _representable(exporter, rows, Path(out), context.report, skip_unrepresentable)
        written = exporter.export(rows, Path(out), context)
    return ExportResult(written, context.report)


def _representable(exporter: Exporter, rows: list[Row], out: Path, report: TransferReport,
                   skip: bool) -> list[Row]:
    """The rows to write: all of them when the format holds them, else (with `skip`) those it can hold,
    the rest listed in `report`; without `skip`, `ExportRefused` naming what cannot be held."""
    losses = exporter.unrepresentable(rows)
    if not losses:
        return rows
    files = per_stimulus_targets(exporter, rows, out) if exporter.per_stimulus and rows else {}

    def origin(row: Row) -> Origin:
        target = files.get(str(row["stimulus"]))
        return Origin(target.name if target else out.name, tier_of(row))

    if not skip:
        items = [f"{loss.row['stimulus']}, tier '{tier_of(loss.row)}', {describe(loss.row)}: {loss.reason}"
                 for loss in losses[:SHOWN_ITEMS]]
        more = f" (and {len(losses) - SHOWN_LOSSES} more)" if len(losses) > SHOWN_LOSSES else ""
        raise ExportRefused(f"{exporter.title} cannot hold {len(losses)} of the {len(rows)} labels:"
                            f" {'; '.join(items[:SHOWN_LOSSES])}{more}. Nothing was written. Export to CSV, Parquet"
                            " or JSON lines, which hold everything, or leave these out and list them"
                            " (--skip-unrepresentable).", unrepresentable=len(losses), items=items)
    dropped = {id(loss.row) for loss in losses if loss.whole_label}
    for loss in losses:
        where = origin(loss.row)
        if loss.whole_label:
            report.leave_out(where, loss.reason, f"stimulus {loss.row['stimulus']!r}, {describe(loss.row)}")
        else:
            report.drop_fields(where.file, where.tier, loss.fields)
    return [r for r in rows if id(r) not in dropped]


def import_prepared(model: AnnotationModel, labels: pl.DataFrame, source: str) -> Sequence[Annotation]:
    """Add the labels `read_annotation_file` read (`ImportReading.labels`) through the annotation model, all
    or nothing; labels the store already has are left out, so importing the same file twice adds nothing.
    Returns the labels added."""
    try:
        return model.import_rows(labels, source)
    except AnnotationError as exc:  # a refused write (StoreWriteError) passes through as it is
        raise ImportFailed(f"{source}: {exc}") from None


def import_annotations(store: Store, format: str, path: Path | str, dataset: str | None,
                       annotator: str | None = None, label_set: str | None = None,
                       stimulus: str | None = None, model: AnnotationModel | None = None, *, clip: bool = False,
                       skip_unrepresentable: bool = False, skip_outside: bool = False,
                       report: TransferReport | None = None) -> int:
    """Read a file (or folder) in `format` (`auto`: the one its content shows) and add its labels to the
    dataset's stimuli in one transaction, through `model` (a new one on the store when None). Returns the
    count added (0 for a file already in); `report`, when given, receives what was read, written and left out
    per file and tier."""
    model = model or AnnotationModel(AnnotationStore(store), annotator=annotator or "")
    reading = read_annotation_file(model.store, format, path, dataset, annotator, label_set, stimulus, clip=clip,
                                   skip_unrepresentable=skip_unrepresentable, skip_outside=skip_outside)
    added = land_reading(model, reading, Path(path).name)
    if report is not None:
        report.merge(reading.report)
    return len(added)


def land_reading(model: AnnotationModel, reading: ImportReading, source: str) -> Sequence[Annotation]:
    """Add what `read_annotation_file` read (labels, then its controlled vocabularies) through `model`, all
    or nothing, and tally in the reading's report what was written and what the store already had."""
    with without_cycle_collection():
        added = import_prepared(model, reading.labels, source)
    keep_vocabularies(model, reading)
    count_imported(reading, added)
    return added


def count_imported(reading: ImportReading, added: Sequence[Annotation]) -> None:
    """Tally in the reading's report which rows were written and which were already in the store."""
    labels = reading.labels
    if len(added) == labels.height:  # a new file: every row was written, counted per file and tier at once
        where = [ORIGIN_COLUMNS["file"], ORIGIN_COLUMNS["tier"]]
        for file, tier, n in labels.group_by(where, maintain_order=True).len().iter_rows():
            reading.report.count_written(file, tier, n)
        return
    fresh = Counter(tuple(getattr(a, name) for name in NATURAL_KEY) for a in added)
    for row, origin in zip(labels.iter_rows(named=True), reading.origins()):
        key = tuple(row.get(name) for name in NATURAL_KEY)
        if fresh[key] > 0:
            fresh[key] -= 1
            reading.report.count_written(origin.file, origin.tier)
        else:
            reading.report.leave_out(origin, "already in the store or earlier in the file (the same stimulus,"
                                     " annotator, set, label, times, value and medium)", describe(row))


def keep_vocabularies(model: AnnotationModel, reading: ImportReading) -> None:
    """Add the entries of the files' controlled vocabularies to the label sets of their tiers (only the
    labels a set does not have yet), so an ELAN user's vocabulary comes along with the labels; each set's
    additions are one step of the label sets' undo history."""
    for name, entries in reading.vocabularies.items():
        added = model.add_labels(name, list(dict(entries).items()),
                                 source="controlled vocabulary of an imported ELAN file")
        if added:
            reading.report.note(f"label set '{name}': {added} controlled-vocabulary entries added as labels")
