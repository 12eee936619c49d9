"""The one change channel: a service that writes says what it changed, and views refresh exactly that.

A topic names a kind of data a view shows. A service publishes a `Change` after a write has reached the
store (never before, so a view that re-reads sees the new data); views subscribe to the topics they show.
Listeners run on the thread that publishes; the Qt side relays a change to the GUI thread before touching a
widget. The channel is Qt-free so the CLI and the tests use the same one.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum


class Topic(str, Enum):
    ROWS = "rows"                # the stimulus table's rows and columns (answers, ✓/✗, human %)
    FACETS = "facets"            # the filter bar's choices (models, modalities, counts)
    DETAIL = "detail"            # one stimulus's detail (predictions, judgments, traces)
    ANNOTATIONS = "annotations"  # labels on stimuli, and their history
    LABEL_SETS = "label_sets"    # label sets and their labels
    METRICS = "metrics"          # the dashboard's figures
    DATASETS = "datasets"        # the list of datasets


@dataclass(frozen=True)
class Change:
    """What changed: the topics, and where known the dataset and stimuli they concern (empty: all)."""

    topics: frozenset[Topic]
    dataset_id: int | None = None
    stimulus_ids: frozenset[int] = field(default_factory=frozenset)
    source: str = ""

    def concerns(self, topic: Topic) -> bool:
        return topic in self.topics


Listener = Callable[[Change], None]


class ChangeChannel:
    """Publish-subscribe for `Change`s; subscribing twice with the same listener has no extra effect."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[Topic, list[Listener]] = {t: [] for t in Topic}

    def subscribe(self, topics: Iterable[Topic], listener: Listener) -> None:
        with self._lock:
            for topic in topics:
                if listener not in self._listeners[topic]:
                    self._listeners[topic].append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        with self._lock:
            for listeners in self._listeners.values():
                if listener in listeners:
                    listeners.remove(listener)

    def publish(self, topics: Iterable[Topic], *, dataset_id: int | None = None,
                stimulus_ids: Iterable[int] = (), source: str = "") -> Change:
        """Tell every listener of any of `topics`, once each, what changed."""
        change = Change(frozenset(topics), dataset_id, frozenset(stimulus_ids), source)
        with self._lock:
            targets: list[Listener] = []
            for topic in change.topics:
                for listener in self._listeners[topic]:
                    if listener not in targets:
                        targets.append(listener)
        for listener in targets:
            listener(change)
        return change
