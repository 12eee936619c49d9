"""Pitch (F0) with voicing, intensity and formants, computed by Praat's own algorithms through
praat-parselmouth, with Praat's parameter names and defaults.

Times in the tracks are seconds from the start of the samples given (a stimulus's window), so they sit
on the same axis as the waveform.

Samples are mono, shape (n,), or one row per channel, shape (channels, n). Channels are handed to Praat as
they are, so a stereo recording is analysed as Praat analyses the same file (`CHANNELS` says how).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import parselmouth

PRAAT_VERSION = parselmouth.PRAAT_VERSION
PARSELMOUTH_VERSION = parselmouth.VERSION
CHANNELS = ("each audio file analysed with its channels kept, as Praat analyses a Sound of that file: pitch from "
            "the channels' autocorrelations summed, intensity as their mean power, formants of their average; "
            "eGeMAPS of their average")
# Praat's reference for intensity in dB: 2e-5 Pa.
INTENSITY_REFERENCE_PA = 2e-5


@dataclass(frozen=True)
class PraatSettings:
    """Praat's settings for "To Pitch (ac)...", "To Intensity..." and "To Formant (burg)...".

    `time_step_s` None is Praat's "0 (= auto)": 0.75 / pitch floor for pitch, 0.8 / minimum pitch / 4 for
    intensity, window length / 4 for formants. The other pitch settings keep Praat's standard values
    (15 candidates, silence threshold 0.03, voicing threshold 0.45, octave cost 0.01, octave-jump cost
    0.35, voiced/unvoiced cost 0.14)."""

    pitch_floor_hz: float = 75.0
    pitch_ceiling_hz: float = 600.0
    time_step_s: float | None = None
    intensity_minimum_pitch_hz: float = 100.0
    intensity_subtract_mean: bool = True
    max_formant_hz: float = 5500.0
    max_number_of_formants: float = 5.0
    formant_window_s: float = 0.025

    def as_dict(self) -> dict[str, float | bool | None]:
        return asdict(self)


@dataclass(frozen=True)
class PitchTrack:
    """F0 per frame in Hz (NaN where unvoiced) and Praat's voicing strength (the chosen candidate's)."""

    times: np.ndarray
    f0_hz: np.ndarray
    strength: np.ndarray

    @property
    def voiced(self) -> np.ndarray:
        return np.isfinite(self.f0_hz)


@dataclass(frozen=True)
class IntensityTrack:
    """Intensity per frame in dB re 2e-5 Pa (samples taken as Pa, as Praat does)."""

    times: np.ndarray
    db: np.ndarray


@dataclass(frozen=True)
class FormantTrack:
    """F1.. per frame in Hz (NaN where Praat found none); `hz[i]` is formant i + 1."""

    times: np.ndarray
    hz: np.ndarray


def _sound(samples: np.ndarray, rate: int) -> parselmouth.Sound:
    """A Praat Sound of mono samples, or of (channels, n) samples with one Praat channel per row."""
    return parselmouth.Sound(np.asarray(samples, dtype=np.float64), sampling_frequency=float(rate))


def pitch_track(samples: np.ndarray, rate: int, settings: PraatSettings = PraatSettings()) -> PitchTrack:
    """Praat's "To Pitch (ac)..." with the settings' floor, ceiling and time step."""
    pitch = _sound(samples, rate).to_pitch_ac(time_step=settings.time_step_s, pitch_floor=settings.pitch_floor_hz,
                                              pitch_ceiling=settings.pitch_ceiling_hz)
    chosen = pitch.selected_array
    f0 = np.where(chosen["frequency"] > 0, chosen["frequency"], np.nan)
    return PitchTrack(np.asarray(pitch.xs()), f0, np.asarray(chosen["strength"]))


def intensity_track(samples: np.ndarray, rate: int, settings: PraatSettings = PraatSettings()) -> IntensityTrack:
    """Praat's "To Intensity..." with the settings' minimum pitch, time step and mean subtraction."""
    intensity = _sound(samples, rate).to_intensity(minimum_pitch=settings.intensity_minimum_pitch_hz,
                                                   time_step=settings.time_step_s,
                                                   subtract_mean=settings.intensity_subtract_mean)
    return IntensityTrack(np.asarray(intensity.xs()), np.asarray(intensity.values[0]))


def formant_track(samples: np.ndarray, rate: int, settings: PraatSettings = PraatSettings(),
                  count: int = 3) -> FormantTrack:
    """Praat's "To Formant (burg)...": the first `count` formants per frame."""
    formant = _sound(samples, rate).to_formant_burg(time_step=settings.time_step_s,
                                                    max_number_of_formants=settings.max_number_of_formants,
                                                    maximum_formant=settings.max_formant_hz,
                                                    window_length=settings.formant_window_s)
    times = np.asarray(formant.xs())
    values = np.array([[formant.get_value_at_time(i, t) for t in times] for i in range(1, count + 1)])
    return FormantTrack(times, values.reshape(count, len(times)))


def energy_mean_db(db: np.ndarray) -> float:
    """Mean of dB values over energy, as Praat's Intensity "Get mean..." (averaging method energy)."""
    finite = db[np.isfinite(db)]
    if len(finite) == 0:
        return float("nan")
    return float(10.0 * np.log10(np.mean(10.0 ** (finite / 10.0))))


def praat_quantile(values: np.ndarray, quantile: float) -> float:
    """The quantile as Praat's "Get quantile..." takes it (NUMquantile): sorted values a_1..a_n, place
    q·n + 0.5, linear between the two values around it, the end pairs extended past the first and last
    value rather than clamped to them; NaN for no values."""
    a = np.sort(np.asarray(values, dtype=np.float64))
    n = len(a)
    if n == 0:
        return float("nan")
    if n == 1:
        return float(a[0])
    place = quantile * n + 0.5
    left = min(max(int(np.floor(place)), 1), n - 1)
    if a[left] == a[left - 1]:
        return float(a[left - 1])
    return float(a[left - 1] + (place - left) * (a[left] - a[left - 1]))


def semitones(hz: np.ndarray, reference_hz: float = 100.0) -> np.ndarray:
    """Frequencies in semitones re `reference_hz` (Praat's "semitones re 100 Hz")."""
    return 12.0 * np.log2(np.asarray(hz, dtype=np.float64) / reference_hz)
