"""Read a Parquet results release in place as a new dataset, for the import dialog and `thinslice attach`.

The rows are checked and the dataset written by `storage.attach_parquet`; this says so on the change channel,
as an import does, so every view showing datasets reads them again."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.changes import ChangeChannel, Topic
from storage.attach_parquet import AttachSummary, Progress, attach_parquet
from storage.attached import attachment_problems
from storage.store import Store


def attach_dataset(store: Store, path: Path, dataset_name: str | None = None, mapping: dict[str, str] | None = None,
                   progress: Progress | None = None, changes: ChangeChannel | None = None,
                   should_cancel: Callable[[], bool] | None = None) -> AttachSummary:
    """Attach the Parquet file or folder `path` as a new dataset read in place (see
    `storage.attach_parquet.attach_parquet`); raises `ImportFailed`, `FileRefused` or `ImportCancelled` with the
    store unchanged."""
    summary = attach_parquet(store, Path(path), dataset_name, mapping, progress, should_cancel)
    if changes is not None:
        changes.publish([Topic.DATASETS], dataset_id=summary.dataset_id, source="import")
    return summary


def attached_problems(store: Store, dataset_id: int) -> list[str]:
    """One line when the dataset's attached files moved or changed since attached; empty otherwise."""
    return attachment_problems(store.cursor(), dataset_id)
