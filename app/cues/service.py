"""Computing a dataset's cue measures once and keeping them, for the CLI and the app's worker alike.

A run is keyed by its settings (every threshold, the backchannel word list too) and the versions of what
makes the values (Thinslice itself, its cue definitions, Praat through praat-parselmouth, openSMILE):
computing again with the same ones measures only the stimuli not yet measured; changing any starts a new
run, and the dataset's older runs are dropped once it is done.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from importlib import metadata
from dataclasses import dataclass

from app.changes import ChangeChannel, Topic
from app.cues.acoustics import PARSELMOUTH_VERSION, PRAAT_VERSION
from app.cues.compare import DatasetComparison, compare_dataset
from app.cues.conversation import Conversation
from app.cues.measures import (CueRow, CueSettings, LabelCount, Voice, WHOLE, audio_roles, egemaps_version,
                               stimulus_measures, subject_of_role, timed_words)
from storage import cues as cue_store
from storage.errors import ThinsliceError
from storage.lookups import datasets as list_datasets
from storage.media import DecodeCancelled, MediaError, decode_channels
from storage.queries import stimulus_detail
from storage.records import StimulusDetail
from storage.store import Store

Progress = Callable[[float, str], None]
# Raised whenever a cue's definition changes, so stored values made by the old one are measured again.
# 2: turns timed from their first word, simultaneous starts, pauses as joint silences, millisecond grid,
# Heldner and Edlund's vocal-activity classification (va_ measures), pitch range by Praat's quantiles,
# intensity_sd_praat_db, the conversation's overlap share over the time anyone speaks.
# 3: a stereo recording's channels analysed as Praat analyses them (they were averaged first).
CUE_DEFINITIONS = "3"


class CuesCancelled(ThinsliceError):
    """The user stopped the computation; what was measured so far is kept."""


class CueDatasetNotFound(ThinsliceError):
    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"no dataset named {name!r} (the store has: {', '.join(known) or 'none'})")


@dataclass(frozen=True)
class ComputeSummary:
    dataset: str
    run_id: int
    measured: int
    skipped: int
    failed: tuple[str, ...]
    seconds: float


def library_versions(settings: CueSettings) -> dict[str, str | None]:
    versions = {"thinslice": metadata.version("thinslice"), "cue definitions": CUE_DEFINITIONS,
                "praat-parselmouth": PARSELMOUTH_VERSION, "praat": PRAAT_VERSION}
    if settings.egemaps:
        versions["opensmile"] = egemaps_version()
    return versions


def voices_of(detail: StimulusDetail, should_cancel: Callable[[], bool] = lambda: False) -> list[Voice]:
    """The stimulus's audio tracks decoded (its window of each file, channels kept), with each
    participant's words."""
    words = timed_words(detail.segments)
    roles = set(audio_roles(detail))
    voices = []
    for media in detail.media:
        if media.role not in roles or not media.present:
            continue
        end = None if media.duration_s is None else media.offset_s + media.duration_s
        audio = decode_channels(media.path, media.offset_s, end, should_cancel)
        subject = subject_of_role(media.role)
        own = tuple(w for w in words if w.speaker == subject)
        voices.append(Voice(subject, audio.samples, audio.sample_rate, own))
    return voices


def measure_stimulus(detail: StimulusDetail, labels: list[tuple[str | None, str, str, str, int]],
                     settings: CueSettings, should_cancel: Callable[[], bool] = lambda: False
                     ) -> tuple[list[CueRow], Conversation | None]:
    """Every cue of one stimulus from its media, transcript and labels."""
    counts = [LabelCount(subject_of_role(role) if role else WHOLE, label_set, label, annotator, n)
              for role, label_set, label, annotator, n in labels]
    return stimulus_measures(voices_of(detail, should_cancel), counts, settings, should_cancel)


def _dataset(store: Store, name: str | None) -> list:
    datasets = list_datasets(store.cursor())
    if name is None:
        return datasets
    chosen = [d for d in datasets if d.name == name]
    if not chosen:
        raise CueDatasetNotFound(name, [d.name for d in datasets])
    return chosen


def compute_cues(store: Store, dataset: str | None = None, settings: CueSettings = CueSettings(),
                 progress: Progress | None = None, should_cancel: Callable[[], bool] = lambda: False,
                 force: bool = False, channel: ChangeChannel | None = None) -> list[ComputeSummary]:
    """Measure every stimulus with audio of the dataset (all datasets when None) and store the values.

    Progress goes to `progress(fraction, message)`; when `should_cancel()` turns True the stimulus being
    measured is dropped, what was stored stays, and CuesCancelled is raised. A stimulus whose media cannot
    be decoded is named in the summary and skipped."""
    report = progress or (lambda _f, _m: None)
    params, versions = settings.as_dict(), library_versions(settings)
    summaries = []
    cur = store.cursor()
    targets = [(d, cue_store.audio_stimuli(cur, d.id)) for d in _dataset(store, dataset)]
    total = sum(len(ids) for _, ids in targets) or 1
    done = 0
    for ds, ids in targets:
        if not ids:
            continue
        started = time.perf_counter()
        with store.transaction() as tx:
            run = cue_store.find_run(tx, ds.id, params, versions) if not force else None
            run = run or cue_store.create_run(tx, ds.id, params, versions)
        already = cue_store.measured_stimuli(cur, run.id)
        measured, failed = 0, []
        for stimulus_id in ids:
            if should_cancel():
                raise CuesCancelled(f"cue computation stopped in {ds.name}: {measured} stimuli measured")
            done += 1
            if stimulus_id in already:
                continue
            detail = stimulus_detail(cur, stimulus_id)
            if detail is None:
                continue
            report(done / total, f"{ds.name}: {detail.external_id}")
            try:
                rows, _ = measure_stimulus(detail, cue_store.label_counts(cur, stimulus_id), settings, should_cancel)
            except DecodeCancelled:
                raise CuesCancelled(f"cue computation stopped in {ds.name}: {measured} stimuli measured") from None
            except MediaError as exc:
                failed.append(f"{detail.external_id}: {exc}")
                continue
            if should_cancel():
                raise CuesCancelled(f"cue computation stopped in {ds.name}: {measured} stimuli measured")
            with store.transaction() as tx:
                cue_store.write_measures(tx, run.id, stimulus_id, rows)
            measured += 1
        with store.transaction() as tx:
            cue_store.drop_older_runs(tx, ds.id, run.id)
        if channel is not None:
            channel.publish({Topic.METRICS}, dataset_id=ds.id, source="cues")
        summaries.append(ComputeSummary(ds.name, run.id, measured, len(already), tuple(failed),
                                        time.perf_counter() - started))
    report(1.0, "cue measures stored")
    return summaries


class CueService:
    """What the cues view asks for, bound to one store (each call on the caller's thread: run it on a worker)."""

    def __init__(self, store: Store, channel: ChangeChannel | None = None) -> None:
        self.store = store
        self.channel = channel

    def datasets(self) -> list[tuple[int, str, str]]:
        """(id, name, benchmark) of every dataset with audio to measure."""
        cur = self.store.cursor()
        return [(d.id, d.name, d.benchmark) for d in list_datasets(cur) if cue_store.audio_stimuli(cur, d.id)]

    def compare(self, dataset_id: int, correction: str = "holm", include_egemaps: bool = False) -> DatasetComparison:
        return compare_dataset(self.store, dataset_id, correction, include_egemaps)

    def compute(self, dataset: str, progress: Progress | None = None,
                should_cancel: Callable[[], bool] = lambda: False,
                settings: CueSettings = CueSettings()) -> list[ComputeSummary]:
        return compute_cues(self.store, dataset, settings, progress, should_cancel, channel=self.channel)
