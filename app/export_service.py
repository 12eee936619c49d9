"""Export annotations from the store to a file format, and import them back. Qt-free; used by the CLI and GUI.

Exports never overwrite a file of the dataset itself: every file under the dataset root (except the
`annotations/` folder, where Thinslice's own sidecar lives) and every media path counts as a source file.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from storage.annotations import AnnotationError, AnnotationStore, DatasetRef
from storage.errors import ImportFailed, RowProblem
from storage.exporters.common import ROW_FIELDS, ExportContext, Row
from storage.exporters.registry import get_exporter
from storage.store import Store

# --filter keys: annotation fields and stimulus fields
ANNOTATION_FILTERS = ("label_set", "label", "media_role")
STIMULUS_FILTERS = ("stimulus", "split", "kind")
FILTER_KEYS = ANNOTATION_FILTERS + STIMULUS_FILTERS
DEFAULT_IMPORT_LABEL_SET = "imported"


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
                       annotator: str | None = None, filters: Mapping[str, str] | None = None) -> Path:
    """Write the dataset's live annotations (optionally one annotator's, filtered) in `format` to `out`.

    Returns the file or folder written. Raises a `ThinsliceError` with a clear message on refusal.
    """
    exporter = get_exporter(format)
    annotations = AnnotationStore(store)
    ref = annotations.dataset(dataset)
    rows, stimuli = export_rows(annotations, ref, annotator, filters or {})
    durations = annotations.stimulus_durations(stimuli)
    context = ExportContext(dataset_name=ref.name, benchmark=ref.benchmark, root=Path(ref.root),
                            stimulus_ids=tuple(stimuli.values()),
                            durations={stimuli[i]: d for i, d in durations.items()},
                            source_files=source_files(annotations, ref))
    return exporter.export(rows, Path(out), context)


def import_annotations(store: Store, format: str, path: Path | str, dataset: str | None,
                       annotator: str | None = None, label_set: str | None = None,
                       stimulus: str | None = None) -> int:
    """Read a file (or folder) in `format` and add its labels to the dataset's stimuli in one transaction.

    A row without an annotator gets `annotator`; without a label set, `label_set` (default "imported").
    Every label must name a stimulus of the dataset; otherwise nothing is written. A per-recording file
    (ELAN, Praat, Audacity) whose name is not a stimulus id is given one with `stimulus`. Returns the count added.
    """
    exporter = get_exporter(format)
    annotations = AnnotationStore(store)
    ref = annotations.dataset(dataset)
    by_external = {ext: sid for sid, ext in annotations.stimulus_ids(ref.id).items()}
    rows = exporter.read(Path(path))
    problems: list[RowProblem] = []
    prepared = []
    for number, row in enumerate(rows, start=1):
        stimulus_id = by_external.get(str(row.get("stimulus")))
        if stimulus_id is None and stimulus is not None:
            stimulus_id = by_external.get(stimulus)
        who = row.get("annotator") or annotator
        if stimulus_id is None:
            problems.append(RowProblem(Path(path).name, None, "stimulus", repr(row.get("stimulus")),
                                       f"an id of a stimulus in the dataset {ref.name!r}"))
        elif not who:
            problems.append(RowProblem(Path(path).name, None, "annotator", "<missing>",
                                       "an annotator in the file or given with --annotator"))
        else:
            prepared.append({**{k: row.get(k) for k in ROW_FIELDS if k != "stimulus"}, "stimulus_id": stimulus_id,
                             "annotator": who,
                             "label_set": row.get("label_set") or label_set or DEFAULT_IMPORT_LABEL_SET})
        if len(problems) >= 20:
            break
    if problems:
        raise ImportFailed(problems)
    try:
        return len(annotations.create_many(None, annotator or "", prepared))
    except AnnotationError as exc:
        raise ImportFailed(str(exc)) from None
