"""Where a label edge may snap while Shift is held: the voicing onsets and offsets of Praat's pitch track and
the silence boundaries of its intensity contour, and the rules that pick the nearest one within reach.

Voicing: a boundary lies halfway between a voiced frame and an unvoiced neighbour; Praat's frames are
centred on their times, so that is the edge the two frames share.

Intensity: Praat's "Intensity: To TextGrid (silences)..." with its standard settings (`SilenceSettings`):
frames more than 25 dB below the contour's maximum (parabolically interpolated, as Praat finds it) are
silent; sounding stretches shorter than 0.05 s are first given to the stretch before them, then silences
shorter than 0.1 s are; a boundary lies at the time of the first frame of each stretch left, where Praat
puts it. Praat runs this rule on a TextGrid, one interval at a time; here each step is one pass over a
list of stretches, to the same boundaries, so the work grows with the frames (an hour's is still quick).

Every function here takes tracks already computed (on a worker, by `app.cues.tracks`) and is cheap: a
few numpy passes over the frames.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # snapping a label edge needs no Praat: the window shows before Praat is loaded
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


def _cut_short(stretches: list[list], silent: bool, minimum_s: float) -> list[list]:
    """Praat's "cut intervals shorter than a minimum", in one pass: each too-short stretch of the kind goes
    to the stretch before it (the first one, to the one after it); at least one stretch always stays."""
    kept: list[list] = []
    carried: float | None = None  # the start of a cut first stretch, which the next one takes
    for i, stretch in enumerate(stretches):
        if carried is not None:
            stretch[0], carried = carried, None
        start, end, kind = stretch
        if kind == silent and end - start < minimum_s and len(kept) + len(stretches) - i > 1:
            if kept:
                kept[-1][1] = end
            else:
                carried = start
        else:
            kept.append(stretch)
    return kept


def _join_alike(stretches: list[list], silent: bool) -> list[list]:
    """Neighbouring stretches that are both of the kind become one."""
    joined: list[list] = []
    for stretch in stretches:
        if joined and joined[-1][2] == silent and stretch[2] == silent:
            joined[-1][1] = stretch[1]
        else:
            joined.append(stretch)
    return joined


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
    stretches = _cut_short(stretches, False, settings.min_sounding_s)
    stretches = _join_alike(stretches, True)
    stretches = _cut_short(stretches, True, settings.min_silent_s)
    stretches = _join_alike(stretches, False)
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
