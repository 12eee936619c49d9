"""What the analysis tracks draw for one stimulus: each voice's pitch and intensity (and formants when
asked) on the stimulus's time axis, and the conversation's floors, gaps, overlaps and backchannels.

Called on a worker; every function takes `should_cancel` and stops between steps when it turns True.
A file's channels are kept and handed to Praat as they are (`app.cues.acoustics`), so a stereo recording's
tracks are Praat's for the same file, not for the mean of its channels.
A recording of up to ONE_PASS_SAMPLES samples over all its channels (8 minutes of mono at 48 kHz, 4 of
stereo; 25 of mono at 16 kHz) is analysed in one Praat pass, so its tracks are Praat's for the file frame
for frame. A longer one is analysed in chunks of
CHUNK_S (each decoded with a margin on both sides so Praat's windows at a chunk's edge see real signal),
so an hour never sits in memory as float64 at once and a switch to another stimulus stops the work
within a chunk; each chunk is a Praat pass of its own, so its frames are centred in the chunk and its
voicing thresholds are relative to the chunk's peak: there the tracks can differ from one pass over the
whole file by a frame's offset and, near silence, by a voicing decision.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.cues.acoustics import (FormantTrack, IntensityTrack, PitchTrack, PraatSettings, formant_track,
                                intensity_track, pitch_track)
from app.cues.conversation import Conversation, ConversationSettings, TimedWord, analyse
from storage.media import DecodeCancelled, decode_channels, probe
from storage.records import MediaRef

ONE_PASS_SAMPLES = 24_000_000
CHUNK_S = 120.0
MARGIN_S = 1.0


@dataclass(frozen=True)
class VoiceTracks:
    pitch: PitchTrack
    intensity: IntensityTrack
    formants: FormantTrack | None


def _analyse(samples: np.ndarray, rate: int, settings: PraatSettings, formants: bool,
             should_cancel: Callable[[], bool]) -> VoiceTracks:
    if should_cancel():
        raise DecodeCancelled()
    pitch = pitch_track(samples, rate, settings)
    if should_cancel():
        raise DecodeCancelled()
    intensity = intensity_track(samples, rate, settings)
    found = formant_track(samples, rate, settings) if formants and not should_cancel() else None
    return VoiceTracks(pitch, intensity, found)


def _shifted(tracks: VoiceTracks, offset: float, lo: float, hi: float) -> VoiceTracks:
    """The frames of a chunk's tracks whose times (after adding `offset`) fall in [lo, hi)."""
    def keep(times: np.ndarray) -> np.ndarray:
        t = times + offset
        return (t >= lo) & (t < hi)

    p, i, f = tracks.pitch, tracks.intensity, tracks.formants
    kp, ki = keep(p.times), keep(i.times)
    formants = None if f is None else FormantTrack(f.times[keep(f.times)] + offset, f.hz[:, keep(f.times)])
    return VoiceTracks(PitchTrack(p.times[kp] + offset, p.f0_hz[kp], p.strength[kp]),
                       IntensityTrack(i.times[ki] + offset, i.db[ki]), formants)


def _joined(parts: list[VoiceTracks]) -> VoiceTracks:
    pitch = PitchTrack(*(np.concatenate([getattr(p.pitch, n) for p in parts]) for n in ("times", "f0_hz", "strength")))
    intensity = IntensityTrack(*(np.concatenate([getattr(p.intensity, n) for p in parts]) for n in ("times", "db")))
    formants = None
    if all(p.formants is not None for p in parts):
        formants = FormantTrack(np.concatenate([p.formants.times for p in parts]),
                                np.concatenate([p.formants.hz for p in parts], axis=1))
    return VoiceTracks(pitch, intensity, formants)


def voice_tracks(media: MediaRef, settings: PraatSettings = PraatSettings(), formants: bool = False,
                 should_cancel: Callable[[], bool] = lambda: False) -> VoiceTracks:
    """Praat's pitch, intensity (and formant) analyses of the stimulus's window of `media`, with times from
    the window's start."""
    info = probe(media.path)
    duration = media.duration_s
    if duration is None:
        duration = None if info.duration_s is None else max(0.0, info.duration_s - media.offset_s)
    # a container that does not say its rate is taken at 48 kHz, so an unknown hour is still chunked
    rate = media.sample_rate or info.sample_rate or 48000
    if duration is None or duration * rate * (info.channels or 1) <= ONE_PASS_SAMPLES:
        end = None if media.duration_s is None else media.offset_s + media.duration_s
        audio = decode_channels(media.path, media.offset_s, end, should_cancel)
        return _analyse(audio.samples, audio.sample_rate, settings, formants, should_cancel)
    parts = []
    for lo in np.arange(0.0, duration, CHUNK_S):
        hi = min(duration, lo + CHUNK_S)
        start = max(0.0, lo - MARGIN_S)
        audio = decode_channels(media.path, media.offset_s + start, media.offset_s + min(duration, hi + MARGIN_S),
                                should_cancel)
        chunk = _analyse(audio.samples, audio.sample_rate, settings, formants, should_cancel)
        parts.append(_shifted(chunk, start, lo, hi))
    return _joined(parts)


def conversation_track(words: list[TimedWord], settings: ConversationSettings = ConversationSettings()
                       ) -> Conversation | None:
    """The turn-taking of a stimulus with timed words of two or more speakers, else None."""
    if len({w.speaker for w in words}) < 2:
        return None
    return analyse(words, settings)
