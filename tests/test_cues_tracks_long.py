"""A long recording's tracks are computed in chunks that join into Praat's values for the whole."""
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
