"""What the analysis tracks draw for one stimulus: each voice's pitch and intensity (and formants when
asked) on the stimulus's time axis, and the conversation's floors, gaps, overlaps and backchannels.

Called on a worker; every function takes `should_cancel` and stops between steps when it turns True.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.cues.acoustics import (FormantTrack, IntensityTrack, PitchTrack, PraatSettings, formant_track,
                                intensity_track, pitch_track)
from app.cues.conversation import Conversation, ConversationSettings, TimedWord, analyse
from storage.media import DecodeCancelled, decode_segment
from storage.records import MediaRef


@dataclass(frozen=True)
class VoiceTracks:
    pitch: PitchTrack
    intensity: IntensityTrack
    formants: FormantTrack | None


def voice_tracks(media: MediaRef, settings: PraatSettings = PraatSettings(), formants: bool = False,
                 should_cancel: Callable[[], bool] = lambda: False) -> VoiceTracks:
    """Decode the stimulus's window of `media` and run Praat's pitch, intensity (and formant) analyses."""
    end = None if media.duration_s is None else media.offset_s + media.duration_s
    audio = decode_segment(media.path, media.offset_s, end, should_cancel)
    if should_cancel():
        raise DecodeCancelled()
    pitch = pitch_track(audio.samples, audio.sample_rate, settings)
    if should_cancel():
        raise DecodeCancelled()
    intensity = intensity_track(audio.samples, audio.sample_rate, settings)
    found = formant_track(audio.samples, audio.sample_rate, settings) if formants and not should_cancel() else None
    return VoiceTracks(pitch, intensity, found)


def conversation_track(words: list[TimedWord], settings: ConversationSettings = ConversationSettings()
                       ) -> Conversation | None:
    """The turn-taking of a stimulus with timed words of two or more speakers, else None."""
    if len({w.speaker for w in words}) < 2:
        return None
    return analyse(words, settings)
