"""A stereo recording is analysed as Praat analyses the same file (parselmouth reading the WAV itself),
not as the mean of its channels: tracks frame for frame, stored cues as Praat's own queries give them."""
from __future__ import annotations

import numpy as np
import parselmouth
import pytest
import soundfile as sf
from parselmouth.praat import call

import app.cues.tracks as tracks_module
from app.cues.acoustics import intensity_track, pitch_track
from app.cues.measures import CueSettings
from app.cues.service import compute_cues
from app.cues.tracks import voice_tracks
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.media import decode_channels, decode_segment, probe
from storage.records import MediaRef
from storage.store import Store

RATE = 16000
SECONDS = 3.0


def voice(f0: float, start: float, end: float, amplitude: float = 0.2) -> np.ndarray:
    """A vowel-like tone (fundamental and four falling harmonics) between `start` and `end`, else silence."""
    t = np.arange(int(SECONDS * RATE)) / RATE
    wave = sum(np.sin(2 * np.pi * f0 * k * t + 0.3 * k) / k for k in range(1, 6))
    return np.where((t >= start) & (t < end), amplitude * wave / np.max(np.abs(wave)), 0.0)


def stereo_file(tmp_path, left: np.ndarray, right: np.ndarray, name: str = "stereo.wav"):
    noise = np.random.default_rng(7).normal(0, 0.002, (2, len(left)))  # no channel is digital silence
    path = tmp_path / name
    sf.write(path, (np.vstack([left, right]) + noise).T.astype(np.float32), RATE, subtype="PCM_16")
    return path


FILES = {
    "one voice in the left channel": lambda: (voice(140.0, 0.2, 2.6), np.zeros(int(SECONDS * RATE))),
    "two voices, one per channel, overlapping": lambda: (voice(130.0, 0.1, 1.7), voice(225.0, 1.2, 2.9, 0.12)),
}


@pytest.mark.parametrize("case", FILES, ids=list(FILES))
def test_tracks_of_a_stereo_file_are_praats_for_that_file_frame_for_frame(tmp_path, case):
    path = stereo_file(tmp_path, *FILES[case]())
    assert probe(path).channels == 2
    ours = voice_tracks(MediaRef("audio", path, True, 0.0, None, RATE))
    sound = parselmouth.Sound(str(path))
    assert sound.n_channels == 2
    pitch = sound.to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    assert np.array_equal(ours.pitch.times, pitch.xs())
    assert np.array_equal(np.nan_to_num(ours.pitch.f0_hz), pitch.selected_array["frequency"])
    intensity = sound.to_intensity(minimum_pitch=100.0)
    assert np.array_equal(ours.intensity.times, intensity.xs())
    assert np.allclose(ours.intensity.db, intensity.values[0], atol=1e-9)
    # what the channels' mean gave instead: a voice alone in one channel reads 3 dB quieter than Praat says
    mixed = decode_segment(path, 0.0, None).samples
    mixed_db = intensity_track(mixed, RATE).db
    loud = intensity.values[0] > intensity.values[0].max() - 10
    assert np.max(np.abs(mixed_db - intensity.values[0])[loud]) > 1.0


def test_pitch_of_two_voices_follows_praats_summed_channels_not_their_mean(tmp_path):
    path = stereo_file(tmp_path, *FILES["two voices, one per channel, overlapping"]())
    channels = decode_channels(path, 0.0, None)
    assert channels.samples.shape == (2, int(SECONDS * RATE)) and channels.sample_rate == RATE
    ours = pitch_track(channels.samples, RATE)
    mixed = pitch_track(channels.samples.mean(axis=0), RATE)
    praat = parselmouth.Sound(str(path)).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    assert np.array_equal(np.nan_to_num(ours.f0_hz), praat.selected_array["frequency"])
    assert not np.array_equal(np.nan_to_num(mixed.f0_hz), praat.selected_array["frequency"])
    # each voice is found where it speaks alone
    assert np.nanmedian(ours.f0_hz[(ours.times > 0.3) & (ours.times < 1.0)]) == pytest.approx(130.0, rel=0.01)
    assert np.nanmedian(ours.f0_hz[(ours.times > 2.0) & (ours.times < 2.8)]) == pytest.approx(225.0, rel=0.01)


def test_a_window_of_a_stereo_file_keeps_its_channels_and_its_samples(tmp_path):
    left, right = FILES["two voices, one per channel, overlapping"]()
    path = stereo_file(tmp_path, left, right)
    whole = sf.read(path, dtype="float32")[0].T
    part = decode_channels(path, 0.5, 1.25)
    assert np.array_equal(part.samples, whole[:, 8000:20000])
    assert part.duration_s == pytest.approx(0.75)
    # the same audio in a container FFmpeg decodes gives the same channels
    import av
    mka = tmp_path / "stereo.mka"
    with av.open(str(mka), "w") as out:
        stream = out.add_stream("pcm_f32le", rate=RATE, layout="stereo")
        frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(whole.T).reshape(1, -1), format="flt", layout="stereo")
        frame.sample_rate = RATE
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            out.mux(packet)
    assert probe(mka).channels == 2
    assert np.array_equal(decode_channels(mka, 0.5, 1.25).samples, part.samples)
    # playback still gets the channels' mean
    assert np.allclose(decode_segment(mka, 0.5, 1.25).samples, part.samples.mean(axis=0), atol=1e-7)


def test_long_stereo_files_are_chunked_by_all_their_samples_and_join_into_praats_tracks(tmp_path, monkeypatch):
    monkeypatch.setattr(tracks_module, "CHUNK_S", 1.0)
    # 3 s of stereo is 96 000 samples: over a bound of 60 000 though each channel alone is under it
    monkeypatch.setattr(tracks_module, "ONE_PASS_SAMPLES", 60_000)
    decoded = []
    original = tracks_module.decode_channels
    monkeypatch.setattr(tracks_module, "decode_channels",
                        lambda *args: decoded.append(args[1:3]) or original(*args))
    path = stereo_file(tmp_path, *FILES["two voices, one per channel, overlapping"]())
    ours = voice_tracks(MediaRef("audio", path, True, 0.0, None, RATE))
    assert len(decoded) == 3
    praat = parselmouth.Sound(str(path)).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    times, f0 = np.asarray(praat.xs()), praat.selected_array["frequency"]
    index = np.clip(np.searchsorted(times, ours.pitch.times - 1e-9), 0, len(times) - 1)
    close = np.abs(times[index] - ours.pitch.times) < 0.006
    assert close.mean() > 0.99
    assert np.isclose(np.nan_to_num(ours.pitch.f0_hz)[close], f0[index[close]], atol=0.5).mean() > 0.95


def test_stored_cues_of_a_stereo_recording_are_praats_queries_on_the_file(tmp_path):
    root = tmp_path / "media"
    root.mkdir()
    path = stereo_file(root, *FILES["two voices, one per channel, overlapping"]())
    plan = ImportPlan(DatasetInfo("Stereo", "friendbench", root, "generated in a test", synthetic=True), "test")
    plan.add("stimuli", [{"external_id": "s1", "kind": "dyad", "ground_truth": "familiar"}])
    plan.add("media", [{"stimulus": "s1", "role": "audio", "path": path.name, "present": True,
                        "duration_s": SECONDS, "sample_rate": RATE}])
    store = Store.open(tmp_path / "stereo.duckdb")
    try:
        write_plan(store, plan)
        [summary] = compute_cues(store, "Stereo", CueSettings(egemaps=False))
        assert summary.measured == 1 and summary.failed == ()
        stored = dict(store.cursor().execute(
            "SELECT cue, value FROM cue_measure WHERE subject = 'audio'").fetchall())
    finally:
        store.close()
    sound = parselmouth.Sound(str(path))
    pitch = sound.to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    intensity = sound.to_intensity(minimum_pitch=100.0)
    assert stored["pitch_mean_hz"] == pytest.approx(call(pitch, "Get mean", 0, 0, "Hertz"), rel=1e-12)
    assert stored["intensity_sd_praat_db"] == pytest.approx(call(intensity, "Get standard deviation", 0, 0),
                                                            rel=1e-9)
    praat_range = (call(pitch, "Get quantile", 0, 0, 0.95, "semitones re 100 Hz")
                   - call(pitch, "Get quantile", 0, 0, 0.05, "semitones re 100 Hz"))
    assert stored["pitch_range_st"] == pytest.approx(praat_range, abs=1e-9)
