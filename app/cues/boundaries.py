"""Where a label edge may snap while Shift is held: the voicing onsets and offsets of Praat's pitch track and
the silence boundaries of its intensity contour, and the rules that pick the nearest one within reach.

Voicing: a boundary lies halfway between a voiced frame and an unvoiced neighbour; Praat's frames are
centred on their times, so that is the edge the two frames share.

Intensity: Praat's "Intensity: To TextGrid (silences)..." with its standard settings (`SilenceSettings`):
frames more than 25 dB below the contour's maximum (parabolically interpolated, as Praat finds it) are
silent; sounding stretches shorter than 0.05 s are first given to the stretch before them, then silences
shorter than 0.1 s are; a boundary lies at the time of the first frame of each stretch left, where Praat
puts it. Praat runs this rule one step at a time on a TextGrid; here it runs on a list of stretches, to
the same boundaries.

Every function here takes tracks already computed (on a worker, by `app.cues.tracks`) and is cheap: a
few numpy passes over the frames.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.cues.acoustics import IntensityTrack, PitchTrack

# Praat's floor for the intensity of digital silence; a frame with no finite value counts as that quiet
SILENT_DB = -300.0


@dataclass(frozen=True)
class SilenceSettings:
    """The settings of Praat's "Intensity: To TextGrid (silences)...", with its standard values."""

    threshold_db: float = -25.0      # "Silence threshold (dB)", relative to the maximum
    min_silent_s: float = 0.1        # "Minimum silent interval duration (s)"
    min_sounding_s: float = 0.05     # "Minimum sounding interval duration (s)"


def voicing_boundaries(pitch: PitchTrack) -> np.ndarray:
    """Voicing onsets and offsets of a pitch track, in seconds, ascending."""
    voiced = pitch.voiced
    change = np.nonzero(voiced[1:] != voiced[:-1])[0]
    return (pitch.times[change] + pitch.times[change + 1]) / 2.0


def _parabolic_peak(values: np.ndarray, highest: bool) -> float:
    """The maximum (or minimum) of sampled values, refined by the parabola through it and its neighbours."""
    k = int(np.argmax(values) if highest else np.argmin(values))
    if 0 < k < len(values) - 1:
        a, b, c = (float(v) for v in values[k - 1:k + 2])
        curvature = a - 2.0 * b + c
        if curvature != 0.0:
            return b - 0.125 * (c - a) ** 2 / curvature
    return float(values[k])


def _cut_short(stretches: list[list], silent: bool, minimum_s: float) -> None:
    """Praat's "cut intervals shorter than a minimum": each too-short stretch of the kind goes to the
    stretch before it (the first one, to the one after it); at least one stretch always stays."""
    i = 0
    while i < len(stretches):
        start, end, kind = stretches[i]
        if kind == silent and end - start < minimum_s and len(stretches) > 1:
            del stretches[i]
            if i == 0:
                stretches[0][0] = start
            else:
                stretches[i - 1][1] = end
        else:
            i += 1


def _join_alike(stretches: list[list], silent: bool) -> None:
    """Neighbouring stretches that are both of the kind become one."""
    i = 0
    while i < len(stretches) - 1:
        if stretches[i][2] == silent and stretches[i + 1][2] == silent:
            stretches[i + 1][0] = stretches[i][0]
            del stretches[i]
        else:
            i += 1


def silence_boundaries(intensity: IntensityTrack, settings: SilenceSettings = SilenceSettings(),
                       domain: tuple[float, float] | None = None) -> np.ndarray:
    """Where silences start and end in an intensity contour, in seconds, ascending (see the module docstring).

    `domain` is the analysed stretch of sound; by default it starts at 0 and ends as far after the last
    frame as the first frame is after 0, which is how Praat centres its frames in the sound."""
    times = intensity.times
    db = np.where(np.isfinite(intensity.db), intensity.db, SILENT_DB)
    if len(db) < 2:
        return np.empty(0)
    start, end = domain if domain is not None else (0.0, float(times[0] + times[-1]))
    threshold = _parabolic_peak(db, True) - abs(settings.threshold_db)
    if settings.min_silent_s > end - start or threshold < _parabolic_peak(db, False):
        return np.empty(0)
    silent = db < threshold
    change = np.nonzero(silent[1:] != silent[:-1])[0] + 1  # the first frame of each new stretch
    edges = np.concatenate(([start], times[change], [end])).tolist()
    kinds = np.concatenate((silent[:1], silent[change])).tolist()
    stretches = [[a, b, kind] for a, b, kind in zip(edges[:-1], edges[1:], kinds)]
    # sounding blips between silences go first, then short silences, as Praat does: the other order
    # would let a cough split a pause
    _cut_short(stretches, False, settings.min_sounding_s)
    _join_alike(stretches, True)
    _cut_short(stretches, True, settings.min_silent_s)
    _join_alike(stretches, False)
    return np.array([s[0] for s in stretches[1:]], dtype=np.float64)


def label_boundaries(pitch: PitchTrack | None, intensity: IntensityTrack | None,
                     settings: SilenceSettings = SilenceSettings()) -> np.ndarray:
    """Every time a label edge may snap to for one voice: voicing and silence boundaries, ascending, once each."""
    parts = [voicing_boundaries(pitch) if pitch is not None else np.empty(0),
             silence_boundaries(intensity, settings) if intensity is not None else np.empty(0)]
    return np.unique(np.concatenate(parts))


def nearest_boundary(t: float, boundaries: np.ndarray, max_distance_s: float) -> float | None:
    """The boundary nearest `t` if it is at most `max_distance_s` away, else None. `boundaries` ascend."""
    if len(boundaries) == 0 or not max_distance_s > 0.0:
        return None
    i = int(np.searchsorted(boundaries, t))
    near = boundaries[max(0, i - 1):i + 1]
    best = float(near[int(np.argmin(np.abs(near - t)))])
    return best if abs(best - t) <= max_distance_s else None


def snap_time(t: float, boundaries: np.ndarray, max_distance_s: float) -> float:
    """`t` moved to the nearest boundary within `max_distance_s`, or `t` itself when none is that near."""
    found = nearest_boundary(t, boundaries, max_distance_s)
    return float(t) if found is None else found


def snap_shift(start_s: float, end_s: float, boundaries: np.ndarray,
               max_distance_s: float) -> tuple[float, str | None]:
    """How far to shift a range being moved so that whichever of its edges is nearer a boundary (within
    reach) lands on it, and which edge that is ("start" or "end"); (0.0, None) when neither is in reach."""
    best: tuple[float, str | None] = (0.0, None)
    for edge, t in (("start", start_s), ("end", end_s)):
        found = nearest_boundary(t, boundaries, max_distance_s)
        if found is not None and (best[1] is None or abs(found - t) < abs(best[0])):
            best = (found - t, edge)
    return best
