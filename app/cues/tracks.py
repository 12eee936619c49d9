"""What the analysis tracks draw for one stimulus: each voice's pitch and intensity (with formants and the
other line kinds of `app.cues.track_kinds` when asked) on the stimulus's time axis, and the conversation's
floors, gaps, overlaps and backchannels.

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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from app.cues.acoustics import FormantTrack, IntensityTrack, PitchTrack, PraatSettings, formant_track
from app.cues.conversation import Conversation, ConversationSettings, TimedWord, analyse
from app.cues.track_kinds import PRAAT_LINES, LineKind
from storage.media import DecodeCancelled, decode_channels, probe
from storage.records import MediaRef

ONE_PASS_SAMPLES = 24_000_000
CHUNK_S = 120.0
MARGIN_S = 1.0


@dataclass(frozen=True)
class VoiceTracks:
    """A voice's tracks: each line kind's analysis by its name (`app.cues.track_kinds`), and the formants
    when asked."""

    lines: Mapping[str, Any]
    formants: FormantTrack | None

    @property
    def pitch(self) -> PitchTrack:
        return self.lines["pitch"]

    @property
    def intensity(self) -> IntensityTrack:
        return self.lines["intensity"]


def _with_praat(kinds: Sequence[LineKind]) -> tuple[LineKind, ...]:
    """Pitch and intensity first (the label boundaries are found in them), then the other kinds asked."""
    return PRAAT_LINES + tuple(k for k in kinds if k.name not in {p.name for p in PRAAT_LINES})


def _analyse(samples: np.ndarray, rate: int, settings: PraatSettings, formants: bool,
             kinds: Sequence[LineKind], should_cancel: Callable[[], bool]) -> VoiceTracks:
    lines = {}
    for kind in kinds:
        if should_cancel():
            raise DecodeCancelled()
        lines[kind.name] = kind.analyse(samples, rate, settings)
    found = formant_track(samples, rate, settings) if formants and not should_cancel() else None
    return VoiceTracks(lines, found)


def _per_frame(track: Any, change: Callable[[str, np.ndarray], np.ndarray]) -> Any:
    """The track (a dataclass with `times`) with `change(name, array)` applied to each of its arrays of a
    value per frame (their last axis runs over the frames, as the formants' (count, frames))."""
    frames = len(track.times)
    return replace(track, **{f.name: change(f.name, getattr(track, f.name)) for f in fields(track)
                             if isinstance(getattr(track, f.name), np.ndarray)
                             and getattr(track, f.name).shape[-1:] == (frames,)})


def _shifted(tracks: VoiceTracks, offset: float, lo: float, hi: float) -> VoiceTracks:
    """The frames of a chunk's tracks whose times (after adding `offset`) fall in [lo, hi)."""
    def cut(track: Any) -> Any:
        t = track.times + offset
        keep = (t >= lo) & (t < hi)
        return _per_frame(track, lambda name, a: a[..., keep] + (offset if name == "times" else 0.0))

    return VoiceTracks({name: cut(track) for name, track in tracks.lines.items()},
                       None if tracks.formants is None else cut(tracks.formants))


def _joined(parts: list[VoiceTracks]) -> VoiceTracks:
    def join(chunks: list[Any]) -> Any:
        return _per_frame(chunks[0], lambda name, _a: np.concatenate([getattr(c, name) for c in chunks], axis=-1))

    lines = {name: join([p.lines[name] for p in parts]) for name in parts[0].lines}
    formants = None
    if all(p.formants is not None for p in parts):
        formants = join([p.formants for p in parts])
    return VoiceTracks(lines, formants)


def voice_tracks(media: MediaRef, settings: PraatSettings = PraatSettings(), formants: bool = False,
                 should_cancel: Callable[[], bool] = lambda: False, kinds: Sequence[LineKind] = PRAAT_LINES
                 ) -> VoiceTracks:
    """Praat's pitch and intensity analyses (with formants when asked) and those of the other line `kinds`
    of the stimulus's window of `media`, with times from the window's start."""
    kinds = _with_praat(kinds)
    info = probe(media.path)
    duration = media.duration_s
    if duration is None:
        duration = None if info.duration_s is None else max(0.0, info.duration_s - media.offset_s)
    # a container that does not say its rate is taken at 48 kHz, so an unknown hour is still chunked
    rate = media.sample_rate or info.sample_rate or 48000
    if duration is None or duration * rate * (info.channels or 1) <= ONE_PASS_SAMPLES:
        end = None if media.duration_s is None else media.offset_s + media.duration_s
        audio = decode_channels(media.path, media.offset_s, end, should_cancel)
        return _analyse(audio.samples, audio.sample_rate, settings, formants, kinds, should_cancel)
    parts = []
    for lo in np.arange(0.0, duration, CHUNK_S):
        hi = min(duration, lo + CHUNK_S)
        start = max(0.0, lo - MARGIN_S)
        audio = decode_channels(media.path, media.offset_s + start, media.offset_s + min(duration, hi + MARGIN_S),
                                should_cancel)
        chunk = _analyse(audio.samples, audio.sample_rate, settings, formants, kinds, should_cancel)
        parts.append(_shifted(chunk, start, lo, hi))
    return _joined(parts)


def conversation_track(words: list[TimedWord], settings: ConversationSettings = ConversationSettings()
                       ) -> Conversation | None:
    """The turn-taking of a stimulus with timed words of two or more speakers, else None."""
    if len({w.speaker for w in words}) < 2:
        return None
    return analyse(words, settings)
