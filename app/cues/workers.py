"""Praat's analyses in worker processes, so the window never waits for them.

praat-parselmouth holds the interpreter lock for as long as Praat computes, so a pitch analysis run on a
thread stops the window's thread for the length of each Praat call (a second or more on a long file).
Here it runs in a small pool of processes instead: started on the first analysis (a forkserver that has
imported the analysis stack, so each worker starts at once), at most `WORKERS` of them, kept for the
session and ended at exit. A caller's thread waits for its result (numpy arrays in dataclasses) without
holding the lock, and stops waiting as soon as its `should_cancel()` turns True; the work in the worker is
told through a shared flag and stops at its next step (`app.cues.tracks` checks between Praat calls), so a
worker is soon free for the next stimulus.
"""
from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

import numpy as np

from app.cues.acoustics import PraatSettings
from app.cues.boundaries import label_boundaries
from app.cues.track_kinds import PRAAT_LINES, LineKind
from app.cues.tracks import VoiceTracks, voice_tracks
from storage.media import DecodeCancelled
from storage.records import MediaRef

WORKERS = max(1, min(2, os.cpu_count() or 1))  # a new stimulus's analysis need not queue behind the old one's
WORKER_NICENESS = 10
SLOTS = 256  # analyses waiting or running at once, each with its own cancel flag
POLL_S = 0.02  # how soon a waiting thread notices its caller's cancel
T = TypeVar("T")

_flags: Any = None  # in a worker: the pool's shared cancel flags


def _start_worker(flags: Any) -> None:
    global _flags
    _flags = flags
    # Ctrl-C in a terminal reaches the whole process group: the window decides, not its workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # on a machine of two cores the window's thread must win the core it shares with an analysis
    os.nice(WORKER_NICENESS)


def _in_worker(slot: int, fn: Callable[..., T], args: tuple) -> T:
    return fn(*args, should_cancel=lambda: bool(_flags[slot]))


class AnalysisPool:
    """Runs `fn(*args, should_cancel=...)` in a worker process; see the module docstring."""

    def __init__(self, workers: int = WORKERS) -> None:
        self._workers = workers
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._context = multiprocessing.get_context("forkserver")
        self._flags = self._context.Array("b", SLOTS, lock=False)
        self._free = list(range(SLOTS))
        self._closed = False

    def _pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._closed:
                raise DecodeCancelled()  # the session is ending: nothing new starts
            if self._executor is None:
                self._context.set_forkserver_preload([__name__])
                self._executor = ProcessPoolExecutor(self._workers, mp_context=self._context,
                                                     initializer=_start_worker, initargs=(self._flags,))
            return self._executor

    def _take_slot(self) -> int:
        with self._lock:
            if not self._free:
                raise RuntimeError(f"more than {SLOTS} analyses at once")
            slot = self._free.pop()
        self._flags[slot] = 0
        return slot

    def _release(self, slot: int) -> None:
        with self._lock:
            self._free.append(slot)

    def run(self, fn: Callable[..., T], *args: Any, should_cancel: Callable[[], bool] = lambda: False) -> T:
        """`fn(*args, should_cancel=...)` computed in a worker (fn and args must pickle); raises
        DecodeCancelled once `should_cancel()` is True, without waiting for the worker to stop."""
        executor = self._pool()
        slot = self._take_slot()
        try:
            future: Future = executor.submit(_in_worker, slot, fn, args)
        except BrokenProcessPool:
            self._release(slot)
            self._discard(executor)
            raise
        # the slot is free again only when the worker is done with it, so its flag is never reset under it
        future.add_done_callback(lambda _f: self._release(slot))
        while True:
            done, _ = wait([future], timeout=POLL_S)
            if done:
                break
            if should_cancel():
                self._flags[slot] = 1
                future.cancel()
                raise DecodeCancelled()
        try:
            return future.result()
        except BrokenProcessPool:
            self._discard(executor)  # a worker died (Praat crashed on a file): the next analysis starts afresh
            raise

    def _discard(self, executor: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is executor:
                self._executor = None
        executor.shutdown(wait=False, cancel_futures=True)

    def shutdown(self) -> None:
        """Stop every analysis at its next step and end the workers; later runs are refused."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        for slot in range(SLOTS):
            self._flags[slot] = 1
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


_pool: AnalysisPool | None = None
_pool_lock = threading.Lock()


def analysis_pool() -> AnalysisPool:
    """The session's pool, made on first use and shut down at exit."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = AnalysisPool()
            atexit.register(_pool.shutdown)
        return _pool


def _voice_and_boundaries(media: MediaRef, settings: PraatSettings, formants: bool, kinds: Sequence[LineKind],
                          should_cancel: Callable[[], bool]) -> tuple[VoiceTracks, np.ndarray]:
    tracks = voice_tracks(media, settings, formants, should_cancel, kinds)
    return tracks, label_boundaries(tracks.pitch, tracks.intensity)


def voice_analysis(media: MediaRef, settings: PraatSettings = PraatSettings(), formants: bool = False,
                   should_cancel: Callable[[], bool] = lambda: False, kinds: Sequence[LineKind] = PRAAT_LINES
                   ) -> tuple[VoiceTracks, np.ndarray]:
    """A voice's tracks (`app.cues.tracks.voice_tracks`, with the line `kinds` asked) and the label
    boundaries found in them (`app.cues.boundaries`), computed in a worker process."""
    return analysis_pool().run(_voice_and_boundaries, media, settings, formants, tuple(kinds),
                               should_cancel=should_cancel)
