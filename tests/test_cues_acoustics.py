"""Pitch and intensity equal Praat's own (praat-parselmouth called directly) and what numpy says of tones."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import parselmouth
import pytest

from app.cues.acoustics import PraatSettings, energy_mean_db, intensity_track, pitch_track, praat_quantile, semitones
from app.cues.measures import CueSettings, acoustic_measures, egemaps_measures
from storage.media import decode_segment

RATE = 16000
SAMPLE_VOICES = Path(__file__).resolve().parents[1] / "resources" / "sample" / "echomind" / "data_synthesis" / "audio"


def voiced_tone(f0: float, seconds: float, rate: int = RATE, amplitude: float = 0.2) -> np.ndarray:
    """A vowel-like tone: the fundamental and four harmonics falling off, as a voice has."""
    t = np.arange(int(seconds * rate)) / rate
    wave = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6))
    return (amplitude * wave / np.max(np.abs(wave))).astype(np.float32)


def praat_pitch(samples: np.ndarray, rate: int, settings: PraatSettings) -> np.ndarray:
    pitch = parselmouth.Sound(samples.astype(np.float64), rate).to_pitch_ac(
        time_step=settings.time_step_s, pitch_floor=settings.pitch_floor_hz, pitch_ceiling=settings.pitch_ceiling_hz)
    return pitch.selected_array["frequency"]


@pytest.mark.parametrize("f0", [110.0, 185.0, 262.0])
def test_pitch_of_a_tone_is_its_f0_and_equals_praat(f0):
    samples = voiced_tone(f0, 1.0)
    track = pitch_track(samples, RATE)
    voiced = track.f0_hz[track.voiced]
    assert track.voiced.mean() > 0.9
    assert abs(float(np.median(voiced)) - f0) < 0.005 * f0
    assert np.array_equal(np.nan_to_num(track.f0_hz), praat_pitch(samples, RATE, PraatSettings()))


def test_pitch_settings_are_passed_to_praat_by_name():
    samples = voiced_tone(150.0, 1.0)
    settings = PraatSettings(pitch_floor_hz=100.0, pitch_ceiling_hz=300.0, time_step_s=0.005)
    track = pitch_track(samples, RATE, settings)
    assert np.allclose(np.diff(track.times), 0.005)
    assert np.array_equal(np.nan_to_num(track.f0_hz), praat_pitch(samples, RATE, settings))
    # a ceiling under the tone's F0 cannot find it
    below = pitch_track(samples, RATE, PraatSettings(pitch_floor_hz=60.0, pitch_ceiling_hz=120.0))
    assert not np.any(np.abs(below.f0_hz[below.voiced] - 150.0) < 5.0)


def test_silence_is_unvoiced():
    track = pitch_track(np.zeros(RATE, np.float32), RATE)
    assert not track.voiced.any()


@pytest.mark.parametrize("amplitude", [0.05, 0.3])
def test_intensity_of_a_sine_is_its_power_in_db_and_equals_praat(amplitude):
    t = np.arange(RATE) / RATE
    samples = (amplitude * np.sin(2 * np.pi * 440.0 * t)).astype(np.float32)
    track = intensity_track(samples, RATE)
    expected = 10 * np.log10(np.mean(samples.astype(np.float64) ** 2) / 4e-10)  # dB re 2e-5 Pa, from numpy
    middle = track.db[(track.times > 0.2) & (track.times < 0.8)]
    assert np.max(np.abs(middle - expected)) < 0.05
    praat = parselmouth.Sound(samples.astype(np.float64), RATE).to_intensity(minimum_pitch=100.0)
    assert np.array_equal(track.db, praat.values[0])


def test_energy_mean_averages_power_not_decibels():
    assert energy_mean_db(np.array([60.0, 70.0])) == pytest.approx(10 * np.log10((1e6 + 1e7) / 2), abs=1e-9)


def test_measures_inside_speech_intervals_only_count_that_speech():
    samples = np.concatenate([voiced_tone(150.0, 1.0), voiced_tone(300.0, 1.0)])
    first = acoustic_measures(samples, RATE, CueSettings(egemaps=False), speech=[(0.0, 1.0)])
    second = acoustic_measures(samples, RATE, CueSettings(egemaps=False), speech=[(1.0, 2.0)])
    assert abs(first["pitch_median_hz"] - 150.0) < 1.5
    assert abs(second["pitch_median_hz"] - 300.0) < 3.0
    assert first["pitch_range_st"] < 1.0


@pytest.mark.parametrize("voice", ["whisper/id_901_whisper_work_neutral.wav", "sad/id_903_sad_school_target.wav",
                                   "fast/id_902_fast_school_alternative.wav"])
def test_the_sample_voices_decoded_by_thinslice_give_praat_s_values_for_the_file(voice):
    path = SAMPLE_VOICES / voice
    if not path.exists():
        pytest.skip("bundled sample not present")
    audio = decode_segment(path, 0.0, None)
    ours_pitch = pitch_track(audio.samples, audio.sample_rate)
    ours_intensity = intensity_track(audio.samples, audio.sample_rate)
    sound = parselmouth.Sound(str(path))  # Praat reads the file itself
    praat = sound.to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    assert np.allclose(np.nan_to_num(ours_pitch.f0_hz), praat.selected_array["frequency"], atol=1e-6)
    assert np.allclose(ours_pitch.times, praat.xs(), atol=1e-12)
    assert np.allclose(ours_intensity.db, sound.to_intensity(minimum_pitch=100.0).values[0], atol=1e-6)
    assert ours_pitch.voiced.any()


@pytest.mark.parametrize("voice", ["whisper/id_901_whisper_work_neutral.wav", "sad/id_903_sad_school_target.wav",
                                   "fast/id_902_fast_school_alternative.wav"])
def test_pitch_range_and_the_praat_intensity_sd_equal_praats_queries(voice):
    from parselmouth.praat import call

    path = SAMPLE_VOICES / voice
    if not path.exists():
        pytest.skip("bundled sample not present")
    audio = decode_segment(path, 0.0, None)
    measured = acoustic_measures(audio.samples, audio.sample_rate, CueSettings(egemaps=False))
    pitch = parselmouth.Sound(str(path)).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    praat = [call(pitch, "Get quantile", 0, 0, q, "semitones re 100 Hz") for q in (0.05, 0.95)]
    assert measured["pitch_range_st"] == pytest.approx(praat[1] - praat[0], abs=1e-9)
    intensity = parselmouth.Sound(str(path)).to_intensity(minimum_pitch=100.0)
    assert measured["intensity_sd_praat_db"] == pytest.approx(call(intensity, "Get standard deviation", 0, 0), abs=1e-9)
    assert measured["intensity_sd_db"] < measured["intensity_sd_praat_db"]  # silence left out of the other
    # few voiced frames (a gliding tone cut short), where Praat's quantile runs past the last value: still Praat's
    for seconds in (0.06, 0.07, 0.09, 0.12, 0.2):
        t = np.arange(int(seconds * RATE)) / RATE
        glide = (0.3 * np.sin(2 * np.pi * np.cumsum(np.linspace(120.0, 180.0, len(t))) / RATE)).astype(np.float64)
        short = parselmouth.Sound(glide, RATE).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
        frequencies = short.selected_array["frequency"]
        st = semitones(frequencies[frequencies > 0])
        assert len(st) >= 2
        for q in (0.01, 0.05, 0.5, 0.95, 0.99):
            expected = call(short, "Get quantile", 0, 0, q, "semitones re 100 Hz")
            assert praat_quantile(st, q) == pytest.approx(expected, abs=1e-9), (seconds, len(st), q)
    assert math.isnan(praat_quantile(np.array([]), 0.5))


def test_egemaps_gives_the_88_functionals_when_opensmile_is_installed():
    pytest.importorskip("opensmile")
    values = egemaps_measures(voiced_tone(200.0, 1.5), RATE)
    assert len(values) == 88
    f0 = values["egemaps:F0semitoneFrom27.5Hz_sma3nz_amean"]
    assert abs(f0 - 12 * np.log2(200.0 / 27.5)) < 0.5  # openSMILE's F0 in semitones re 27.5 Hz


def test_egemaps_of_a_participant_is_taken_on_their_own_speech():
    pytest.importorskip("opensmile")
    from app.cues.measures import speech_samples
    samples = np.concatenate([voiced_tone(150.0, 1.0), voiced_tone(300.0, 1.0)])
    own = speech_samples(samples, RATE, [(0.0, 1.0)])
    assert len(own) == RATE
    f0 = egemaps_measures(own, RATE)["egemaps:F0semitoneFrom27.5Hz_sma3nz_amean"]
    assert abs(f0 - 12 * np.log2(150.0 / 27.5)) < 0.5
