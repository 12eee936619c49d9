"""Praat's analyses run in worker processes: the same values as the tracks computed in this process, a
cancel that stops the wait and leaves the pool working, and no process left once the program has ended."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from app.cues.acoustics import PraatSettings
from app.cues.boundaries import label_boundaries
from app.cues.tracks import voice_tracks
from app.cues.workers import AnalysisPool, voice_analysis
from storage.media import DecodeCancelled
from storage.records import MediaRef

ROOT = Path(__file__).resolve().parents[1]
RATE = 16000


def _voice_file(path: Path, seconds: float) -> MediaRef:
    t = np.arange(int(seconds * RATE)) / RATE
    phase = 2 * np.pi * np.cumsum(150 + 30 * np.sin(2 * np.pi * 0.3 * t)) / RATE
    wave = sum(np.sin(k * phase) / k for k in range(1, 6)) * (np.sin(2 * np.pi * 0.8 * t) > -0.3)
    sf.write(path, (0.2 * wave).astype(np.float32), RATE, subtype="PCM_16")
    return MediaRef("audio", path, True, 0.0, seconds, RATE)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(a, b, equal_nan=True)


def test_a_workers_tracks_and_boundaries_are_those_computed_here(tmp_path):
    ref = _voice_file(tmp_path / "voice.wav", 6.0)
    settings = PraatSettings(pitch_floor_hz=90.0)
    tracks, boundaries = voice_analysis(ref, settings, formants=True)
    here = voice_tracks(ref, settings, formants=True)
    assert np.isfinite(tracks.pitch.f0_hz).sum() > 100  # the voice was found, not an empty track
    for ours, theirs in ((tracks.pitch.times, here.pitch.times), (tracks.pitch.f0_hz, here.pitch.f0_hz),
                         (tracks.pitch.strength, here.pitch.strength), (tracks.intensity.db, here.intensity.db),
                         (tracks.formants.hz, here.formants.hz)):
        assert _same(ours, theirs)
    assert _same(boundaries, label_boundaries(here.pitch, here.intensity))


def test_a_cancelled_analysis_stops_the_wait_and_the_pool_keeps_working(tmp_path):
    ref = _voice_file(tmp_path / "voice.wav", 30.0)
    pool = AnalysisPool(workers=1)
    try:
        asked = []

        def cancel_once_asked() -> bool:
            asked.append(1)
            return True

        with pytest.raises(DecodeCancelled):
            pool.run(voice_tracks, ref, PraatSettings(), False, should_cancel=cancel_once_asked)
        assert asked  # the caller's token was heard
        # the one worker is free again for the next stimulus and answers it right
        tracks = pool.run(voice_tracks, ref, PraatSettings(), False)
        assert _same(tracks.pitch.f0_hz, voice_tracks(ref).pitch.f0_hz)
    finally:
        pool.shutdown()
    with pytest.raises(DecodeCancelled):  # a pool shut down takes no more work
        pool.run(voice_tracks, ref)


def _group_members(group: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended while we looked
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def test_no_analysis_process_outlives_the_program(tmp_path):
    ref = _voice_file(tmp_path / "voice.wav", 20.0)
    script = tmp_path / "analyse.py"
    # one analysis finished, one left running when the program ends
    script.write_text(textwrap.dedent(f"""
        import sys, threading
        sys.path.insert(0, {str(ROOT)!r})
        from pathlib import Path
        from app.cues.workers import voice_analysis
        from storage.records import MediaRef

        if __name__ == "__main__":
            ref = MediaRef("audio", Path({str(ref.path)!r}), True, 0.0, 20.0, {RATE})
            print(len(voice_analysis(ref)[0].pitch.times), flush=True)
            threading.Thread(target=voice_analysis, args=(ref,), daemon=True).start()
    """))
    program = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True, cwd=tmp_path)
    out, err = program.communicate(timeout=120)
    assert program.returncode == 0, err
    assert int(out.split()[0]) > 100
    # the program led a session of its own, so everything it started is in its process group
    for _ in range(100):
        if not _group_members(program.pid):
            break
        time.sleep(0.1)
    assert _group_members(program.pid) == []
