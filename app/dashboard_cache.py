"""Each dataset's analysis frames, read once per change: the change channel says when a dataset's data changed.

The metrics dashboard asks for a dataset's frames whenever it is shown (a dataset picked again, a new dataset
list, a correction switched back), and a dataset's dashboards are computed once per frames
(`app.dashboard.dashboard`); so a dashboard is computed again only after a service said on the channel that the
dataset's figures (`Topic.METRICS`) or the datasets (`Topic.DATASETS`) changed. Frames read while such a change
arrives are handed out but not kept, so they are never shown again after the change.

Only an import writes a dataset's record, its human ratings and its published figures, and an import says
`Topic.DATASETS`; a change of the figures alone (a live run's answers, cue measures) keeps those
(`app.analysis_frames.ImportedFrames`), so the frames read after it read only what answers make.

Qt-free, and polars-free until the first frames are read: the window makes one before its first paint.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from app.changes import Change, ChangeChannel, Topic

if TYPE_CHECKING:
    from app.analysis_frames import AnalysisFrames, ImportedFrames
    from storage.store import Store

# The dataset shown and the one before, for going back and forth: a million predictions read for the failure
# filters stay with their frames, so no more are kept.
KEPT_DATASETS = 2


class DashboardFrames:
    """`load(dataset_id)`: the dataset's `AnalysisFrames`, read from `store` on the first call after a change.

    It listens to every topic of `changes`, so that, made before any view subscribes, it hears a change before a
    view that refreshes on it asks for frames again (the channel tells its listeners in the order they
    subscribed); only metrics and dataset changes make it forget."""

    def __init__(self, store: Store, changes: ChangeChannel, kept: int = KEPT_DATASETS) -> None:
        self._store = store
        self._changes = changes
        self._kept = kept
        self._lock = threading.Lock()
        self._frames: OrderedDict[int, AnalysisFrames] = OrderedDict()
        # the imported part of frames forgotten after a change of their figures alone, until read again
        self._imported: OrderedDict[int, ImportedFrames] = OrderedDict()
        self._changes_heard = 0
        changes.subscribe(tuple(Topic), self._changed)

    def load(self, dataset_id: int) -> AnalysisFrames:
        """The dataset's frames as of the last change (read now if not kept; safe on any thread)."""
        with self._lock:
            kept = self._frames.get(dataset_id)
            if kept is not None:
                self._frames.move_to_end(dataset_id)
                return kept
            heard = self._changes_heard
            imported = self._imported.get(dataset_id)
        from app.dashboard import load_frames   # polars and every benchmark's rules: not before the first paint

        frames = load_frames(self._store, dataset_id, imported)
        with self._lock:
            if self._changes_heard == heard:   # else the store changed while it was read: never shown again
                self._imported.pop(dataset_id, None)
                self._frames[dataset_id] = frames
                while len(self._frames) > self._kept:
                    self._frames.popitem(last=False)
        return frames

    def close(self) -> None:
        """Stop listening and forget every dataset's frames."""
        self._changes.unsubscribe(self._changed)
        with self._lock:
            self._frames.clear()
            self._imported.clear()

    def _changed(self, change: Change) -> None:
        if not (change.concerns(Topic.METRICS) or change.concerns(Topic.DATASETS)):
            return
        with self._lock:
            self._changes_heard += 1
            if change.dataset_id is None or change.concerns(Topic.DATASETS):
                self._frames.clear()   # a new dataset list: names, counts and rows may all differ
                self._imported.clear()
                return
            forgotten = self._frames.pop(change.dataset_id, None)
            if forgotten is not None:
                self._imported[change.dataset_id] = forgotten.imported()
                while len(self._imported) > self._kept:
                    self._imported.popitem(last=False)
