"""Decoding and the peak pyramid on generated tones (WAV via soundfile, AAC inside MP4 via PyAV)."""
from __future__ import annotations

import numpy as np
import pytest

from playback_media import tone, write_audio_mp4, write_wav
from storage import media
from storage.media import DecodeCancelled, MediaError, PeakBuilder, load_peaks, peak_cache_path

RATE = 16000


def direct_minmax(samples: np.ndarray, per_pixel: int, start: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """What a waveform pixel should show: min and max of exactly its samples."""
    usable = samples[start:]
    n = len(usable) // per_pixel
    blocks = usable[: n * per_pixel].reshape(n, per_pixel)
    return blocks.min(axis=1), blocks.max(axis=1)


@pytest.fixture(scope="module")
def long_samples() -> np.ndarray:
    # 2**22 + extra samples: too long to keep raw, so queries go through the bucket levels.
    rng = np.random.default_rng(7)
    samples = tone(300.0, RATE) * 0.9
    samples[::997] += rng.uniform(-0.1, 0.1, size=len(samples[::997])).astype(np.float32)
    return samples


@pytest.mark.parametrize("per_pixel", [256, 1024, 4096 * 3, 65536])
def test_pyramid_matches_direct_minmax_at_aligned_zooms(long_samples, per_pixel):
    builder = PeakBuilder(RATE)
    for i in range(0, len(long_samples), 40000):  # odd block size: buckets straddle blocks
        builder.add(long_samples[i : i + 40000])
    pyramid = builder.finish()
    assert pyramid.samples is None
    n_pixels = 600
    start = 65536 * 3  # on a unit boundary of every level
    t0 = start / RATE
    t1 = t0 + n_pixels * per_pixel / RATE
    view = pyramid.query(t0, t1, n_pixels)
    want_min, want_max = direct_minmax(long_samples, per_pixel, start)
    full = min(n_pixels, len(want_min))  # pixels past the end are partial or empty
    np.testing.assert_array_equal(view.mins[:full], want_min[:full])
    np.testing.assert_array_equal(view.maxs[:full], want_max[:full])
    assert np.isnan(view.mins[full + 1 :]).all()


def test_pyramid_at_any_zoom_covers_each_pixel_within_one_unit(long_samples):
    pyramid = PeakBuilder(RATE)
    pyramid.add(long_samples)
    pyramid = pyramid.finish()
    t0, t1, n = 12.3456, 251.77, 1280
    view = pyramid.query(t0, t1, n)
    edges = (t0 + np.arange(n + 1) * (t1 - t0) / n) * RATE
    unit = view.samples_per_unit
    for i in range(0, n, 97):
        lo, hi = int(np.ceil(edges[i])), int(np.floor(edges[i + 1]))
        core = long_samples[lo:hi]
        wide = long_samples[max(0, lo - unit) : hi + unit]
        assert wide.min() <= view.mins[i] <= core.min()
        assert core.max() <= view.maxs[i] <= wide.max()


def test_short_clip_keeps_samples_so_deep_zoom_is_exact():
    samples = tone(2.0, RATE)
    builder = PeakBuilder(RATE)
    builder.add(samples)
    pyramid = builder.finish()
    view = pyramid.query(1.0, 1.0 + 100 / RATE, 100)  # one pixel per sample
    np.testing.assert_array_equal(view.mins, samples[RATE : RATE + 100])
    outside = pyramid.query(-1.0, 0.0, 10)
    assert np.isnan(outside.mins).all()


def test_wav_and_mp4_peaks_match_the_samples_and_honour_the_window(tmp_path):
    samples = tone(6.0, RATE)
    samples[int(2.5 * RATE) : int(2.5 * RATE) + 40] = 0.95  # a click marks a known instant
    wav = write_wav(tmp_path / "tone.wav", samples, RATE, subtype="FLOAT")
    mp4 = write_audio_mp4(tmp_path / "tone.mp4", samples, RATE, bitrate=128000)
    offset, duration = 1.5, 3.0
    start = int(offset * RATE)
    window = samples[start : start + int(duration * RATE)]
    want_min, want_max = direct_minmax(window, 1024)

    from_wav = load_peaks(wav, offset, duration)
    assert from_wav.n_samples == len(window)
    got = from_wav.query(0.0, len(want_min) * 1024 / RATE, len(want_min))
    np.testing.assert_array_equal(got.mins, want_min)
    np.testing.assert_array_equal(got.maxs, want_max)

    from_mp4 = load_peaks(mp4, offset, duration)
    assert from_mp4.n_samples == len(window)
    got = from_mp4.query(0.0, len(want_min) * 1024 / RATE, len(want_min))
    # AAC is lossy: the envelope matches to a few percent of full scale, and is not shifted in time.
    np.testing.assert_allclose(got.mins, want_min, atol=0.03)
    np.testing.assert_allclose(got.maxs, want_max, atol=0.03)

    clip = media.decode_segment(mp4, offset, offset + duration)
    assert clip.sample_rate == RATE and len(clip.samples) == len(window)
    click = int(np.argmax(clip.samples > 0.8))
    assert abs(click - int((2.5 - offset) * RATE)) <= 2  # samples, i.e. within 0.125 ms


def test_second_open_comes_from_the_cache(tmp_path):
    wav = write_wav(tmp_path / "tone.wav", tone(3.0, RATE), RATE)
    first = load_peaks(wav)
    cache_file = peak_cache_path(wav)
    assert cache_file.exists() and str(cache_file).startswith(str(media.peak_cache_dir()))
    stamp = cache_file.stat().st_mtime_ns
    second = load_peaks(wav)
    assert cache_file.stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(first.levels[0][0], second.levels[0][0])
    assert second.n_samples == first.n_samples and second.samples is not None
    # a changed file is a different cache entry
    write_wav(wav, tone(4.0, RATE), RATE)
    assert load_peaks(wav).n_samples == 4 * RATE


def test_cancel_stops_streaming_and_caches_nothing(tmp_path):
    wav = write_wav(tmp_path / "long.wav", tone(60.0, RATE), RATE)
    calls = []

    def should_cancel() -> bool:
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(DecodeCancelled):
        load_peaks(wav, should_cancel=should_cancel)
    assert len(calls) == 3
    assert not peak_cache_path(wav).exists()


def test_missing_and_corrupt_files_name_the_file_and_the_reason(tmp_path):
    with pytest.raises(MediaError, match=r"absent\.wav: file not found"):
        load_peaks(tmp_path / "absent.wav")
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"\x00\x01garbage" * 500)
    with pytest.raises(MediaError, match=r"broken\.mp4: not a readable media file"):
        load_peaks(broken)
    truncated = tmp_path / "truncated.wav"
    truncated.write_bytes(b"RIFF\x00\x00")
    with pytest.raises(MediaError, match=r"truncated\.wav"):
        media.decode_segment(truncated, 0, 1)
