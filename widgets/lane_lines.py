"""The registered per-voice line tracks of the analysis tracks view (pitch, intensity, and any added after
them): how each is named, laid out and drawn. The view iterates `LANE_LINES` for its Tracks menu, its rows,
what shows by default, the remembered choice per voice and the drawing; the values come from the Qt-free
`LineKind` each names (`app.cues.track_kinds`), computed on the analysis workers.

A line is drawn in a row of its own (on its `value_range`, with a dot per frame when `dots`), or, when its
voice shows a spectrogram, over it as Praat's sound editor draws pitch and intensity: its `value_range`
spread over the row's whole height, named by `scale_label` in the row's name column in its colour. The
first in the list is drawn on top.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.cues.track_kinds import INTENSITY, PITCH, LineKind


@dataclass(frozen=True)
class Scales:
    """The view's parameters a line's scale may follow (the spin boxes of its strip)."""

    pitch_floor_hz: float
    pitch_ceiling_hz: float
    dynamic_range_db: float


@dataclass(frozen=True)
class LaneLine:
    """A per-voice track drawn as a line over its lane; see the module docstring."""

    kind: LineKind
    title: str  # in the Tracks menu
    unit: str  # in the name column of its own row
    colour: str
    row_height: int  # its row's share of the height given
    row_min_height: int  # the least that stays legible
    # (low, high) of the values for the row (None: nothing to scale by yet) and the padding of its own row
    value_range: Callable[[np.ndarray, Scales], tuple[float, float] | None]
    scale_label: Callable[[Scales], str]
    shown_by_default: bool = False  # for the first voice
    padding: float = 0.0
    dots: bool = False  # a dot per frame in its own row
    casing: bool = False  # over a spectrogram, a light casing under the line keeps it legible
    clip: bool = False  # over a spectrogram, values outside the range are held at its edges

    @property
    def name(self) -> str:
        return self.kind.name


def _pitch_range(_f0: np.ndarray, scales: Scales) -> tuple[float, float]:
    return scales.pitch_floor_hz, scales.pitch_ceiling_hz


def loudest_range(values: np.ndarray, scales: Scales) -> tuple[float, float] | None:
    """The dynamic range under the loudest value, with 2 above it (as Praat's editor scales intensity)."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return None
    top = float(finite.max())
    return top - scales.dynamic_range_db, top + 2.0


PITCH_LINE = LaneLine(PITCH, "pitch (F0)", "F0 Hz", "#1f6fd1", 70, 36, _pitch_range,
                      lambda s: f"F0 {s.pitch_floor_hz:g}-{s.pitch_ceiling_hz:g} Hz", shown_by_default=True,
                      padding=0.02, dots=True, casing=True)
INTENSITY_LINE = LaneLine(INTENSITY, "intensity", "dB", "#c98a06", 68, 34, loudest_range, lambda _s: "dB",
                          clip=True)
LANE_LINES: list[LaneLine] = [PITCH_LINE, INTENSITY_LINE]


def register(line: LaneLine) -> None:
    """Add a line track to the view (one of the same name is replaced); views made after it show it."""
    unregister(line.name)
    LANE_LINES.append(line)


def unregister(name: str) -> None:
    """Take the line track of that name out of the list, if it is there."""
    LANE_LINES[:] = [line for line in LANE_LINES if line.name != name]


def lane_line(name: str) -> LaneLine | None:
    """The registered line track of that name, if any."""
    return next((line for line in LANE_LINES if line.name == name), None)
