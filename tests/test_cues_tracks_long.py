"""A recording's tracks are Praat's for the file: in one pass up to ONE_PASS_SAMPLES (tested on 5 minutes,
frame for frame), and beyond it in chunks that join into nearly the whole file's values."""
from __future__ import annotations

import numpy as np
import parselmouth
import soundfile as sf

import app.cues.tracks as tracks_module
from app.cues.acoustics import PraatSettings
from app.cues.tracks import voice_tracks
from storage.records import MediaRef

RATE = 8000


def test_chunks_join_into_the_whole_files_pitch_and_intensity(tmp_path, monkeypatch):
    monkeypatch.setattr(tracks_module, "CHUNK_S", 4.0)  # a 13 s file in four chunks, as an hour in thirty
    monkeypatch.setattr(tracks_module, "ONE_PASS_SAMPLES", 4 * RATE)
    t = np.arange(13 * RATE) / RATE
    f0 = 150 + 30 * np.sin(2 * np.pi * 0.2 * t)
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    wave = sum(np.sin(k * phase) / k for k in range(1, 6)) * (np.sin(2 * np.pi * 0.7 * t) > -0.3)
    path = tmp_path / "long.wav"
    sf.write(path, (0.2 * wave).astype(np.float32), RATE, subtype="FLOAT")
    settings = PraatSettings(time_step_s=0.01)
    ours = voice_tracks(MediaRef("audio", path, True, 0.0, None, RATE), settings)
    sound = parselmouth.Sound(str(path))
    praat = sound.to_pitch_ac(time_step=0.01, pitch_floor=75.0, pitch_ceiling=600.0)
    whole_times, whole_f0 = np.asarray(praat.xs()), praat.selected_array["frequency"]
    assert np.all(np.diff(ours.pitch.times) > 0)
    # every chunk frame sits on the whole file's frame grid and has the same F0 (voicing decisions included)
    index = np.searchsorted(whole_times, ours.pitch.times - 1e-9)
    close = np.abs(whole_times[np.clip(index, 0, len(whole_times) - 1)] - ours.pitch.times) < 0.006
    assert close.mean() > 0.99
    same = np.isclose(np.nan_to_num(ours.pitch.f0_hz)[close], whole_f0[index[close]], atol=0.5)
    assert same.mean() > 0.97
    intensity = sound.to_intensity(minimum_pitch=100.0, time_step=0.01)
    assert abs(np.nanmedian(ours.intensity.db) - np.median(intensity.values[0])) < 0.5


def test_a_five_minute_file_is_one_praat_pass_frame_for_frame(tmp_path):
    rate = 16000
    t = np.arange(300 * rate) / rate
    f0 = 140 + 40 * np.sin(2 * np.pi * 0.05 * t)
    phase = 2 * np.pi * np.cumsum(f0) / rate
    bursts = np.sin(2 * np.pi * 0.9 * t) > -0.2  # syllables and silences: voicing flips hundreds of times
    wave = sum(np.sin(k * phase) / k for k in range(1, 6)) * bursts
    noise = np.random.default_rng(2).normal(0, 0.003, len(t))
    path = tmp_path / "five_minutes.wav"
    sf.write(path, (0.2 * wave + noise).astype(np.float32), rate, subtype="PCM_16")
    assert 300 * rate <= tracks_module.ONE_PASS_SAMPLES
    ours = voice_tracks(MediaRef("audio", path, True, 0.0, None, rate))
    sound = parselmouth.Sound(str(path))
    praat = sound.to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    assert np.array_equal(ours.pitch.times, praat.xs())
    assert np.allclose(np.nan_to_num(ours.pitch.f0_hz), praat.selected_array["frequency"], atol=1e-6)
    intensity = sound.to_intensity(minimum_pitch=100.0)
    assert np.array_equal(ours.intensity.times, intensity.xs())
    assert np.allclose(ours.intensity.db, intensity.values[0], atol=1e-6)
