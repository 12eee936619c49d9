"""Where a label edge may snap with Shift: the voicing boundaries of a generated tone sit where its voiced
spans start and end and where Praat's own pitch changes from voiced to unvoiced; the silence boundaries
are Praat's own "To TextGrid (silences)"; and an edge snaps only to a boundary within reach."""
from __future__ import annotations

import numpy as np
import parselmouth
import pytest
from parselmouth.praat import call

from app.cues.acoustics import PraatSettings, intensity_track, pitch_track
from app.cues.boundaries import (SilenceSettings, label_boundaries, silence_boundaries, snap_shift, snap_time,
                                 voicing_boundaries)

RATE = 16000
VOICED = [(0.5, 1.2), (1.9, 2.5)]  # a 150 Hz vowel-like tone
NOISE = (1.2, 1.5)                 # a fricative-like hiss after the first: sounding, not voiced


def clip(seed: int = 7) -> np.ndarray:
    t = np.arange(int(3.0 * RATE)) / RATE
    tone = sum(np.sin(2 * np.pi * 150.0 * k * t) / k for k in range(1, 6))
    tone = 0.2 * tone / np.max(np.abs(tone))
    hiss = np.random.default_rng(seed).uniform(-0.1, 0.1, len(t))
    voiced = np.zeros_like(t, dtype=bool)
    for a, b in VOICED:
        voiced |= (t >= a) & (t < b)
    return np.where(voiced, tone, 0.0) + np.where((t >= NOISE[0]) & (t < NOISE[1]), hiss, 0.0)


def praat_silences(samples: np.ndarray, settings: SilenceSettings) -> list[float]:
    intensity = parselmouth.Sound(samples, RATE).to_intensity(minimum_pitch=100.0, subtract_mean=True)
    grid = call(intensity, "To TextGrid (silences)", settings.threshold_db, settings.min_silent_s,
                settings.min_sounding_s, "silent", "sounding")
    count = call(grid, "Get number of intervals", 1)
    return [call(grid, "Get start time of interval", 1, k) for k in range(2, count + 1)]


def test_voicing_boundaries_are_the_tones_spans_and_praats_own_voicing():
    samples = clip()
    found = voicing_boundaries(pitch_track(samples, RATE))
    # within one 10 ms frame of the generated spans; the hiss after the first vowel is not voiced
    assert found == pytest.approx([t for span in VOICED for t in span], abs=0.01)
    # Praat's own Pitch, asked at each side of a boundary, is voiced on one side and unvoiced on the other
    pitch = parselmouth.Sound(samples, RATE).to_pitch_ac(pitch_floor=75.0, pitch_ceiling=600.0)
    for k, boundary in enumerate(found):
        before, after = (call(pitch, "Get value at time", boundary + d, "Hertz", "nearest") for d in (-0.004, 0.004))
        onset = k % 2 == 0
        assert np.isnan(before) == onset and np.isnan(after) == (not onset), boundary
    # and Praat's voiced/unvoiced TextGrid from its pulses puts them within a frame of the same times
    pulses = call([parselmouth.Sound(samples, RATE), pitch], "To PointProcess (cc)")
    vuv = call(pulses, "To TextGrid (vuv)", 0.02, 0.01)
    edges = [call(vuv, "Get start time of interval", 1, k) for k in range(2, call(vuv, "Get number of intervals", 1) + 1)]
    assert found == pytest.approx(edges, abs=0.01)


def test_voicing_follows_praats_pitch_settings():
    # a floor above the tone's F0 finds no voicing at all, so nothing to snap to
    high_floor = PraatSettings(pitch_floor_hz=200.0, pitch_ceiling_hz=600.0)
    assert len(voicing_boundaries(pitch_track(clip(), RATE, high_floor))) == 0


@pytest.mark.parametrize("settings", [SilenceSettings(), SilenceSettings(-20.0, 0.05, 0.08)])
def test_silence_boundaries_are_praats_own(settings):
    samples = clip()
    found = silence_boundaries(intensity_track(samples, RATE), settings)
    assert found.tolist() == pytest.approx(praat_silences(samples, settings), abs=1e-9)


def test_silence_boundaries_match_praat_on_bursts_short_pauses_and_blips():
    """Random bursts, whispers and pauses of 10-400 ms: the minimum durations decide most boundaries."""
    rng = np.random.default_rng(3)
    for _ in range(12):
        n = int(rng.uniform(1.0, 4.0) * RATE)
        envelope = np.zeros(n)
        at = 0
        while at < n:
            length = int(rng.uniform(0.01, 0.4) * RATE)
            envelope[at:at + length] = rng.choice([0.0, 0.001, 0.05, 0.3])
            at += length
        samples = rng.normal(size=n) * envelope
        found = silence_boundaries(intensity_track(samples, RATE))
        assert found.tolist() == pytest.approx(praat_silences(samples, SilenceSettings()), abs=1e-9)


def test_the_hiss_is_sounding_so_silence_and_voicing_give_different_boundaries():
    samples = clip()
    both = label_boundaries(pitch_track(samples, RATE), intensity_track(samples, RATE))
    silences = silence_boundaries(intensity_track(samples, RATE))
    # silence ends before the first vowel and starts only after the hiss, 0.3 s after voicing stopped
    assert silences.tolist() == pytest.approx([0.5, 1.5, 1.9, 2.5], abs=0.03)
    assert np.all(np.diff(both) > 0) and len(both) == 8
    assert label_boundaries(None, None).tolist() == []


def test_a_time_snaps_to_the_nearest_boundary_within_reach_only():
    boundaries = np.array([0.495, 1.205, 1.52])
    assert snap_time(1.19, boundaries, 0.02) == 1.205
    assert snap_time(1.19, boundaries, 0.01) == 1.19           # out of reach: unchanged
    assert snap_time(1.37, boundaries, 0.2) == 1.52            # the nearer of two within reach
    assert snap_time(0.0, boundaries, 1.0) == 0.495
    assert snap_time(9.0, boundaries, 1.0) == 9.0
    assert snap_time(1.0, np.empty(0), 1.0) == 1.0             # tracks not computed: no snap
    assert snap_time(1.2, boundaries, 0.0) == 1.2


def test_a_moved_range_shifts_so_its_nearer_edge_lands_on_a_boundary():
    boundaries = np.array([0.495, 1.205])
    shift, edge = snap_shift(0.48, 0.98, boundaries, 0.02)     # the start is in reach
    assert (shift, edge) == (pytest.approx(0.015), "start")
    shift, edge = snap_shift(0.70, 1.21, boundaries, 0.02)     # the end is
    assert (shift, edge) == (pytest.approx(-0.005), "end")
    shift, edge = snap_shift(0.49, 1.202, boundaries, 0.02)    # both: the nearer wins
    assert (shift, edge) == (pytest.approx(0.003), "end")
    assert snap_shift(0.7, 0.9, boundaries, 0.02) == (0.0, None)
    assert snap_shift(0.48, 0.98, np.empty(0), 0.02) == (0.0, None)
