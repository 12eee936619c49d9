"""The per-voice tracks drawn as a line over a lane (pitch, intensity, and any registered after them): for
each its name and the Qt-free analysis that computes its values from a voice's samples with `PraatSettings`.

A `LineKind`'s `analyse(samples, rate, settings)` returns a frozen dataclass of arrays with a `times` field
(seconds from the window's start) and one value per frame in the field named by `values`; other arrays of a
value per frame (as pitch's voicing strength) ride along. It runs in the analysis worker processes, so it
must be a module-level function (it is pickled by name). The view's registration (`widgets.lane_lines`) says
how each is drawn. Praat is imported by the analyses themselves, not by this list, so the window starts
without it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from app.cues.acoustics import PraatSettings


@dataclass(frozen=True)
class Line:
    """A value per frame: `times` in seconds and `values` (NaN where there is none)."""

    times: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class LineKind:
    """A per-voice track of one value per frame; see the module docstring."""

    name: str
    analyse: Callable[[np.ndarray, int, PraatSettings], Any]
    values: str = "values"

    def line(self, track: Any) -> Line:
        """The (times, values) to draw of what `analyse` returned."""
        return Line(np.asarray(track.times), np.asarray(getattr(track, self.values)))


def _pitch(samples: np.ndarray, rate: int, settings: PraatSettings) -> Any:
    from app.cues.acoustics import pitch_track

    return pitch_track(samples, rate, settings)


def _intensity(samples: np.ndarray, rate: int, settings: PraatSettings) -> Any:
    from app.cues.acoustics import intensity_track

    return intensity_track(samples, rate, settings)


PITCH = LineKind("pitch", _pitch, "f0_hz")  # Praat's "To Pitch (ac)...": F0, NaN where unvoiced
INTENSITY = LineKind("intensity", _intensity, "db")  # Praat's "To Intensity...": dB re 2e-5 Pa
# always analysed: the label boundaries (app.cues.boundaries) are found in them
PRAAT_LINES = (PITCH, INTENSITY)
