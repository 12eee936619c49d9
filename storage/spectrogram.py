"""Spectrogram tiles computed on demand from decoded audio, at levels, cached in memory and on disk.

A spectrogram is drawn the way Praat draws one: a Gaussian window (its physical length twice the
effective window length, 5 ms for wide-band, 30 ms for narrow-band), power spectral density in bands of
`frequency_step_hz` up to `max_frequency_hz`, in dB re (2e-5 Pa)^2/Hz, with a pre-emphasis in dB per
octave above 1 kHz. Dynamic range is a display setting (a level window over the stored dB), so changing
it never recomputes anything.

Level 0 has a frame every `time_step_s`; level k every `time_step_s * 4**k`, each frame a full window at
its centre time (as Praat's time step: a coarse level samples the signal, it does not average it). A
level is cut into tiles of `TILE_FRAMES` frames that are computed only when a view needs them, so a
60-minute file's overview costs a few thousand windows, not the whole file. Tiles are stored as uint8
(half-dB steps), kept in a bounded in-memory LRU and written to a cache folder keyed by the file's
checksum (or path, size and mtime) and every parameter.
"""
from __future__ import annotations

import hashlib
import math
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from storage.media import DecodeCancelled, SampleSource, ShouldCancel, open_sample_source

TILE_FRAMES = 256
LEVEL_FACTOR = 4
# A view gets at least this many frames per pixel column before a coarser level is used.
MIN_FRAMES_PER_PIXEL = 1.0
# Stored values: dB = DB_FLOOR + value * DB_STEP, so uint8 covers -30 .. 97.5 dB.
DB_FLOOR = -30.0
DB_STEP = 0.5
# Praat's reference for dB of a power spectral density: (2e-5 Pa)^2 per Hz.
PSD_REFERENCE = 4e-10
MEMORY_BUDGET_BYTES = 256 * 1024 * 1024
CACHE_FORMAT = 1
WINDOW_LENGTHS_S = {"wide": 0.005, "narrow": 0.03}


@dataclass(frozen=True)
class SpectrogramParams:
    """What a spectrogram is computed with (Praat's names). `band` picks the window length."""

    band: str = "wide"
    max_frequency_hz: float = 5000.0
    time_step_s: float = 0.002
    frequency_step_hz: float = 20.0
    pre_emphasis_db_per_octave: float = 6.0

    @property
    def window_length_s(self) -> float:
        return WINDOW_LENGTHS_S[self.band]

    def key(self) -> str:
        return "|".join(f"{k}={v!r}" for k, v in sorted(asdict(self).items()))


@dataclass(frozen=True)
class SpectrogramSlice:
    """dB values for a view: `image[i, j]` is frame i (centre t0 + (i + 0.5) * time_step) and frequency
    band j (centre (j + 0.5) * frequency_step). `image` is uint8 (see `to_db`); frames not computed yet
    hold 0. `level` says which level it came from; `complete` is False when some tiles were missing."""

    t0: float
    time_step: float
    frequency_step: float
    image: np.ndarray
    level: int
    complete: bool

    @property
    def t1(self) -> float:
        return self.t0 + self.time_step * len(self.image)


def to_db(values: np.ndarray) -> np.ndarray:
    """Stored uint8 values as dB."""
    return DB_FLOOR + DB_STEP * np.asarray(values, dtype=np.float32)


def gaussian_window(n: int) -> np.ndarray:
    """Praat's Gaussian window over n samples (physical length; zero at both edges)."""
    phase = (np.arange(n, dtype=np.float64) + 0.5) / n
    edge = math.exp(-12.0)
    return (np.exp(-48.0 * (phase - 0.5) ** 2) - edge) / (1.0 - edge)


class SpectrogramTiles:
    """The levels of tiles of one audio window; thread-safe, computing a tile at most once at a time."""

    def __init__(self, source: SampleSource, params: SpectrogramParams, cache_key: str | None = None,
                 cache_dir: Path | None = None, memory_budget: int = MEMORY_BUDGET_BYTES) -> None:
        self.source = source
        self.params = params
        self.rate = int(source.sample_rate)
        self.n_samples = int(source.n_frames)
        self.hop0 = max(1, int(round(params.time_step_s * self.rate)))
        self.window_samples = max(8, int(round(2 * params.window_length_s * self.rate)))
        # Zero-padding to at least rate / frequency_step bins gives every band one or more FFT bins.
        self.nfft = 1 << int(math.ceil(math.log2(max(self.window_samples, self.rate / params.frequency_step_hz))))
        self.n_bands = max(1, int(math.ceil(min(params.max_frequency_hz, self.rate / 2) / params.frequency_step_hz)))
        self._window = gaussian_window(self.window_samples)
        self._band_starts, self._band_weights, self._psd_scale = self._band_plan()
        self.n_levels = 1
        while self.frames_at(self.n_levels - 1) > 2 * TILE_FRAMES and self.n_levels < 16:
            self.n_levels += 1
        self._tiles: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._budget = memory_budget
        self._lock = threading.Lock()
        self._cache_dir = (cache_dir or spectrogram_cache_dir()) / cache_key if cache_key else None

    # ----- geometry --------------------------------------------------------------------------------
    @property
    def duration_s(self) -> float:
        return self.n_samples / self.rate

    def hop_at(self, level: int) -> int:
        return self.hop0 * LEVEL_FACTOR**level

    def frames_at(self, level: int) -> int:
        return max(1, self.n_samples // self.hop_at(level))

    def tiles_at(self, level: int) -> int:
        return -(-self.frames_at(level) // TILE_FRAMES)

    def level_for(self, t0: float, t1: float, n_pixels: int) -> int:
        """The coarsest level that still has MIN_FRAMES_PER_PIXEL frames per pixel over [t0, t1)."""
        seconds_per_pixel = max(t1 - t0, 1e-9) / max(1, n_pixels)
        level = 0
        while (level + 1 < self.n_levels
               and self.hop_at(level + 1) / self.rate * MIN_FRAMES_PER_PIXEL <= seconds_per_pixel):
            level += 1
        return level

    @property
    def nbytes(self) -> int:
        """Bytes of tiles held in memory."""
        return self._bytes

    # ----- computing --------------------------------------------------------------------------------
    def _band_plan(self) -> tuple[np.ndarray, np.ndarray, float]:
        bin_hz = self.rate / self.nfft
        centres = np.arange(self.nfft // 2 + 1) * bin_hz
        band_of_bin = np.floor(centres / self.params.frequency_step_hz).astype(np.int64)
        used = np.flatnonzero(band_of_bin < self.n_bands)
        starts = np.searchsorted(band_of_bin[used], np.arange(self.n_bands))
        starts = np.minimum(starts, len(used) - 1)
        self._n_used_bins = len(used)
        band_centres = (np.arange(self.n_bands) + 0.5) * self.params.frequency_step_hz
        emphasis = self.params.pre_emphasis_db_per_octave * np.log2(np.maximum(band_centres, 1.0) / 1000.0)
        weights = 10.0 ** (np.maximum(emphasis, 0.0) / 10.0)
        # One-sided power spectral density (Pa^2/Hz) of a windowed frame: 2|X|^2 / (rate * sum(w^2)).
        psd_scale = 2.0 / (self.rate * float(np.sum(self._window**2)))
        return starts, weights, psd_scale

    def _frame_starts(self, level: int, first: int, count: int) -> np.ndarray:
        hop = self.hop_at(level)
        centres = (np.arange(first, first + count, dtype=np.int64) * hop) + hop // 2
        return centres - self.window_samples // 2

    def _read_frames(self, starts: np.ndarray, should_cancel: ShouldCancel) -> np.ndarray:
        n = self.window_samples
        span = int(starts[-1] - starts[0]) + n
        if span <= 4 * n * len(starts):
            block = self.source.read(int(starts[0]), span)
            index = (starts - starts[0])[:, None] + np.arange(n)[None, :]
            return block[index]
        frames = np.empty((len(starts), n), dtype=np.float32)
        for i, start in enumerate(starts):
            if i % 64 == 0 and should_cancel():
                raise DecodeCancelled()
            frames[i] = self.source.read(int(start), n)
        return frames

    def compute_tile(self, level: int, index: int, should_cancel: ShouldCancel | None = None) -> np.ndarray:
        """The uint8 values of tile `index` at `level` (frames x bands), computed (no cache)."""
        cancel = should_cancel or (lambda: False)
        first = index * TILE_FRAMES
        count = max(0, min(TILE_FRAMES, self.frames_at(level) - first))
        out = np.zeros((count, self.n_bands), dtype=np.uint8)
        if count == 0:
            return out
        if cancel():
            raise DecodeCancelled()
        frames = self._read_frames(self._frame_starts(level, first, count), cancel)
        frames = (frames - frames.mean(axis=1, keepdims=True)) * self._window
        power = np.abs(np.fft.rfft(frames, n=self.nfft, axis=1)) ** 2
        power = power[:, : self._n_used_bins]
        counts = np.diff(np.append(self._band_starts, self._n_used_bins))
        banded = np.add.reduceat(power, self._band_starts, axis=1) / np.maximum(counts, 1)
        psd = banded * self._psd_scale * self._band_weights
        db = 10.0 * np.log10(np.maximum(psd, 1e-30) / PSD_REFERENCE)
        out[:] = np.clip(np.round((db - DB_FLOOR) / DB_STEP), 0, 255).astype(np.uint8)
        return out

    def tile(self, level: int, index: int, should_cancel: ShouldCancel | None = None,
             compute: bool = True) -> np.ndarray | None:
        """A tile from memory, then the disk cache, then computed (None if missing and not `compute`)."""
        key = (level, index)
        with self._lock:
            found = self._tiles.get(key)
            if found is not None:
                self._tiles.move_to_end(key)
                return found
        found = self._load(level, index)
        if found is None:
            if not compute:
                return None
            found = self.compute_tile(level, index, should_cancel)
            self._save(level, index, found)
        self._remember(key, found)
        return found

    def _remember(self, key: tuple[int, int], values: np.ndarray) -> None:
        with self._lock:
            if key in self._tiles:
                return
            self._tiles[key] = values
            self._bytes += values.nbytes
            while self._bytes > self._budget and len(self._tiles) > 1:
                _, dropped = self._tiles.popitem(last=False)
                self._bytes -= dropped.nbytes

    def _tile_path(self, level: int, index: int) -> Path | None:
        return None if self._cache_dir is None else self._cache_dir / f"{level}_{index}.npy"

    def _load(self, level: int, index: int) -> np.ndarray | None:
        path = self._tile_path(level, index)
        if path is None or not path.exists():
            return None
        try:
            values = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None  # unreadable cache entry: compute again
        return values if values.dtype == np.uint8 and values.ndim == 2 and values.shape[1] == self.n_bands else None

    def _save(self, level: int, index: int, values: np.ndarray) -> None:
        path = self._tile_path(level, index)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # write then rename: a concurrent reader never sees half a tile
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                np.save(handle, values)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only or full cache folder only costs a recomputation

    # ----- views ------------------------------------------------------------------------------------
    def query(self, t0: float, t1: float, n_pixels: int, should_cancel: ShouldCancel | None = None,
              compute: bool = True) -> SpectrogramSlice:
        """The frames covering [t0, t1) at the level fit for `n_pixels` columns.

        With `compute=False` nothing slow happens: missing tiles are taken from the nearest coarser level
        whose tiles are all in memory or on disk, and left as zeros otherwise (`complete` is False)."""
        level = self.level_for(t0, t1, n_pixels)
        found = self._slice(level, t0, t1, should_cancel, compute)
        if found.complete or compute:
            return found
        for coarser in range(level + 1, self.n_levels):
            candidate = self._slice(coarser, t0, t1, None, False)
            if candidate.complete:
                return candidate
        return found

    def _slice(self, level: int, t0: float, t1: float, should_cancel: ShouldCancel | None,
               compute: bool) -> SpectrogramSlice:
        hop_s = self.hop_at(level) / self.rate
        n_frames = self.frames_at(level)
        first = int(np.clip(math.floor(max(t0, 0.0) / hop_s), 0, n_frames - 1))
        last = int(np.clip(math.ceil(min(t1, self.duration_s) / hop_s), first + 1, n_frames))
        image = np.zeros((last - first, self.n_bands), dtype=np.uint8)
        complete = True
        for index in range(first // TILE_FRAMES, (last - 1) // TILE_FRAMES + 1):
            values = self.tile(level, index, should_cancel, compute)
            if values is None:
                complete = False
                continue
            lo = max(first, index * TILE_FRAMES)
            hi = min(last, index * TILE_FRAMES + len(values))
            image[lo - first: hi - first] = values[lo - index * TILE_FRAMES: hi - index * TILE_FRAMES]
        return SpectrogramSlice(first * hop_s, hop_s, self.params.frequency_step_hz, image, level, complete)

    def overview_max_db(self, should_cancel: ShouldCancel | None = None) -> float:
        """The loudest band of the coarsest level, in dB: a steady top for Praat-style autoscaling."""
        top = self.n_levels - 1
        peaks = [int(self.tile(top, i, should_cancel).max(initial=0)) for i in range(self.tiles_at(top))]
        return float(to_db(np.array(max(peaks, default=0))))


# ----- opening and caching ---------------------------------------------------------------------------
def spectrogram_cache_dir() -> Path:
    """$THINSLICE_HOME/cache/spectrogram if THINSLICE_HOME is set, else the user's cache folder."""
    home = os.environ.get("THINSLICE_HOME")
    if home:
        return Path(home) / "cache" / "spectrogram"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "thinslice" / "spectrogram"


def spectrogram_cache_key(path: Path | str, offset_s: float, duration_s: float | None,
                          params: SpectrogramParams, checksum: str | None = None) -> str:
    """A folder name for the tiles of this file window and parameters: the file's checksum when the store
    knows it (a moved file keeps its tiles), else its resolved path, size and mtime."""
    if checksum:
        identity = f"sum:{checksum}"
    else:
        resolved = Path(path).resolve()
        stat = resolved.stat()
        identity = f"{resolved}|{stat.st_size}|{stat.st_mtime_ns}"
    key = f"{CACHE_FORMAT}|{identity}|{offset_s!r}|{duration_s!r}|{params.key()}"
    return hashlib.sha1(key.encode()).hexdigest()


_OPEN: OrderedDict[str, SpectrogramTiles] = OrderedDict()
_OPEN_LOCK = threading.Lock()
OPEN_KEEP = 8


def open_spectrogram(path: Path | str, offset_s: float = 0.0, duration_s: float | None = None,
                     params: SpectrogramParams | None = None, checksum: str | None = None,
                     should_cancel: ShouldCancel | None = None,
                     source_factory: Callable[[], SampleSource] | None = None) -> SpectrogramTiles:
    """The tiles of [offset_s, offset_s + duration_s) of `path`; the last few opened are kept, so switching
    back to a stimulus finds its tiles in memory. Raises MediaError or DecodeCancelled."""
    params = params or SpectrogramParams()
    key = spectrogram_cache_key(path, offset_s, duration_s, params, checksum)
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is not None:
            _OPEN.move_to_end(key)
            return found
    source = source_factory() if source_factory else open_sample_source(path, offset_s, duration_s, should_cancel)
    tiles = SpectrogramTiles(source, params, cache_key=key)
    with _OPEN_LOCK:
        _OPEN[key] = tiles
        while len(_OPEN) > OPEN_KEEP:
            _OPEN.popitem(last=False)
    return tiles
