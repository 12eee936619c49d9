"""Per-voice cue values of one stimulus: pitch, intensity, rates, pauses, gaps, overlaps, labelled cues.

Subjects are the voices a stimulus has: a dyad's participants (from `audio:A`, `audio:B`), an EchoMind
script's `target`, `alternative` and `neutral` voices, a question's single `audio`. The subject `all`
holds the stimulus as a whole: a conversation's turn-taking measures, whole-stimulus labels, and for
every per-voice cue the mean over the voices, so a stimulus has one value to set against correctness.

Where a participant's words are timed, pitch, intensity and eGeMAPS are taken inside their own
inter-pausal units only, so the other speaker's voice leaking into a microphone does not count as theirs.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from app.cues.acoustics import (PraatSettings, energy_mean_db, formant_track, intensity_track, pitch_track,
                                praat_quantile, semitones)
from app.cues.conversation import (Conversation, ConversationSettings, TimedWord, analyse,
                                   conversation_measures, speaker_measures)
from storage.records import Segment, StimulusDetail

WHOLE = "all"
AUDIO_PREFIX = "audio"
# Praat's default dynamic range for drawing intensity and spectrograms.
SILENCE_BELOW_MAX_DB = 50.0
# name -> (unit, what it is): the cues compared by default, in the order a table shows them.
CUES: dict[str, tuple[str, str]] = {
    "pitch_mean_hz": ("Hz", "mean F0 over voiced frames"),
    "pitch_median_hz": ("Hz", "median F0 over voiced frames"),
    "pitch_range_st": ("st", "F0 range in semitones, Praat's 0.95 minus 0.05 quantile (Get quantile) of the "
                              "voiced frames"),
    "pitch_sd_st": ("st", "F0 standard deviation in semitones"),
    "voiced_fraction": ("", "share of frames Praat finds voiced"),
    "intensity_mean_db": ("dB", f"energy average of the intensity frames within {SILENCE_BELOW_MAX_DB:g} dB of the "
                                "loudest (Praat's Get mean, energy, over those frames)"),
    "intensity_sd_db": ("dB", f"standard deviation of the intensity frames within {SILENCE_BELOW_MAX_DB:g} dB of "
                              "the loudest (silence left out, unlike Praat's Get standard deviation of every frame)"),
    "intensity_sd_praat_db": ("dB", "Praat's Get standard deviation of every intensity frame (silence included)"),
    "duration_s": ("s", "length of the voice's audio"),
    "speech_rate_wps": ("words/s", "words of the speaker's turns per second of turn (first word to last)"),
    "articulation_rate_wps": ("words/s", "words of the speaker's turns per second of their speech, pauses left out"),
    "pause_rate_per_min": ("/min", "pauses per minute of turn"),
    "pause_mean_s": ("s", "mean pause inside a turn (a joint silence of the pause threshold or more)"),
    "gap_mean_s": ("s", "mean gap before taking the floor"),
    "overlap_mean_s": ("s", "mean overlap when taking the floor"),
    "overlap_share": ("", "share of speech time with two or more speaking: of the voice's own speech, or for "
                          "the conversation of the time anyone speaks"),
    "turn_count": ("", "turns (stretches of floor)"),
    "backchannel_count": ("", "backchannels"),
    "transition_count": ("", "floor transitions"),
    "overlapped_transition_share": ("", "share of transitions made in overlap"),
    "floor_balance": ("", "share of floor time the more talkative speaker holds"),
    "fto_mean_s": ("s", "mean floor transfer offset (gap > 0, overlap < 0)"),
    "simultaneous_start_count": ("", "IPUs of two speakers starting at the same millisecond (no transition)"),
    "va_pause_mean_s": ("s", "Heldner & Edlund: mean joint silence with the same speaker on both sides"),
    "va_gap_mean_s": ("s", "Heldner & Edlund: mean joint silence between different speakers"),
    "va_overlap_within_mean_s": ("s", "Heldner & Edlund: mean overlap with the same speaker alone on both sides"),
    "va_overlap_between_mean_s": ("s", "Heldner & Edlund: mean overlap across a change of speaker"),
}
LABEL_PREFIX = "label:"
EGEMAPS_PREFIX = "egemaps:"


@dataclass(frozen=True)
class CueSettings:
    """Everything the values depend on; stored with them."""

    praat: PraatSettings = field(default_factory=PraatSettings)
    conversation: ConversationSettings = field(default_factory=ConversationSettings)
    formants: bool = False
    egemaps: bool = True

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Voice:
    """One subject's audio: its samples, mono (n,) or one row per channel (channels, n), and (for dyads)
    its timed words."""

    subject: str
    samples: np.ndarray
    rate: int
    words: tuple[TimedWord, ...] = ()


@dataclass(frozen=True)
class LabelCount:
    subject: str
    label_set: str
    label: str
    annotator: str
    count: int


CueRow = tuple[str, str, float]  # subject, cue, value


def subject_of_role(role: str) -> str:
    """`audio:A` -> `A`, `audio:target` -> `target`, `audio` -> `audio`."""
    return role.split(":", 1)[1] if ":" in role else role


def audio_roles(detail: StimulusDetail) -> list[str]:
    return [m.role for m in detail.media if m.role == AUDIO_PREFIX or m.role.startswith(AUDIO_PREFIX + ":")]


def timed_words(segments: Sequence[Segment]) -> list[TimedWord]:
    """Every timed word of a transcript with its speaker (the segment's speaker, else its audio role)."""
    out = []
    for segment in segments:
        speaker = segment.speaker or (subject_of_role(segment.media_role) if segment.media_role else "")
        out += [TimedWord(speaker, w.word, w.start_s, w.end_s) for w in segment.words]
    return out


def _inside(times: np.ndarray, intervals: Sequence[tuple[float, float]]) -> np.ndarray:
    if not intervals:
        return np.ones(len(times), dtype=bool)
    starts = np.array([a for a, _ in intervals])
    ends = np.array([b for _, b in intervals])
    slot = np.searchsorted(starts, times, side="right") - 1
    return (slot >= 0) & (times <= ends[np.clip(slot, 0, len(ends) - 1)])


def acoustic_measures(samples: np.ndarray, rate: int, settings: CueSettings,
                      speech: Sequence[tuple[float, float]] = ()) -> dict[str, float]:
    """Pitch, intensity (and optionally formant) summaries; inside `speech` intervals when given."""
    nan = float("nan")
    out: dict[str, float] = {"duration_s": samples.shape[-1] / rate}
    if samples.shape[-1] < rate * 0.1:
        return out
    pitch = pitch_track(samples, rate, settings.praat)
    keep = _inside(pitch.times, sorted(speech))
    f0 = pitch.f0_hz[keep & pitch.voiced]
    st = semitones(f0)
    out["voiced_fraction"] = float(np.mean(pitch.voiced[keep])) if keep.any() else nan
    out["pitch_mean_hz"] = float(np.mean(f0)) if len(f0) else nan
    out["pitch_median_hz"] = float(np.median(f0)) if len(f0) else nan
    out["pitch_range_st"] = praat_quantile(st, 0.95) - praat_quantile(st, 0.05) if len(st) else nan
    out["pitch_sd_st"] = float(np.std(st, ddof=1)) if len(st) > 1 else nan
    intensity = intensity_track(samples, rate, settings.praat)
    db = intensity.db[_inside(intensity.times, sorted(speech))]
    db = db[np.isfinite(db)]
    # Praat's Intensity "Get standard deviation" over these frames, silence and all
    out["intensity_sd_praat_db"] = float(np.std(db, ddof=1)) if len(db) > 1 else nan
    if len(db):
        # Frames more than SILENCE_BELOW_MAX_DB under the loudest are silence (digital silence reads as
        # hundreds of dB below): leaving them in would make the spread measure the pauses, not the voice.
        db = db[db >= db.max() - SILENCE_BELOW_MAX_DB]
    out["intensity_mean_db"] = energy_mean_db(db)
    out["intensity_sd_db"] = float(np.std(db, ddof=1)) if len(db) > 1 else nan
    if settings.formants:
        formants = formant_track(samples, rate, settings.praat, count=2)
        for i, name in enumerate(("f1_mean_hz", "f2_mean_hz")):
            values = formants.hz[i][_inside(formants.times, sorted(speech)) & np.isfinite(formants.hz[i])]
            out[name] = float(np.mean(values)) if len(values) else nan
    return out


def speech_samples(samples: np.ndarray, rate: int, speech: Sequence[tuple[float, float]]) -> np.ndarray:
    """The samples inside `speech` intervals joined end to end (all samples when there are none): a
    participant's eGeMAPS is taken on their own speech, not on the other's voice in their microphone."""
    if not speech:
        return samples
    parts = [samples[..., max(0, int(a * rate)):max(0, int(b * rate))] for a, b in sorted(speech)]
    return np.concatenate(parts, axis=-1) if parts else samples[..., :0]


def egemaps_measures(samples: np.ndarray, rate: int) -> dict[str, float]:
    """The 88 eGeMAPS v02 functionals (openSMILE) of mono samples, or of the mean of (channels, n) samples
    (eGeMAPS is defined on one signal); empty when the opensmile package is not installed."""
    smile = _egemaps_extractor()
    if smile is None or samples.shape[-1] < rate * 0.1:
        return {}
    mono = samples if samples.ndim == 1 else samples.mean(axis=0)
    frame = smile.process_signal(np.asarray(mono, dtype=np.float32), rate)
    return {f"{EGEMAPS_PREFIX}{name}": float(frame[name].iloc[0]) for name in frame.columns}


_SMILE: list[object] = []


def _egemaps_extractor():
    if not _SMILE:
        try:
            import opensmile
        except ImportError:
            _SMILE.append(None)
        else:
            _SMILE.append(opensmile.Smile(feature_set=opensmile.FeatureSet.eGeMAPSv02,
                                          feature_level=opensmile.FeatureLevel.Functionals))
    return _SMILE[0]


def egemaps_version() -> str | None:
    """The opensmile package's version, or None when it is not installed."""
    try:
        import opensmile
    except ImportError:
        return None
    return str(opensmile.__version__)


def label_measures(counts: Sequence[LabelCount]) -> list[CueRow]:
    """Labelled cue counts per subject: each label's count per annotator who used that label set on the
    subject, averaged over those annotators (two annotators marking the same laugh count it once); the
    subject `all` sums the voices' counts and the whole-stimulus labels."""
    annotators: dict[tuple[str, str], set[str]] = {}
    totals: dict[tuple[str, str, str], int] = {}
    for c in counts:
        annotators.setdefault((c.subject, c.label_set), set()).add(c.annotator)
        key = (c.subject, c.label_set, c.label)
        totals[key] = totals.get(key, 0) + c.count
    rows = [(subject, f"{LABEL_PREFIX}{label_set}/{label}", total / len(annotators[(subject, label_set)]))
            for (subject, label_set, label), total in sorted(totals.items())]
    # the stimulus as a whole: its own labels plus every voice's
    whole: dict[str, float] = {}
    for _, cue, value in rows:
        whole[cue] = whole.get(cue, 0.0) + value
    return [r for r in rows if r[0] != WHOLE] + [(WHOLE, cue, value) for cue, value in sorted(whole.items())]


def stimulus_measures(voices: Sequence[Voice], labels: Sequence[LabelCount], settings: CueSettings,
                      should_cancel: Callable[[], bool] = lambda: False) -> tuple[list[CueRow], Conversation | None]:
    """Every cue of one stimulus: per voice, and for the stimulus as a whole (`all`)."""
    rows: list[CueRow] = []
    words = [w for v in voices for w in v.words]
    conversation = analyse(words, settings.conversation) if words else None
    per_voice: dict[str, dict[str, float]] = {}
    for voice in voices:
        if should_cancel():
            break
        speech = ([(u.start, u.end) for u in conversation.units if u.speaker == voice.subject]
                  if conversation is not None else [])
        values = acoustic_measures(voice.samples, voice.rate, settings, speech)
        if conversation is not None and voice.subject in conversation.speakers:
            values.update(speaker_measures(conversation, voice.subject))
        per_voice[voice.subject] = values
        rows += [(voice.subject, cue, value) for cue, value in values.items()]
        if settings.egemaps:
            own = speech_samples(voice.samples, voice.rate, speech)
            rows += [(voice.subject, cue, value) for cue, value in egemaps_measures(own, voice.rate).items()]
    whole: dict[str, float] = {}
    for cue in sorted({c for values in per_voice.values() for c in values}):
        finite = [v[cue] for v in per_voice.values() if cue in v and math.isfinite(v[cue])]
        whole[cue] = sum(finite) / len(finite) if finite else float("nan")
    if conversation is not None:
        whole.update(conversation_measures(conversation))
    rows += [(WHOLE, cue, value) for cue, value in whole.items()]
    rows += label_measures(labels)
    return rows, conversation
