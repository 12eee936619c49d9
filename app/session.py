"""The one place that says what the user is looking at: dataset, stimulus, filter, compared models, annotator."""
from __future__ import annotations

from dataclasses import replace

from app.events import Event
from storage.records import StimulusFilter


class Session:
    """Qt-free state. Each setter emits its event only when the value actually changes."""

    def __init__(self, annotator: str = "") -> None:
        self.dataset_id: int | None = None
        self.stimulus_id: int | None = None
        self.filter = StimulusFilter()
        self.compared_models: tuple[str, ...] = ()
        self.annotator = annotator
        self.dataset_changed = Event()
        self.stimulus_changed = Event()
        self.filter_changed = Event()
        self.compared_models_changed = Event()
        self.annotator_changed = Event()

    def set_dataset(self, dataset_id: int | None) -> None:
        if dataset_id == self.dataset_id:
            return
        self.dataset_id = dataset_id
        self.stimulus_id = None
        self.filter = StimulusFilter(dataset_id=dataset_id)
        self.dataset_changed.emit(dataset_id)
        self.filter_changed.emit(self.filter)
        self.stimulus_changed.emit(None)

    def select_stimulus(self, stimulus_id: int | None) -> None:
        if stimulus_id == self.stimulus_id:
            return
        self.stimulus_id = stimulus_id
        self.stimulus_changed.emit(stimulus_id)

    def set_filter(self, new: StimulusFilter) -> None:
        new = replace(new, dataset_id=self.dataset_id, compared_models=self.compared_models)
        if new == self.filter:
            return
        self.filter = new
        self.filter_changed.emit(new)

    def set_compared_models(self, models: tuple[str, ...]) -> None:
        if models == self.compared_models:
            return
        self.compared_models = models
        self.compared_models_changed.emit(models)
        self.set_filter(self.filter)

    def set_annotator(self, name: str) -> None:
        if name == self.annotator:
            return
        self.annotator = name
        self.annotator_changed.emit(name)
