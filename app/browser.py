"""What the window reads from the store to browse it: datasets, the filter bar's facets, the table's count,
pages and the row of a stimulus, one stimulus in full, a task's traces beside the models' attempts, a
dataset's stimulus names.

The window composes views and never runs SQL: it asks this service, on its worker for anything that scans a
dataset, and takes the records it returns. Qt-free; each call reads through the calling thread's own cursor,
so calls on the worker and on the GUI thread do not share one.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from storage import lookups, queries

from storage.records import Dataset, StimulusDetail, StimulusFilter, StimulusRow
from storage.store import Store


@dataclass(frozen=True)
class StimulusInFull:
    """One stimulus as the detail area shows it, with the model response audio found on disk."""

    detail: StimulusDetail
    response_audio: dict[int, Path]


class Browser:
    """Read queries for the window over one store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def datasets(self, name: str | None = None) -> list[Dataset]:
        """Every dataset (or the one named: `DatasetNotFound`, naming the others, when there is none)."""
        return lookups.datasets(self.store.cursor(), name)

    def facets(self, dataset_id: int) -> dict[str, list[str]]:
        """The values the filter bar offers for a dataset (scans it: call on the worker)."""
        return queries.dataset_facets(self.store.cursor(), dataset_id)

    def stimulus_ids(self, wanted: StimulusFilter, sort: str = "id", descending: bool = False) -> np.ndarray:
        """The ordered ids a filter admits (the whole-table query: call on the worker, and only for work over
        every one of them, such as a batch of live questions)."""
        return queries.stimulus_ids(self.store.cursor(), wanted, sort, descending)

    def stimulus_table_start(self, wanted: StimulusFilter, sort: str, descending: bool, limit: int,
                             models: list[str], keep: int | None) -> tuple[int, list[StimulusRow], int | None]:
        """What the table shows first for a filter and order: the count, the first `limit` rows, and the row of
        the stimulus `keep` (None when the filter leaves it out or none is asked; call on the worker)."""
        cur = self.store.cursor()
        count, ids, row = queries.stimulus_table_start(cur, wanted, sort, descending, limit, keep)
        return count, queries.stimulus_rows(cur, ids, models, wanted.modality), row

    def stimulus_page(self, wanted: StimulusFilter, sort: str, descending: bool, offset: int, limit: int,
                      models: list[str], total: int | None = None) -> list[StimulusRow]:
        """One page of the table in its order, with the compared models' outcomes (call on the worker); `total`,
        the filter's count, lets a page near the end be read from the end."""
        return queries.stimulus_page(self.store.cursor(), wanted, sort, descending, offset, limit, models,
                                     wanted.modality, total)

    def stimulus_page_beside(self, wanted: StimulusFilter, sort: str, descending: bool, anchor: int, after: bool,
                             limit: int, models: list[str]) -> list[StimulusRow]:
        """The rows right after (or before) the stimulus `anchor` in the table's order (call on the worker)."""
        return queries.stimulus_page_beside(self.store.cursor(), wanted, sort, descending, anchor, after, limit,
                                            models, wanted.modality)

    def stimulus_position(self, wanted: StimulusFilter, sort: str, descending: bool, stimulus_id: int) -> int | None:
        """The table row of a stimulus (None when the filter leaves it out; ranks the whole table: call on
        the worker)."""
        return queries.stimulus_position(self.store.cursor(), wanted, sort, descending, stimulus_id)

    def stimulus_in_full(self, stimulus_id: int, annotation_count: int) -> StimulusInFull | None:
        """Everything the detail area shows for one stimulus (None once it is gone)."""
        from storage.analysis import response_audio_paths
        cur = self.store.cursor()
        detail = queries.stimulus_detail(cur, stimulus_id)
        if detail is None:
            return None
        return StimulusInFull(replace(detail, annotation_count=annotation_count), response_audio_paths(cur, stimulus_id))

    def traces(self, stimulus_id: int, models: list[str]) -> list[tuple[str, list[Any], dict[str, Any] | None]]:
        """A task's reference trace and each model's attempt, as the compare view lays them side by side."""
        from app.ncp import compare_traces
        return compare_traces(self.store.cursor(), stimulus_id, models)

    def dataset_stimuli(self, dataset_id: int) -> tuple[list[int], dict[int, str]]:
        """A dataset's stimulus ids in the table's order and each one's own id in the release."""
        ids = [int(i) for i in queries.stimulus_ids(self.store.cursor(), StimulusFilter(dataset_id=dataset_id))]
        return ids, lookups.external_ids(self.store.cursor(), ids)

    def dataset_of(self, stimulus_id: int) -> str | None:
        """The name of the dataset holding a stimulus, or None when the store has no such stimulus."""
        return lookups.dataset_of_stimulus(self.store.cursor(), stimulus_id)

    def find_stimulus(self, ref: str, dataset: str | None = None) -> tuple[int, str | None] | None:
        """(store id, dataset name) of a stimulus named by its own id (within `dataset` if given) or store id."""
        found = lookups.find_stimulus(self.store.cursor(), ref, dataset)
        if found is None:
            return None
        return found[0], lookups.dataset_name(self.store.cursor(), found[1])
