"""Decoding audio on demand and the min/max peak pyramid that waveforms are drawn from.

WAV/FLAC/OGG/AIFF go through soundfile; audio inside containers (MP4, MKV, MOV, M4A ...) through PyAV,
streamed block by block so that an hour of audio is never held as float32. Every function honours a
window (`offset_s`, `duration_s`) inside the file: a stimulus may be a 20 s cut of a long recording.
Slow functions take `should_cancel()`, checked while streaming; when it returns True they raise
`DecodeCancelled` and write nothing to the cache.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from storage.errors import ThinsliceError

SOUNDFILE_SUFFIXES = frozenset({".wav", ".flac", ".ogg", ".oga", ".aif", ".aiff"})
BUCKET_SIZE = 256
LEVEL_FACTOR = 4
# Short clips keep their samples so that a view zoomed to single samples is exact (4 M samples is
# 87 s at 48 kHz, 16 MB).
KEEP_SAMPLES_UP_TO = 1 << 22
# Frames per read from soundfile: large reads keep the per-call cost small (256 k frames is 512 kB of
# 16-bit mono); a container's decoded frames are gathered into blocks of at least AV_BLOCK_FRAMES.
BLOCK_FRAMES = 1 << 18
AV_BLOCK_FRAMES = 1 << 16
# libsndfile reads 16-bit PCM as float by this factor, exactly (a power of two): peaks are taken on the
# integers and scaled afterwards, which gives the same floats for a fraction of the work.
PCM16_SCALE = np.float32(1.0 / 32768)
QUERY_UNITS_PER_PIXEL = 8
CACHE_FORMAT = 1

ShouldCancel = Callable[[], bool]


class MediaError(ThinsliceError):
    """A media file cannot be used; the message names the file and the reason."""

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path.name}: {reason}")


class DecodeCancelled(Exception):
    """The caller's `should_cancel()` returned True while decoding."""


@dataclass(frozen=True)
class AudioSamples:
    """Mono float32 samples and their rate."""

    samples: np.ndarray
    sample_rate: int

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.sample_rate


@dataclass(frozen=True)
class AudioChannels:
    """Float32 samples with one row per channel, shape (channels, n), and their rate: what analysis reads,
    so that a stereo recording is analysed as Praat analyses the same file, channels kept."""

    samples: np.ndarray
    sample_rate: int

    @property
    def duration_s(self) -> float:
        return self.samples.shape[1] / self.sample_rate


@dataclass(frozen=True)
class MediaInfo:
    """What a probe found: duration in seconds (None if unknown), which tracks exist, and the first audio
    track's rate and channel count (None if unknown)."""

    duration_s: float | None
    has_audio: bool
    has_video: bool
    sample_rate: int | None
    channels: int | None = None


# ----- opening and probing -----------------------------------------------------------------------------
def _check_exists(path: Path) -> None:
    if not path.exists():
        raise MediaError(path, "file not found")
    if not path.is_file():
        raise MediaError(path, "not a file")
    if path.stat().st_size == 0:
        raise MediaError(path, "file is empty")


def _uses_soundfile(path: Path) -> bool:
    return path.suffix.lower() in SOUNDFILE_SUFFIXES


def _soundfile_open(path: Path):
    import soundfile

    try:
        return soundfile.SoundFile(str(path))
    except (RuntimeError, soundfile.LibsndfileError) as exc:  # LibsndfileError is a RuntimeError
        raise MediaError(path, f"not a readable audio file ({_short(exc)})") from exc


def _av_open(path: Path):
    import av

    try:
        return av.open(str(path))
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise MediaError(path, f"not a readable media file ({_short(exc)})") from exc


def _short(exc: BaseException) -> str:
    """The library's own reason without the path it repeats (the file name is already in the message)."""
    for attribute in ("error_string", "strerror"):  # libsndfile, FFmpeg
        text = getattr(exc, attribute, None)
        if isinstance(text, str) and text.strip():
            return text.strip()
    return str(exc).strip() or type(exc).__name__


def probe(path: Path | str) -> MediaInfo:
    """Read the headers of `path`: duration and tracks. Raises MediaError if missing or unreadable."""
    path = Path(path)
    _check_exists(path)
    if _uses_soundfile(path):
        try:
            with _soundfile_open(path) as f:
                return MediaInfo(f.frames / f.samplerate, True, False, f.samplerate, f.channels)
        except MediaError:
            pass  # a mislabelled container: let FFmpeg try
    container = _av_open(path)
    try:
        audio = [s for s in container.streams if s.type == "audio"]
        video = [s for s in container.streams if s.type == "video"]
        if not audio and not video:
            raise MediaError(path, "no audio or video track")
        duration = container.duration / 1_000_000 if container.duration else None
        rate = audio[0].codec_context.sample_rate if audio else None
        channels = audio[0].codec_context.channels if audio else None
        return MediaInfo(duration, bool(audio), bool(video), rate, channels or None)
    finally:
        container.close()


# ----- streaming --------------------------------------------------------------------------------------
def open_audio_blocks(
    path: Path | str,
    offset_s: float = 0.0,
    duration_s: float | None = None,
    should_cancel: ShouldCancel | None = None,
) -> tuple[int, Iterator[np.ndarray]]:
    """Open `path` and return (sample rate, iterator of mono float32 blocks) for the window
    [offset_s, offset_s + duration_s) of the file. Raises MediaError at once if the file cannot be
    opened; the iterator raises DecodeCancelled when `should_cancel()` turns True."""
    return _open_blocks(path, offset_s, duration_s, should_cancel, allow_pcm16=False)


def _open_blocks(
    path: Path | str,
    offset_s: float,
    duration_s: float | None,
    should_cancel: ShouldCancel | None,
    allow_pcm16: bool,
    keep_channels: bool = False,
) -> tuple[int, Iterator[np.ndarray]]:
    """`open_audio_blocks`; with `allow_pcm16`, a mono 16-bit PCM file yields its int16 samples
    unconverted (float32 value = int16 * PCM16_SCALE); with `keep_channels`, blocks are float32 of
    shape (channels, n) instead of the channels' mean."""
    path = Path(path)
    _check_exists(path)
    cancel = should_cancel or (lambda: False)
    if _uses_soundfile(path):
        try:
            handle = _soundfile_open(path)
        except MediaError:
            handle = None
        if handle is not None:
            pcm16 = allow_pcm16 and handle.channels == 1 and handle.subtype == "PCM_16"
            dtype = "int16" if pcm16 else "float32"
            return handle.samplerate, _soundfile_blocks(handle, offset_s, duration_s, cancel, dtype, keep_channels)
    container = _av_open(path)
    streams = [s for s in container.streams if s.type == "audio"]
    if not streams:
        container.close()
        raise MediaError(path, "no audio track")
    stream = streams[0]
    rate = stream.codec_context.sample_rate
    if not rate:
        container.close()
        raise MediaError(path, "audio track without a sample rate")
    return rate, _av_blocks(path, container, stream, rate, offset_s, duration_s, cancel, keep_channels)


def _window(rate: int, offset_s: float, duration_s: float | None) -> tuple[int, int | None]:
    start = max(0, int(round(offset_s * rate)))
    end = None if duration_s is None else start + max(0, int(round(duration_s * rate)))
    return start, end


def _soundfile_blocks(handle, offset_s, duration_s, cancel: ShouldCancel, dtype: str,
                      keep_channels: bool) -> Iterator[np.ndarray]:
    with handle:
        start, end = _window(handle.samplerate, offset_s, duration_s)
        end = handle.frames if end is None else min(end, handle.frames)
        if start >= end:
            return
        handle.seek(start)
        remaining = end - start
        while remaining > 0:
            if cancel():
                raise DecodeCancelled()
            block = handle.read(min(BLOCK_FRAMES, remaining), dtype=dtype)  # 1-D when mono
            if len(block) == 0:
                break
            remaining -= len(block)
            if keep_channels:
                yield np.ascontiguousarray(block.T) if block.ndim == 2 else block[np.newaxis, :]
            else:
                yield block if block.ndim == 1 else block.mean(axis=1, dtype=np.float32)


def _av_blocks(path, container, stream, rate, offset_s, duration_s, cancel,
               keep_channels: bool) -> Iterator[np.ndarray]:
    import av

    start, end = _window(rate, offset_s, duration_s)
    if end is None and stream.duration:
        # Encoders pad the last frame; the track's own duration says where the audio really ends.
        end = int(round(stream.duration * stream.time_base * rate))
    # Frame times in samples with integer arithmetic: a Fraction per frame costs more than decoding it.
    # round() of the quotient as Python rounds: half to even.
    pts_num, pts_den = stream.time_base.numerator * rate, stream.time_base.denominator

    def samples_at(pts: int) -> int:
        whole, rest = divmod(pts * pts_num, pts_den)
        return whole + (2 * rest > pts_den or (2 * rest == pts_den and whole % 2 == 1))

    try:
        stream.thread_type = "AUTO"
        if start > 0:
            # Land before the window so the decoder has warmed up; samples before it are dropped by pts.
            target = max(0.0, offset_s - 1.0)
            container.seek(int(target / stream.time_base), stream=stream, backward=True)
        # Channels are kept or averaged from planar float32 so that the average is exact whatever the
        # codec gives; most audio codecs already decode to planar float, which is read without conversion.
        resampler: av.AudioResampler | None = None
        position: int | None = None
        gathered: list[np.ndarray] = []
        gathered_frames = 0
        for count, packet in enumerate(container.demux(stream)):
            if count % 32 == 0 and cancel():
                raise DecodeCancelled()
            for frame in packet.decode():
                if frame.pts is not None:
                    position = samples_at(frame.pts)
                elif position is None:
                    position = 0
                if frame.format.name == "fltp":
                    outs = (frame,)
                else:
                    resampler = resampler or av.AudioResampler(format="fltp")
                    outs = resampler.resample(frame)
                for out in outs:
                    decoded = _planar(out) if keep_channels else _planar_mono(out)
                    count = decoded.shape[-1]
                    block_start = position
                    position += count
                    lo = max(start, block_start) - block_start
                    hi = count if end is None else min(end, position) - block_start
                    if hi > lo:
                        gathered.append(decoded[..., lo:hi])
                        gathered_frames += hi - lo
            if gathered_frames >= AV_BLOCK_FRAMES:
                yield np.concatenate(gathered, axis=-1)
                gathered, gathered_frames = [], 0
            if end is not None and position is not None and position >= end:
                break
        if gathered:
            yield np.concatenate(gathered, axis=-1)
    except av.FFmpegError as exc:
        raise MediaError(path, f"decoding failed ({_short(exc)})") from exc
    finally:
        container.close()


def _planes(frame) -> list[np.ndarray]:
    """The float32 samples of each channel of a planar float frame."""
    count = frame.samples
    # A plane's buffer may be padded past the samples: read only `count` of them.
    return [np.frombuffer(plane, dtype=np.float32, count=count) for plane in frame.planes]


def _planar_mono(frame) -> np.ndarray:
    """Mono float32 samples of a planar float frame: its one channel, or the mean of its channels."""
    planes = _planes(frame)
    if len(planes) == 1:
        return planes[0]
    return np.stack(planes).mean(axis=0, dtype=np.float32)


def _planar(frame) -> np.ndarray:
    """The samples of a planar float frame, one row per channel: shape (channels, n)."""
    return np.stack(_planes(frame))


def decode_segment(
    path: Path | str, t0: float, t1: float | None, should_cancel: ShouldCancel | None = None
) -> AudioSamples:
    """Decode [t0, t1) of the file (file time, seconds; t1=None: to the end) to mono float32."""
    rate, blocks = open_audio_blocks(path, t0, None if t1 is None else max(0.0, t1 - t0), should_cancel)
    parts = list(blocks)
    samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return AudioSamples(samples, rate)


def decode_channels(
    path: Path | str, t0: float, t1: float | None, should_cancel: ShouldCancel | None = None
) -> AudioChannels:
    """Decode [t0, t1) of the file (file time, seconds; t1=None: to the end) with its channels kept, for
    analysis: a stereo file is analysed as Praat analyses it, not as the mean of its channels."""
    rate, blocks = _open_blocks(path, t0, None if t1 is None else max(0.0, t1 - t0), should_cancel,
                                allow_pcm16=False, keep_channels=True)
    parts = list(blocks)
    if parts:
        return AudioChannels(np.concatenate(parts, axis=1), rate)
    channels = probe(path).channels or 1
    return AudioChannels(np.zeros((channels, 0), dtype=np.float32), rate)


# ----- the peak pyramid --------------------------------------------------------------------------------
@dataclass(frozen=True)
class PeakSlice:
    """Per-pixel min/max for [t0, t1): pixel i covers t0 + i*(t1-t0)/n. NaN where there is no audio.

    `samples_per_unit` is the resolution the slice was made from (1 = raw samples)."""

    t0: float
    t1: float
    mins: np.ndarray
    maxs: np.ndarray
    samples_per_unit: int


class PeakPyramid:
    """Min/max summaries of a mono signal: level k holds buckets of bucket_size * factor**k samples.

    Short clips also keep their samples, so that a deeply zoomed view is exact. Times are seconds
    from the start of the window the pyramid was built for.
    """

    def __init__(
        self,
        sample_rate: int,
        n_samples: int,
        level0: tuple[np.ndarray, np.ndarray],
        samples: np.ndarray | None = None,
        bucket_size: int = BUCKET_SIZE,
        factor: int = LEVEL_FACTOR,
    ) -> None:
        self.sample_rate = int(sample_rate)
        self.n_samples = int(n_samples)
        self.bucket_size = bucket_size
        self.factor = factor
        self.samples = samples
        self.levels: list[tuple[np.ndarray, np.ndarray]] = [level0]
        mins, maxs = level0
        while len(mins) > 64:
            usable = (len(mins) // factor) * factor
            tail_min, tail_max = mins[usable:], maxs[usable:]
            next_min = mins[:usable].reshape(-1, factor).min(axis=1)
            next_max = maxs[:usable].reshape(-1, factor).max(axis=1)
            if len(tail_min):
                next_min = np.append(next_min, tail_min.min())
                next_max = np.append(next_max, tail_max.max())
            mins, maxs = next_min, next_max
            self.levels.append((mins, maxs))

    @property
    def duration_s(self) -> float:
        return self.n_samples / self.sample_rate

    @property
    def nbytes(self) -> int:
        size = sum(a.nbytes + b.nbytes for a, b in self.levels)
        return size + (self.samples.nbytes if self.samples is not None else 0)

    def _resolutions(self) -> list[tuple[int, np.ndarray, np.ndarray]]:
        out = []
        if self.samples is not None:
            out.append((1, self.samples, self.samples))
        for k, (mins, maxs) in enumerate(self.levels):
            out.append((self.bucket_size * self.factor**k, mins, maxs))
        return out

    def query(self, t0: float, t1: float, n_pixels: int) -> PeakSlice:
        """Min/max per pixel for the view [t0, t1) drawn `n_pixels` wide.

        Uses the coarsest level that still has eight units per pixel, so the cost depends on the pixel
        count, not on the file length. Where pixel edges fall on unit boundaries the result equals
        a direct min/max of the samples; elsewhere a pixel also covers the rest of the units its edges
        fall in (never less than its own samples, at most one unit more).
        """
        n_pixels = max(1, int(n_pixels))
        if t1 <= t0:
            t1 = t0 + 1.0 / self.sample_rate
        per_pixel = (t1 - t0) * self.sample_rate / n_pixels
        choices = self._resolutions()
        unit, mins_u, maxs_u = choices[0]
        for candidate in choices:
            # Eight or more units per pixel: a pixel edge then errs by at most 1/8 pixel, invisible,
            # while the work stays proportional to the pixel count.
            if candidate[0] * QUERY_UNITS_PER_PIXEL <= per_pixel:
                unit, mins_u, maxs_u = candidate
        # Edges on whole samples: finer means nothing, and it keeps floor/ceil exact on unit boundaries.
        edges = np.round(t0 * self.sample_rate + np.arange(n_pixels + 1, dtype=np.float64) * per_pixel)
        out_min = np.full(n_pixels, np.nan, dtype=np.float32)
        out_max = np.full(n_pixels, np.nan, dtype=np.float32)
        valid = (edges[:-1] < self.n_samples) & (edges[1:] > 0)
        if self.n_samples == 0 or not valid.any():
            return PeakSlice(t0, t1, out_min, out_max, unit)
        n_units = len(mins_u)
        starts = np.clip(np.floor(edges[:-1][valid] / unit).astype(np.int64), 0, n_units - 1)
        last_edge = edges[1:][valid][-1]
        stop = int(min(n_units, max(starts[-1] + 1, np.ceil(last_edge / unit))))
        # reduceat reduces starts[i]..starts[i+1] (one unit when they are equal) and the last to `stop`;
        # the unit holding a pixel's right edge is added too, so that a pixel never misses a peak.
        last = np.clip(np.ceil(edges[1:][valid] / unit).astype(np.int64) - 1, 0, n_units - 1)
        out_min[valid] = np.minimum(np.minimum.reduceat(mins_u[:stop], starts), mins_u[last])
        out_max[valid] = np.maximum(np.maximum.reduceat(maxs_u[:stop], starts), maxs_u[last])
        return PeakSlice(t0, t1, out_min, out_max, unit)


def _as_float32(values: np.ndarray) -> np.ndarray:
    """Samples or peaks as float32; int16 are 16-bit PCM, scaled as libsndfile reads them."""
    if values.dtype == np.int16:
        return values.astype(np.float32) * PCM16_SCALE
    return np.asarray(values, dtype=np.float32)


class PeakBuilder:
    """Accumulates level 0 of a pyramid from blocks as they stream in; `finish()` makes the pyramid.

    Blocks are mono float32, or int16 for 16-bit PCM (whose peaks are found on the integers and
    scaled once at the end); one build takes blocks of one kind."""

    def __init__(self, sample_rate: int, bucket_size: int = BUCKET_SIZE) -> None:
        self.sample_rate = sample_rate
        self.bucket_size = bucket_size
        self._mins: list[np.ndarray] = []
        self._maxs: list[np.ndarray] = []
        self._carry: np.ndarray | None = None
        self._samples: list[np.ndarray] | None = []
        self.n_samples = 0

    def add(self, block: np.ndarray) -> None:
        block = np.asarray(block)
        if block.dtype != np.int16:
            block = block.astype(np.float32, copy=False)
        self.n_samples += len(block)
        if self._samples is not None:
            if self.n_samples <= KEEP_SAMPLES_UP_TO:
                self._samples.append(_as_float32(block))
            else:
                self._samples = None
        data = np.concatenate([self._carry, block]) if self._carry is not None and len(self._carry) else block
        full = (len(data) // self.bucket_size) * self.bucket_size
        if full:
            buckets = data[:full].reshape(-1, self.bucket_size)
            self._mins.append(buckets.min(axis=1))
            self._maxs.append(buckets.max(axis=1))
        self._carry = data[full:].copy()

    def finish(self) -> PeakPyramid:
        mins, maxs = list(self._mins), list(self._maxs)
        if self._carry is not None and len(self._carry):
            mins.append(self._carry.min(keepdims=True))
            maxs.append(self._carry.max(keepdims=True))
        level0 = (
            _as_float32(np.concatenate(mins)) if mins else np.zeros(0, np.float32),
            _as_float32(np.concatenate(maxs)) if maxs else np.zeros(0, np.float32),
        )
        samples = None
        if self._samples is not None:
            samples = np.concatenate(self._samples) if self._samples else np.zeros(0, np.float32)
        return PeakPyramid(self.sample_rate, self.n_samples, level0, samples, self.bucket_size)


# ----- cache ------------------------------------------------------------------------------------------
def peak_cache_dir() -> Path:
    """$THINSLICE_HOME/cache/peaks if THINSLICE_HOME is set, else the user's cache folder."""
    home = os.environ.get("THINSLICE_HOME")
    if home:
        return Path(home) / "cache" / "peaks"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "thinslice" / "peaks"


def peak_cache_path(path: Path | str, offset_s: float = 0.0, duration_s: float | None = None) -> Path:
    """Where the pyramid of this file window is cached: keyed by path, size, mtime and window."""
    path = Path(path).resolve()
    stat = path.stat()
    key = f"{CACHE_FORMAT}|{path}|{stat.st_size}|{stat.st_mtime_ns}|{offset_s!r}|{duration_s!r}"
    return peak_cache_dir() / f"{hashlib.sha1(key.encode()).hexdigest()}.npz"


def _load_cached(cache_file: Path) -> PeakPyramid | None:
    try:
        with np.load(cache_file, allow_pickle=False) as data:
            meta = data["meta"]
            samples = data["samples"] if "samples" in data.files else None
            return PeakPyramid(
                int(meta[0]), int(meta[1]), (data["mins"], data["maxs"]), samples, int(meta[2]), int(meta[3])
            )
    except (OSError, KeyError, ValueError):
        return None  # unreadable cache entry: rebuild it


def _store_cached(cache_file: Path, pyramid: PeakPyramid) -> None:
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    meta = np.array([pyramid.sample_rate, pyramid.n_samples, pyramid.bucket_size, pyramid.factor], np.int64)
    arrays = {"meta": meta, "mins": pyramid.levels[0][0], "maxs": pyramid.levels[0][1]}
    if pyramid.samples is not None:
        arrays["samples"] = pyramid.samples
    # Write then rename, so that a crash or a concurrent reader never sees half a file.
    fd, tmp = tempfile.mkstemp(dir=cache_file.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, cache_file)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


def build_peaks(
    path: Path | str,
    offset_s: float = 0.0,
    duration_s: float | None = None,
    should_cancel: ShouldCancel | None = None,
) -> PeakPyramid:
    """Stream the file window once and build its pyramid (no cache)."""
    rate, blocks = _open_blocks(path, offset_s, duration_s, should_cancel, allow_pcm16=True)
    builder = PeakBuilder(rate)
    for block in blocks:
        builder.add(block)
    return builder.finish()


def load_peaks(
    path: Path | str,
    offset_s: float = 0.0,
    duration_s: float | None = None,
    should_cancel: ShouldCancel | None = None,
    use_cache: bool = True,
) -> PeakPyramid:
    """The pyramid of [offset_s, offset_s + duration_s) of `path`, from the cache when the file is
    unchanged, otherwise built by streaming and then cached. Raises MediaError or DecodeCancelled."""
    path = Path(path)
    _check_exists(path)
    cache_file = peak_cache_path(path, offset_s, duration_s) if use_cache else None
    if cache_file is not None and cache_file.exists():
        cached = _load_cached(cache_file)
        if cached is not None:
            return cached
    pyramid = build_peaks(path, offset_s, duration_s, should_cancel)
    if cache_file is not None:
        _store_cached(cache_file, pyramid)
    return pyramid


# ----- sources for playback ---------------------------------------------------------------------------
class SampleSource:
    """Mono float32 samples of a stimulus, readable from any position by an audio callback."""

    sample_rate: int
    n_frames: int

    def read(self, start: int, count: int) -> np.ndarray:
        """`count` samples from `start` (zeros outside the stimulus)."""
        raise NotImplementedError

    def read_channels(self, start: int, count: int) -> np.ndarray:
        """`count` samples from `start` of each channel, shape (channels, count), for analysis that treats
        channels as Praat does; a source of mono samples has one."""
        return self.read(start, count)[None, :]

    def read_frames(self, starts: np.ndarray, count: int, should_cancel: ShouldCancel | None = None) -> np.ndarray:
        """`count` samples of each channel from each of `starts` (zeros outside the stimulus), shape
        (channels, len(starts), count): the frames of an analysis spread over a long recording."""
        frames = None
        for i, start in enumerate(starts):
            if i % 64 == 0 and should_cancel is not None and should_cancel():
                raise DecodeCancelled()
            samples = self.read_channels(int(start), count)
            if frames is None:
                frames = np.empty((samples.shape[0], len(starts), count), dtype=np.float32)
            frames[:, i] = samples
        if frames is None:
            return np.empty((1, 0, count), dtype=np.float32)
        return frames


class ArraySource(SampleSource):
    """Samples held in memory (clips)."""

    def __init__(self, audio: AudioSamples) -> None:
        self.samples = audio.samples
        self.sample_rate = audio.sample_rate
        self.n_frames = len(audio.samples)

    def read(self, start: int, count: int) -> np.ndarray:
        out = np.zeros(count, dtype=np.float32)
        lo, hi = max(0, start), min(self.n_frames, start + count)
        if hi > lo:
            out[lo - start : hi - start] = self.samples[lo:hi]
        return out


class ChannelArraySource(SampleSource):
    """Samples held in memory with their channels kept: `read` gives their mean (what is played), and
    `read_channels` each channel (what is analysed)."""

    def __init__(self, audio: AudioChannels) -> None:
        self.channels = audio.samples
        self.sample_rate = audio.sample_rate
        self.n_frames = audio.samples.shape[1]

    def read_channels(self, start: int, count: int) -> np.ndarray:
        out = np.zeros((self.channels.shape[0], count), dtype=np.float32)
        lo, hi = max(0, start), min(self.n_frames, start + count)
        if hi > lo:
            out[:, lo - start : hi - start] = self.channels[:, lo:hi]
        return out

    def read(self, start: int, count: int) -> np.ndarray:
        return self.read_channels(start, count).mean(axis=0)


class SoundFileSource(SampleSource):
    """Samples read from a WAV/FLAC file on demand (long recordings), within a window."""

    def __init__(self, path: Path, offset_s: float = 0.0, duration_s: float | None = None) -> None:
        self._handle = _soundfile_open(path)
        self.sample_rate = self._handle.samplerate
        self._start, end = _window(self.sample_rate, offset_s, duration_s)
        end = self._handle.frames if end is None else min(end, self._handle.frames)
        self.n_frames = max(0, end - self._start)
        self._lock = threading.Lock()
        self._mapped = _mapped_pcm(Path(path), self._handle)

    def read_frames(self, starts: np.ndarray, count: int, should_cancel: ShouldCancel | None = None) -> np.ndarray:
        if self._mapped is None:
            return super().read_frames(starts, count, should_cancel)
        # a WAV of 16-bit or float samples is read where it lies: one gather for every frame instead of a
        # seek and a read each (an hour's overview has thousands of frames spread over the file)
        data, scale = self._mapped
        index = np.asarray(starts, dtype=np.int64)[:, None] + np.arange(count, dtype=np.int64)[None, :]
        inside = (index >= 0) & (index < self.n_frames)
        picked = data[np.where(inside, index + self._start, 0)]          # (frames, count, channels)
        frames = np.where(inside[:, :, None], picked.astype(np.float32) * np.float32(scale), np.float32(0.0))
        return np.ascontiguousarray(frames.transpose(2, 0, 1), dtype=np.float32)

    def read_channels(self, start: int, count: int) -> np.ndarray:
        out = np.zeros((self._handle.channels, count), dtype=np.float32)
        lo, hi = max(0, start), min(self.n_frames, start + count)
        if hi > lo:
            with self._lock:
                self._handle.seek(self._start + lo)
                block = self._handle.read(hi - lo, dtype="float32", always_2d=True)
            out[:, lo - start : lo - start + len(block)] = block.T
        return out

    def read(self, start: int, count: int) -> np.ndarray:
        channels = self.read_channels(start, count)
        return channels.mean(axis=0) if channels.shape[0] > 1 else channels[0]


def _mapped_pcm(path: Path, handle) -> tuple[np.ndarray, float] | None:
    """A plain RIFF WAV's samples mapped from disk, shape (frames, channels), with the factor that makes
    them the floats libsndfile reads (1/32768 for 16-bit, 1 for 32-bit float); None for anything else,
    which is read through libsndfile."""
    kinds = {"PCM_16": (np.dtype("<i2"), 1.0 / 32768.0), "FLOAT": (np.dtype("<f4"), 1.0)}
    if handle.format != "WAV" or handle.subtype not in kinds or handle.endian not in ("FILE", "LITTLE"):
        return None
    dtype, scale = kinds[handle.subtype]
    try:
        with open(path, "rb") as raw:
            if raw.read(4) != b"RIFF" or (raw.read(4), raw.read(4))[1] != b"WAVE":
                return None
            while True:
                header = raw.read(8)
                if len(header) < 8:
                    return None
                size = int.from_bytes(header[4:], "little")
                if header[:4] == b"data":
                    offset = raw.tell()
                    break
                raw.seek(size + (size & 1), os.SEEK_CUR)   # chunks are padded to an even size
        frames = size // (dtype.itemsize * handle.channels)
        if frames <= 0 or frames < handle.frames:   # a data chunk shorter than libsndfile reads: let it read
            return None
        data = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(handle.frames, handle.channels))
    except (OSError, ValueError):
        return None
    return data, scale


def open_analysis_source(
    path: Path | str,
    offset_s: float = 0.0,
    duration_s: float | None = None,
    should_cancel: ShouldCancel | None = None,
) -> SampleSource:
    """A source for analysis with the file's channels kept (`read_channels`); otherwise as `open_sample_source`."""
    return open_sample_source(path, offset_s, duration_s, should_cancel, keep_channels=True)


def _source_on_disk(path: Path, offset_s: float, duration_s: float | None,
                    max_in_memory_s: float) -> SoundFileSource | None:
    """A WAV/FLAC window longer than `max_in_memory_s` (or of unknown length), read on demand; else None."""
    info = probe(path)
    long = info.duration_s is None or (duration_s or info.duration_s) > max_in_memory_s
    return SoundFileSource(path, offset_s, duration_s) if long and _uses_soundfile(path) else None


def source_from_peaks(pyramid: PeakPyramid) -> SampleSource | None:
    """An in-memory source over the samples a clip's pyramid kept (the same samples that
    `open_sample_source` would decode for its window), or None when the pyramid kept none."""
    if pyramid.samples is None:
        return None
    return ArraySource(AudioSamples(pyramid.samples, pyramid.sample_rate))


def open_sample_source(
    path: Path | str,
    offset_s: float = 0.0,
    duration_s: float | None = None,
    should_cancel: ShouldCancel | None = None,
    max_in_memory_s: float = 900.0,
    keep_channels: bool = False,
) -> SampleSource:
    """A playback source for the window: WAV/FLAC longer than `max_in_memory_s` are read from disk on
    demand, everything else is decoded into memory (with `keep_channels`, each channel kept for analysis;
    a source read from disk keeps them anyway)."""
    on_disk = _source_on_disk(Path(path), offset_s, duration_s, max_in_memory_s)
    if on_disk is not None:
        return on_disk
    end = None if duration_s is None else offset_s + duration_s
    if keep_channels:
        return ChannelArraySource(decode_channels(path, offset_s, end, should_cancel))
    return ArraySource(decode_segment(path, offset_s, end, should_cancel))
