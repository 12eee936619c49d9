"""Spectrogram tiles: equal to Praat's `To Spectrogram...` (through parselmouth) frame for frame, painted as
Praat's `Paint...`; where a tone's energy lands, wide against narrow band, levels, the caches."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import parselmouth
import pytest
import soundfile as sf

from storage.media import ArraySource, AudioSamples, SoundFileSource
from storage.spectrogram import (TILE_FRAMES, PaintSettings, SpectrogramParams, SpectrogramTiles, open_spectrogram,
                                 paint, psd_to_db, spectrogram_cache_key)

RATE = 16000
SPEECH = (Path(__file__).resolve().parents[1]
          / "resources/sample/echomind/data_synthesis/audio/sad/id_903_sad_school_target.wav")


def tone(freq: float, seconds: float, rate: int = RATE, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def tiles_of(samples: np.ndarray, rate: int = RATE, **params) -> SpectrogramTiles:
    return SpectrogramTiles(ArraySource(AudioSamples(samples, rate)), SpectrogramParams(**params))


def band_profile(tiles: SpectrogramTiles) -> np.ndarray:
    return tiles.query(0.0, tiles.duration_s, 800).image.mean(axis=0)


def peak_hz(profile: np.ndarray, tiles: SpectrogramTiles) -> float:
    """Centre of the bands within 1 dB of the loudest (a wide-band peak spans a few bands)."""
    return tiles.f1 + float(np.mean(np.flatnonzero(profile >= profile.max() - 1.0))) * tiles.frequency_step


def praat_db(samples: np.ndarray, rate: int, params: SpectrogramParams, time_step: float | None = None):
    """parselmouth's spectrogram of the same samples, in Praat's paint dB, frames x bands."""
    sound = parselmouth.Sound(samples.astype(np.float64), sampling_frequency=rate)
    found = sound.to_spectrogram(window_length=params.window_length_s, maximum_frequency=params.max_frequency_hz,
                                 time_step=time_step or params.time_step_s,
                                 frequency_step=params.frequency_step_hz)
    return found, 10.0 * np.log10((found.values.T + 1e-30) / 4e-10)


def signals(rate: int, seconds: float) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(rate)
    n = int(round(seconds * rate))
    t = np.arange(n) / rate
    speech, speech_rate = sf.read(SPEECH, dtype="float32")
    assert speech_rate == 24000
    # the recording resampled by linear interpolation: a voice at any rate, with its silences
    voice = np.interp(t, np.arange(len(speech)) / speech_rate, speech).astype(np.float32)
    return {
        "tone": (0.5 * np.sin(2 * np.pi * 110.0 * t) + 0.2 * np.sin(2 * np.pi * 2345.6 * t)).astype(np.float32),
        "noise": (0.1 * rng.standard_normal(n)).astype(np.float32),
        "speech": voice,
        "offset": (0.3 + 0.05 * rng.standard_normal(n)).astype(np.float32),  # a DC offset stays in, as in Praat
    }


def test_a_tone_is_brightest_in_its_band_and_narrow_band_resolves_it_more_sharply():
    samples = tone(1230.0, 3.0)
    widths = {}
    for band in ("wide", "narrow"):
        tiles = tiles_of(samples, band=band)
        profile = band_profile(tiles)
        assert abs(peak_hz(profile, tiles) - 1230.0) <= tiles.frequency_step
        widths[band] = int(np.sum(profile > profile.max() - 20.0)) * tiles.frequency_step  # Hz within 20 dB
    assert widths["narrow"] < widths["wide"] / 3


def test_two_tones_close_together_are_apart_in_narrow_band_only():
    samples = tone(1000.0, 2.0) + tone(1100.0, 2.0)
    for band, separated in (("narrow", True), ("wide", False)):
        tiles = tiles_of(samples, band=band)
        at = {f: int(round((f - tiles.f1) / tiles.frequency_step)) for f in (1000, 1050, 1100)}
        profile = band_profile(tiles)
        dip = profile[at[1050]] < min(profile[at[1000]], profile[at[1100]]) - 6.0
        assert dip == separated, band


def test_max_frequency_sets_the_bands_and_silence_is_at_praats_floor():
    tiles = tiles_of(np.zeros(RATE, np.float32), max_frequency_hz=3000.0)
    # Praat widens a 5 ms window's 20 Hz step to its least, 354 Hz / 8, rounded down to whole 31.25 Hz bins
    assert tiles.frequency_step == 31.25 and tiles.n_bands == 96
    assert np.allclose(tiles.query(0, 1, 100).image, 10 * math.log10(1e-30 / 4e-10))


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
    tiles = open_spectrogram(path, offset_s=2.0, duration_s=2.0, params=SpectrogramParams())
    assert abs(tiles.duration_s - 2.0) < 1e-6
    assert abs(peak_hz(band_profile(tiles), tiles) - 2400.0) <= tiles.frequency_step
    assert open_spectrogram(path, offset_s=2.0, duration_s=2.0, params=SpectrogramParams()) is tiles


# ----- equal to Praat ----------------------------------------------------------------------------------
@pytest.mark.parametrize("rate", [8000, 16000, 44100, 48000])
@pytest.mark.parametrize("band", ["wide", "narrow"])
def test_level_0_equals_praats_to_spectrogram_frame_for_frame(rate, band):
    for max_frequency in (5000.0, 0.5 * rate + 1000.0):  # above the Nyquist frequency Praat stops there
        params = SpectrogramParams(band=band, max_frequency_hz=max_frequency)
        for name, samples in signals(rate, 1.37).items():
            tiles = tiles_of(samples, rate, band=band, max_frequency_hz=max_frequency)
            ours = tiles.query(0.0, tiles.duration_s, 10**6)
            reference, db = praat_db(samples, rate, params)
            assert ours.level == 0 and ours.image.shape == db.shape, name
            assert ours.t0 + 0.5 * ours.time_step == pytest.approx(reference.x1, abs=1e-12)
            assert ours.time_step == pytest.approx(reference.dx, rel=1e-12)
            assert ours.f1 == pytest.approx(reference.y1, abs=1e-9)
            assert ours.frequency_step == pytest.approx(reference.dy, rel=1e-12)
            assert np.max(np.abs(ours.image - db)) < 1e-3, (name, max_frequency)


@pytest.mark.parametrize("rate", [8000, 48000])
def test_short_sounds_have_praats_frames_and_none_under_two_window_lengths(rate):
    for band, length in (("wide", 0.005), ("narrow", 0.03)):
        params = SpectrogramParams(band=band)
        shortest = math.ceil(2 * length * rate)
        for n in (shortest, shortest + 1, shortest + 7, shortest + int(0.002 * rate) + 3):
            samples = signals(rate, n / rate + 0.01)["speech"][:n]
            tiles = tiles_of(samples, rate, band=band)
            reference, db = praat_db(samples, rate, params)
            ours = tiles.query(0.0, tiles.duration_s, 1000)
            assert ours.image.shape == db.shape and np.max(np.abs(ours.image - db)) < 1e-3, (band, n)
        too_short = tiles_of(signals(rate, 0.1)["speech"][: shortest - 1], rate, band=band)
        with pytest.raises(parselmouth.PraatError):
            praat_db(signals(rate, 0.1)["speech"][: shortest - 1], rate, params)
        assert too_short.frames_at(0) == 0 and too_short.query(0.0, 1.0, 100).image.shape == (0, too_short.n_bands)


def test_each_coarser_level_equals_praat_at_its_own_time_step():
    rate = 22050
    samples = signals(rate, 12.0)["speech"]
    tiles = tiles_of(samples, rate)
    assert tiles.n_levels >= 3
    for level in range(tiles.n_levels):
        ours = tiles._slice(level, 0.0, tiles.duration_s, None, True)
        reference, db = praat_db(samples, rate, tiles.params, time_step=tiles.step_at(level))
        assert ours.image.shape == db.shape and np.max(np.abs(ours.image - db)) < 1e-3, level
        assert ours.t0 + 0.5 * ours.time_step == pytest.approx(reference.x1, abs=1e-12)


def praats_paint(values: np.ndarray, dy: float, settings: PaintSettings) -> tuple[np.ndarray, float]:
    """Spectrogram_paintInside's arithmetic (Praat's fon/Spectrogram.cpp) on parselmouth's values, written out
    line by line in Praat's order and units: the reference our vectorised paint must equal."""
    bands, frames = values.shape
    z = np.empty_like(values)
    local = np.zeros(frames)
    for i in range(bands):
        factor = (settings.pre_emphasis_db_per_octave / math.log(2)) * math.log((i + 1) * dy / 1000.0)
        for t in range(frames):
            z[i, t] = (10 / math.log(10)) * math.log((values[i, t] + 1e-30) / 4.0e-10) + factor
            local[t] = max(local[t], z[i, t])
    maximum = settings.maximum_db if settings.maximum_db is not None else max(0.0, local.max())
    z += settings.dynamic_compression * (maximum - local)[None, :]
    return z.T, maximum


def test_paint_equals_praats_paint_with_pre_emphasis_below_1_khz_compression_and_autoscaling():
    rate = 16000
    samples = signals(rate, 0.4)["speech"] * 0.05
    for settings in (PaintSettings(), PaintSettings(dynamic_range_db=70.0, pre_emphasis_db_per_octave=3.0,
                                                    dynamic_compression=0.6),
                     PaintSettings(maximum_db=90.0, dynamic_compression=1.0),
                     PaintSettings(pre_emphasis_db_per_octave=0.0)):
        tiles = tiles_of(samples, rate)
        found = tiles.query(0.0, tiles.duration_s, 10**6)
        reference, _ = praat_db(samples, rate, tiles.params)
        image, maximum = praats_paint(reference.values, reference.dy, settings)
        painted = paint(found, settings)
        assert np.max(np.abs(painted.image - image)) < 1e-3
        assert painted.high_db == pytest.approx(maximum, abs=1e-3)
        assert painted.low_db == pytest.approx(maximum - settings.dynamic_range_db, abs=1e-3)
    # 6 dB/octave takes 19 dB off the band at 110 Hz (Praat's paint attenuates below 1 kHz, it does not clamp)
    tiles = tiles_of(samples, rate, band="narrow")
    found = tiles.query(0.0, tiles.duration_s, 10**6)
    band = int(round(110.0 / tiles.frequency_step)) - 1  # band i (from 1) is weighed at i * step
    flat = paint(found, PaintSettings(pre_emphasis_db_per_octave=0.0)).image
    emphasised = paint(found, PaintSettings()).image
    gain = (emphasised - flat)[:, band]
    assert np.allclose(gain, 6.0 * math.log2((band + 1) * tiles.frequency_step / 1000.0), atol=1e-4)
    assert gain[0] == pytest.approx(-19.1, abs=0.1)


def test_autoscaling_takes_the_loudest_frame_in_the_view_only():
    rate = 16000
    samples = np.concatenate([tone(1000.0, 1.0, rate, 0.01), tone(1000.0, 1.0, rate, 0.5)])
    tiles = tiles_of(samples, rate)
    quiet = tiles.query(0.1, 0.9, 1000)
    whole = tiles.query(0.0, 2.0, 1000)
    assert paint(whole, PaintSettings()).high_db - paint(quiet, PaintSettings(), 0.1, 0.9).high_db == \
        pytest.approx(20 * math.log10(50), abs=0.5)


def test_the_description_states_the_steps_praat_settles_on():
    samples = signals(16000, 1.0)["speech"]
    for band in ("wide", "narrow"):
        tiles = tiles_of(samples, 16000, band=band)
        reference, _ = praat_db(samples, 16000, tiles.params)
        found = tiles.query(0.0, 1.0, 1000)
        settings = PaintSettings(dynamic_range_db=45.0)
        text = tiles.describe(paint(found, settings), settings)
        assert f"time step {reference.dx * 1000:.4g} ms" in text and f"frequency step {reference.dy:.4g} Hz" in text
        assert f"{reference.nx} frames" in text and f"{reference.ny} bands" in text
        assert "pre-emphasis 6 dB/octave" in text and "dynamic range 45 dB" in text and "autoscaled" in text


@pytest.mark.parametrize("kind", ["wav", "flac_long"])
def test_a_stereo_file_is_analysed_as_praat_analyses_it(tmp_path, kind):
    """A voice alone in one channel and noise in the other: Praat averages the channels' power spectra, which
    the mean of the channels' samples would not give (the voice would read 6 dB low, the channels could cancel)."""
    rate, seconds = 16000, 1.5
    voice = signals(rate, seconds)["speech"]
    other = (0.05 * np.random.default_rng(7).standard_normal(len(voice))).astype(np.float32)
    stereo = np.stack([voice, other], axis=1)
    path = tmp_path / ("stereo.flac" if kind == "flac_long" else "stereo.wav")
    sf.write(path, stereo, rate)
    params = SpectrogramParams()
    # a long-file source reads the file on demand; both must keep the channels
    tiles = (open_spectrogram(path, params=params) if kind == "wav"
             else SpectrogramTiles(SoundFileSource(path), params))
    ours = np.concatenate([tiles.tile(0, i) for i in range(tiles.tiles_at(0))])
    sound = parselmouth.Sound(str(path))
    assert sound.n_channels == 2
    praat = sound.to_spectrogram(window_length=params.window_length_s, maximum_frequency=params.max_frequency_hz,
                                 time_step=params.time_step_s, frequency_step=params.frequency_step_hz)
    theirs = 10.0 * np.log10((praat.values.T + 1e-30) / 4e-10)
    assert ours.shape == theirs.shape
    loud = theirs > theirs.max() - 60.0   # where there is energy to compare (silence is -306 dB on both)
    assert np.max(np.abs(ours[loud] - theirs[loud])) < 1e-3
    mixed = SpectrogramTiles(ArraySource(AudioSamples(stereo.mean(axis=1), rate)), params)
    mixed_db = np.concatenate([mixed.tile(0, i) for i in range(mixed.tiles_at(0))])
    assert np.max(np.abs(mixed_db[loud] - theirs[loud])) > 1.0   # the old way was not Praat's


@pytest.mark.parametrize("subtype", ["PCM_16", "FLOAT", "PCM_24"])
def test_a_long_files_sparse_frames_read_from_disk_equal_praat_at_every_level(tmp_path, subtype):
    """A long recording's overview reads frames spread over the file: a 16-bit or float WAV is read where it
    lies (one gather), anything else through libsndfile frame by frame; both equal Praat at each level, in
    both channels, to the file's last frame (which reaches past its end)."""
    rate, seconds = 8000, 40.0
    voice = signals(rate, seconds)["speech"]
    other = (0.05 * np.random.default_rng(3).standard_normal(len(voice))).astype(np.float32)
    path = tmp_path / f"long_{subtype}.wav"
    sf.write(path, np.stack([voice, other], axis=1), rate, subtype=subtype)
    source = SoundFileSource(path)
    assert (source._mapped is not None) == (subtype != "PCM_24")
    tiles = SpectrogramTiles(source, SpectrogramParams())
    sound = parselmouth.Sound(str(path))
    sparse = 0
    for level in range(tiles.n_levels):
        starts = tiles._frame_starts(level, 0, tiles.frames_at(level))
        sparse += int(starts[-1] - starts[0]) + tiles.window_samples > 4 * tiles.window_samples * len(starts)
        ours = tiles._slice(level, 0.0, tiles.duration_s, None, True)
        found = sound.to_spectrogram(window_length=tiles.params.window_length_s,
                                     maximum_frequency=tiles.params.max_frequency_hz,
                                     time_step=tiles.step_at(level), frequency_step=tiles.params.frequency_step_hz)
        theirs = 10.0 * np.log10((found.values.T + 1e-30) / 4e-10)
        loud = theirs > theirs.max() - 60.0
        assert ours.image.shape == theirs.shape and np.max(np.abs(ours.image[loud] - theirs[loud])) < 1e-3, level
    assert sparse >= 1   # the coarsest levels did read frames spread over the file


def test_frames_read_where_they_lie_equal_frames_read_one_by_one_inside_a_window(tmp_path):
    rate = 8000
    samples = (np.random.default_rng(5).integers(-32768, 32767, size=(rate * 6, 2))).astype(np.int16)
    path = tmp_path / "window.wav"
    sf.write(path, samples, rate, subtype="PCM_16")
    source = SoundFileSource(path, offset_s=1.0, duration_s=4.0)
    starts = np.array([-300, -5, 0, 7, 12345, source.n_frames - 100, source.n_frames - 1, source.n_frames + 50])
    mapped = source.read_frames(starts, 256)
    one_by_one = np.stack([source.read_channels(int(s), 256) for s in starts], axis=1)
    assert mapped.dtype == np.float32 and mapped.shape == one_by_one.shape == (2, len(starts), 256)
    assert np.array_equal(mapped, one_by_one)
    assert not mapped[:, 0].any() and not mapped[:, -1].any()   # before the window and past it: silence
