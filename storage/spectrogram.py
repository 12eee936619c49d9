"""Spectrograms as Praat computes and paints them, in tiles computed on demand, at levels, cached.

Values. A tile holds, per frame and frequency band, Praat's `Sound: To Spectrogram...` value (Gaussian
window) in dB: 10·log10((P + 1e-30) / 4e-10), where P is what Praat stores, the windowed frame's FFT power
summed over the band's bins and divided by the sum of the squared window and by the number of bins in
the band (Praat calls it power spectral density, Pa²/Hz). The sampling is Praat's too (Sound_and_Spectrogram.cpp):
the physical window is twice the effective length (5 ms wide-band, 30 ms narrow-band) and holds
2·(floor(2·length·rate)/2 − 1) samples; the time step is at least length/(8·√π) and the frequency step at
least √π/(8·length), the latter rounded down to whole FFT bins; frames are centred in the sound
(1 + floor((duration − 2·length)/step) of them, none in a sound shorter than two window lengths). Nothing
else is done to the samples: no mean is removed. Level 0 equals parselmouth's
`Sound.to_spectrogram(length, max_frequency, time_step, frequency_step)` frame for frame; level k is the
same analysis with a time step 4**k times longer (a coarse level samples the signal, it does not average
it), so a 60-minute file's overview costs a few thousand windows, not the whole file.

Paint. `paint` turns a view's values into the dB image Praat's `Spectrogram: Paint...` draws
(Spectrogram_paintInside): pre-emphasis of (dB/octave)·log2(i·Δf / 1000 Hz) added to band i (counted from
1; so bands under 1 kHz are attenuated, 19 dB at 110 Hz for 6 dB/octave), the maximum either given or, with
autoscaling, the loudest frame of the view after pre-emphasis (never below 0 dB), each frame raised by
dynamic compression × (maximum − its own loudest value, never below 0 dB), and white at maximum − dynamic range.
Painting never recomputes a tile.

A level is cut into tiles of `TILE_FRAMES` frames that are computed only when a view needs them; tiles
are float32, kept in a bounded in-memory LRU and written to a cache folder keyed by the file's checksum
(or path, size and mtime) and every analysis parameter. A file with several channels is analysed as Praat
analyses it: each channel's frame is transformed and the channels' power spectra are averaged
(`storage.media.open_analysis_source` keeps the channels).
"""
from __future__ import annotations

import hashlib
import math
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from storage.media import DecodeCancelled, SampleSource, ShouldCancel, open_analysis_source

TILE_FRAMES = 256
LEVEL_FACTOR = 4
# A view gets at least this many frames per pixel column before a coarser level is used.
MIN_FRAMES_PER_PIXEL = 1.0
# Praat's reference for dB of a power spectral density, (2e-5 Pa)^2 per Hz, and the power it adds before
# taking the logarithm (so silence is a finite -306 dB).
PSD_REFERENCE = 4e-10
PSD_FLOOR = 1e-30
# Praat's bounds on oversampling: the time step is at least the effective window over 8, the frequency
# step at least the effective bandwidth over 8.
MAX_OVERSAMPLING = 8.0
MEMORY_BUDGET_BYTES = 256 * 1024 * 1024
CACHE_FORMAT = 3
WINDOW_LENGTHS_S = {"wide": 0.005, "narrow": 0.03}


@dataclass(frozen=True)
class SpectrogramParams:
    """What a spectrogram is computed with: Praat's `Sound: To Spectrogram...` arguments (Gaussian window);
    `band` picks the window length. Praat may widen the steps (see the module docstring)."""

    band: str = "wide"
    max_frequency_hz: float = 5000.0
    time_step_s: float = 0.002
    frequency_step_hz: float = 20.0

    @property
    def window_length_s(self) -> float:
        return WINDOW_LENGTHS_S[self.band]

    def key(self) -> str:
        return "|".join(f"{k}={v!r}" for k, v in sorted(asdict(self).items()))


@dataclass(frozen=True)
class PaintSettings:
    """Praat's `Spectrogram: Paint...` arguments. `maximum_db` None is Praat's autoscaling."""

    dynamic_range_db: float = 50.0
    pre_emphasis_db_per_octave: float = 6.0
    dynamic_compression: float = 0.0
    maximum_db: float | None = None


@dataclass(frozen=True)
class SpectrogramSlice:
    """dB values for a view: `image[i, j]` is frame i (centre t0 + (i + 0.5) * time_step) and band j
    (centre f1 + j * frequency_step; `f1` is Praat's first band centre, half a band step less half an FFT
    bin). Values are 10·log10((P + 1e-30) / 4e-10), float32; frames not computed yet are NaN. `level`
    says which level it came from; `complete` is False when some tiles were missing."""

    t0: float
    time_step: float
    f1: float
    frequency_step: float
    image: np.ndarray
    level: int
    complete: bool

    @property
    def t1(self) -> float:
        return self.t0 + self.time_step * len(self.image)

    @property
    def frequency_low(self) -> float:
        """The lower edge of the first band, where Praat's paint starts the image."""
        return self.f1 - 0.5 * self.frequency_step


@dataclass(frozen=True)
class PaintedSpectrogram:
    """What `paint` gives: the dB image with pre-emphasis and dynamic compression applied, and the levels
    Praat maps to white (`low_db`) and black (`high_db`)."""

    image: np.ndarray
    low_db: float
    high_db: float


def psd_to_db(power: np.ndarray) -> np.ndarray:
    """Praat's dB of a spectrogram value (Pa²/Hz): 10·log10((P + 1e-30) / 4e-10)."""
    return 10.0 * np.log10((np.asarray(power, dtype=np.float64) + PSD_FLOOR) / PSD_REFERENCE)


def pre_emphasis_db(n_bands: int, frequency_step: float, db_per_octave: float) -> np.ndarray:
    """Praat's paint pre-emphasis per band: (dB/octave)·log2(i·Δf / 1000 Hz) for band i = 1 .. n (the
    band's index times the step, as Spectrogram_paintInside writes it, not the band's centre)."""
    return db_per_octave * np.log2(np.arange(1, n_bands + 1) * frequency_step / 1000.0)


def paint(found: SpectrogramSlice, settings: PaintSettings, t_min: float | None = None,
          t_max: float | None = None) -> PaintedSpectrogram:
    """Praat's `Spectrogram: Paint...` over the frames of `found` whose centres lie in [t_min, t_max]
    (by default all; other frames are painted the same way but do not set the autoscaled maximum).
    Frames not computed yet (NaN) stay NaN and count for nothing."""
    db = found.image.astype(np.float64) + pre_emphasis_db(found.image.shape[1], found.frequency_step,
                                                          settings.pre_emphasis_db_per_octave)[None, :]
    missing = np.isnan(db)
    # Praat's local maximum of a frame starts at 0 dB, so a frame quieter than that counts as 0 dB
    frame_max = np.where(missing, -np.inf, db).max(axis=1, initial=0.0)
    if settings.maximum_db is None:
        centres = found.t0 + (np.arange(len(db)) + 0.5) * found.time_step
        half = 0.49999 * found.time_step  # Praat's margin for a frame at the window's edge
        counted = ~missing.all(axis=1)
        if t_min is not None:
            counted &= centres >= t_min - half
        if t_max is not None:
            counted &= centres <= t_max + half
        maximum = float(frame_max[counted].max(initial=0.0))
    else:
        maximum = float(settings.maximum_db)
    image = db + (settings.dynamic_compression * (maximum - frame_max))[:, None]
    return PaintedSpectrogram(image.astype(np.float32), maximum - settings.dynamic_range_db, maximum)


def gaussian_window(n: int, physical_samples: float) -> np.ndarray:
    """Praat's Gaussian window over n samples for a physical window of `physical_samples` samples (the
    sound's sample rate times twice the effective length): exp(-48·phase²) with the edge value removed."""
    phase = (np.arange(1, n + 1, dtype=np.float64) - 0.5 * (n + 1)) / physical_samples
    edge = math.exp(-12.0)
    return (np.exp(-48.0 * phase * phase) - edge) / (1.0 - edge)


class SpectrogramTiles:
    """The levels of tiles of one audio window; thread-safe, computing a tile at most once at a time."""

    def __init__(self, source: SampleSource, params: SpectrogramParams, cache_key: str | None = None,
                 cache_dir: Path | None = None, memory_budget: int = MEMORY_BUDGET_BYTES) -> None:
        self.source = source
        self.params = params
        self.rate = int(source.sample_rate)
        self.n_samples = int(source.n_frames)
        self._plan()
        self.n_levels = 1
        while self.frames_at(self.n_levels - 1) > 2 * TILE_FRAMES and self.n_levels < 16:
            self.n_levels += 1
        self._tiles: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._budget = memory_budget
        self._lock = threading.Lock()
        self._cache_dir = (cache_dir or spectrogram_cache_dir()) / cache_key if cache_key else None

    def describe(self, painted: PaintedSpectrogram | None = None, settings: PaintSettings | None = None) -> str:
        """What is drawn, in Praat's terms and with the values Praat settles on (a figure's method)."""
        text = (f"Praat's To Spectrogram: Gaussian window {self.params.window_length_s * 1000:g} ms "
                f"(physical {self.physical_window_s * 1000:g} ms, {self.window_samples} samples at {self.rate} Hz), "
                f"time step {self.time_step * 1000:.4g} ms, frequency step {self.frequency_step:.4g} Hz "
                f"({self.n_bands} bands to {self.n_bands * self.frequency_step:.0f} Hz), "
                f"power spectral density in dB re 4e-10 Pa²/Hz; {self.frames_at(0)} frames")
        if painted is not None and settings is not None:
            text += (f". Painted as Praat's Paint: pre-emphasis {settings.pre_emphasis_db_per_octave:g} dB/octave, "
                     f"dynamic compression {settings.dynamic_compression:g}, maximum {painted.high_db:.1f} dB"
                     f"{' (autoscaled over the view)' if settings.maximum_db is None else ''}, "
                     f"dynamic range {settings.dynamic_range_db:g} dB")
        return text

    def _plan(self) -> None:
        """Praat's sampling (Sound_to_Spectrogram), in the same double arithmetic."""
        dx = 1.0 / self.rate
        length = self.params.window_length_s
        self.physical_window_s = 2.0 * length
        effective_time = length / math.sqrt(math.pi)
        self.time_step = max(self.params.time_step_s, effective_time / MAX_OVERSAMPLING)
        frequency_step = max(self.params.frequency_step_hz, 1.0 / effective_time / MAX_OVERSAMPLING)
        half = math.floor(self.physical_window_s / dx) // 2 - 1
        self.half_window = half
        self.window_samples = 2 * half
        nyquist = 0.5 / dx
        fmax = self.params.max_frequency_hz
        if fmax <= 0.0 or fmax > nyquist:
            fmax = nyquist
        n_freqs = math.floor(fmax / frequency_step)
        nfft = 1
        while nfft < self.window_samples or nfft < 2 * n_freqs * (nyquist / fmax):
            nfft *= 2
        self.nfft = nfft
        self.bins_per_band = max(1, math.floor(frequency_step * dx * nfft))
        bin_hz = 1.0 / (dx * nfft)
        self.frequency_step = self.bins_per_band * bin_hz
        self.n_bands = max(0, math.floor(fmax / self.frequency_step))
        self.f1 = 0.5 * (self.frequency_step - bin_hz)
        self._window = gaussian_window(self.window_samples, self.physical_window_s / dx)
        self._scale = 1.0 / float(np.sum(self._window**2)) / self.bins_per_band

    # ----- geometry --------------------------------------------------------------------------------
    @property
    def duration_s(self) -> float:
        return self.n_samples / self.rate

    def step_at(self, level: int) -> float:
        """The time step of `level`, seconds."""
        return self.time_step * LEVEL_FACTOR**level

    def frames_at(self, level: int) -> int:
        """Praat's number of frames at `level`'s time step: none when the sound is shorter than the
        physical window (two window lengths)."""
        duration = self.n_samples * (1.0 / self.rate)
        if self.window_samples < 2 or self.physical_window_s > duration:
            return 0
        return 1 + math.floor((duration - self.physical_window_s) / self.step_at(level))

    def first_centre_at(self, level: int) -> float:
        """Praat's centre of the first frame at `level`: the frames are centred in the sound."""
        dx = 1.0 / self.rate
        return 0.5 * dx + 0.5 * ((self.n_samples - 1) * dx - (self.frames_at(level) - 1) * self.step_at(level))

    def tiles_at(self, level: int) -> int:
        return -(-self.frames_at(level) // TILE_FRAMES)

    def level_for(self, t0: float, t1: float, n_pixels: int) -> int:
        """The coarsest level that still has MIN_FRAMES_PER_PIXEL frames per pixel over [t0, t1)."""
        seconds_per_pixel = max(t1 - t0, 1e-9) / max(1, n_pixels)
        level = 0
        while (level + 1 < self.n_levels and self.frames_at(level + 1) > 0
               and self.step_at(level + 1) * MIN_FRAMES_PER_PIXEL <= seconds_per_pixel):
            level += 1
        return level

    @property
    def nbytes(self) -> int:
        """Bytes of tiles held in memory."""
        return self._bytes

    # ----- computing --------------------------------------------------------------------------------
    def _frame_starts(self, level: int, first: int, count: int) -> np.ndarray:
        """First samples (0-based) of frames first .. first + count - 1, as Praat finds them: the sample
        at or left of the frame's centre, less half the window plus one."""
        dx = 1.0 / self.rate
        x1 = 0.5 * dx
        centres = self.first_centre_at(level) + np.arange(first, first + count, dtype=np.float64) * self.step_at(level)
        low = np.floor((centres - x1) / dx + 1.0).astype(np.int64)  # 1-based sample at or left of the centre
        return low - self.half_window

    def _read_frames(self, starts: np.ndarray, should_cancel: ShouldCancel) -> np.ndarray:
        """The frames' samples of every channel, shape (channels, frames, window)."""
        n = self.window_samples
        span = int(starts[-1] - starts[0]) + n
        if span <= 4 * n * len(starts):
            block = self.source.read_channels(int(starts[0]), span)
            index = (starts - starts[0])[:, None] + np.arange(n)[None, :]
            return block[:, index]
        return self.source.read_frames(starts, n, should_cancel)

    def compute_tile(self, level: int, index: int, should_cancel: ShouldCancel | None = None) -> np.ndarray:
        """The dB values of tile `index` at `level` (frames x bands, float32), computed (no cache)."""
        cancel = should_cancel or (lambda: False)
        first = index * TILE_FRAMES
        count = max(0, min(TILE_FRAMES, self.frames_at(level) - first))
        if count == 0 or self.n_bands == 0:
            return np.zeros((count, self.n_bands), dtype=np.float32)
        if cancel():
            raise DecodeCancelled()
        frames = self._read_frames(self._frame_starts(level, first, count), cancel).astype(np.float64)
        # Praat's To Spectrogram of a sound with several channels averages the channels' power spectra
        power = (np.abs(np.fft.rfft(frames * self._window, n=self.nfft, axis=2)) ** 2).mean(axis=0)
        used = power[:, : self.n_bands * self.bins_per_band]
        banded = used.reshape(count, self.n_bands, self.bins_per_band).sum(axis=2) * self._scale
        return psd_to_db(banded).astype(np.float32)

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
        return values if values.dtype == np.float32 and values.ndim == 2 and values.shape[1] == self.n_bands else None

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
        step = self.step_at(level)
        n_frames = self.frames_at(level)
        centre0 = self.first_centre_at(level)
        if n_frames == 0:
            return SpectrogramSlice(0.0, step, self.f1, self.frequency_step,
                                    np.zeros((0, self.n_bands), np.float32), level, True)
        first = int(np.clip(math.floor((max(t0, 0.0) - centre0) / step + 0.5), 0, n_frames - 1))
        last = int(np.clip(math.ceil((min(t1, self.duration_s) - centre0) / step + 0.5), first + 1, n_frames))
        image = np.full((last - first, self.n_bands), np.nan, dtype=np.float32)
        complete = True
        for index in range(first // TILE_FRAMES, (last - 1) // TILE_FRAMES + 1):
            values = self.tile(level, index, should_cancel, compute)
            if values is None:
                complete = False
                continue
            lo = max(first, index * TILE_FRAMES)
            hi = min(last, index * TILE_FRAMES + len(values))
            image[lo - first: hi - first] = values[lo - index * TILE_FRAMES: hi - index * TILE_FRAMES]
        return SpectrogramSlice(centre0 + (first - 0.5) * step, step, self.f1, self.frequency_step, image,
                                level, complete)


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
                     should_cancel: ShouldCancel | None = None) -> SpectrogramTiles:
    """The tiles of [offset_s, offset_s + duration_s) of `path`; the last few opened are kept, so switching
    back to a stimulus finds its tiles in memory. Raises MediaError or DecodeCancelled."""
    params = params or SpectrogramParams()
    key = spectrogram_cache_key(path, offset_s, duration_s, params, checksum)
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is not None:
            _OPEN.move_to_end(key)
            return found
    source = open_analysis_source(path, offset_s, duration_s, should_cancel)
    tiles = SpectrogramTiles(source, params, cache_key=key)
    with _OPEN_LOCK:
        _OPEN[key] = tiles
        while len(_OPEN) > OPEN_KEEP:
            _OPEN.popitem(last=False)
    return tiles
