"""Spectrogram tiles: where a tone's energy lands, wide against narrow band, levels, the caches."""
from __future__ import annotations

import numpy as np
import soundfile as sf

from storage.media import ArraySource, AudioSamples
from storage.spectrogram import (TILE_FRAMES, SpectrogramParams, SpectrogramTiles, open_spectrogram,
                                 spectrogram_cache_key, to_db)

RATE = 16000


def tone(freq: float, seconds: float, rate: int = RATE, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def tiles_of(samples: np.ndarray, rate: int = RATE, **params) -> SpectrogramTiles:
    return SpectrogramTiles(ArraySource(AudioSamples(samples, rate)), SpectrogramParams(**params))


def band_profile(tiles: SpectrogramTiles) -> np.ndarray:
    return to_db(tiles.query(0.0, tiles.duration_s, 800).image).mean(axis=0)


def peak_hz(profile: np.ndarray, step: float = 20.0) -> float:
    """Centre of the bands within 1 dB of the loudest (a wide-band peak is flat at half-dB steps)."""
    return float(np.mean(np.flatnonzero(profile >= profile.max() - 1.0)) + 0.5) * step


def test_a_tone_is_brightest_in_its_band_and_narrow_band_resolves_it_more_sharply():
    samples = tone(1230.0, 3.0)
    widths = {}
    for band in ("wide", "narrow"):
        tiles = tiles_of(samples, band=band, pre_emphasis_db_per_octave=0.0)
        profile = band_profile(tiles)
        assert abs(peak_hz(profile) - 1230.0) <= 20.0
        widths[band] = int(np.sum(profile > profile.max() - 20.0)) * 20  # Hz within 20 dB of the peak
    assert widths["narrow"] < widths["wide"] / 3


def test_two_tones_close_together_are_apart_in_narrow_band_only():
    samples = tone(1000.0, 2.0) + tone(1100.0, 2.0)
    for band, separated in (("narrow", True), ("wide", False)):
        profile = band_profile(tiles_of(samples, band=band, pre_emphasis_db_per_octave=0.0))
        dip = profile[1050 // 20] < min(profile[1000 // 20], profile[1100 // 20]) - 6.0
        assert dip == separated, band


def test_max_frequency_sets_the_bands_and_silence_is_at_the_floor():
    tiles = tiles_of(np.zeros(RATE, np.float32), max_frequency_hz=3000.0)
    assert tiles.n_bands == 150
    assert int(tiles.query(0, 1, 100).image.max()) == 0


def test_a_long_view_uses_a_coarse_level_with_a_frame_per_pixel_and_a_zoom_uses_level_0():
    tiles = tiles_of(tone(500.0, 120.0))
    whole = tiles.query(0.0, 120.0, 1000)
    assert whole.level > 0 and len(whole.image) >= 1000
    assert whole.time_step <= 120.0 / 1000
    zoomed = tiles.query(10.0, 11.0, 1000)
    assert zoomed.level == 0 and zoomed.t0 <= 10.0 and zoomed.t1 >= 11.0


def test_without_compute_a_view_falls_back_to_a_complete_coarser_level():
    tiles = tiles_of(tone(500.0, 60.0))
    tiles.query(0.0, 60.0, 200)  # computes the coarse overview only
    fine = tiles.query(20.0, 21.0, 1000, compute=False)
    assert fine.complete and fine.level > 0
    tiles.query(20.0, 21.0, 1000)
    assert tiles.query(20.0, 21.0, 1000, compute=False).level == 0


def test_memory_stays_under_the_budget():
    samples = tone(500.0, 60.0)
    tiles = SpectrogramTiles(ArraySource(AudioSamples(samples, RATE)), SpectrogramParams(),
                             memory_budget=20 * TILE_FRAMES * 250)
    for start in range(0, 60, 2):
        tiles.query(float(start), float(start + 2), 1000)
    assert tiles.nbytes <= 20 * TILE_FRAMES * 250


def test_tiles_are_cached_on_disk_by_file_and_parameters(tmp_path):
    path = tmp_path / "tone.wav"
    sf.write(path, tone(800.0, 4.0), RATE, subtype="PCM_16")
    cache = tmp_path / "cache"
    params = SpectrogramParams(band="narrow")
    key = spectrogram_cache_key(path, 0.0, None, params)
    first = SpectrogramTiles(ArraySource(AudioSamples(sf.read(path, dtype="float32")[0], RATE)), params, key, cache)
    made = first.query(0, 4, 500).image
    assert list((cache / key).glob("*.npy"))
    again = SpectrogramTiles(ArraySource(AudioSamples(np.zeros(4 * RATE, np.float32), RATE)), params, key, cache)
    assert np.array_equal(again.query(0, 4, 500).image, made)  # read back, not recomputed from the zeros
    assert spectrogram_cache_key(path, 0.0, None, SpectrogramParams(band="wide")) != key
    assert spectrogram_cache_key(path, 0.0, None, params, checksum="abc") != key


def test_open_spectrogram_reads_a_window_of_a_file(tmp_path):
    path = tmp_path / "two.flac"
    sf.write(path, np.concatenate([tone(600.0, 2.0), tone(2400.0, 2.0)]), RATE)
    tiles = open_spectrogram(path, offset_s=2.0, duration_s=2.0, params=SpectrogramParams(pre_emphasis_db_per_octave=0))
    assert abs(tiles.duration_s - 2.0) < 1e-6
    assert abs(peak_hz(band_profile(tiles)) - 2400.0) <= 20.0
    assert open_spectrogram(path, offset_s=2.0, duration_s=2.0,
                            params=SpectrogramParams(pre_emphasis_db_per_octave=0)) is tiles
