"""Turn-taking in a conversation from word times: floors, gaps, overlaps, backchannels, pauses, rates.

The turns, transitions and pauses are a floor-based analysis (who holds the floor, and when it passes), in
the terms of Heldner & Edlund (2010), "Pauses, gaps and overlaps in conversations"; their own
vocal-activity classification, where a backchannel is speech like any other, is `vocal_activity` (below).
The floor-based definitions:
- an inter-pausal unit (IPU) is a stretch of one speaker's words with no silence of `min_pause_s` or more;
- a backchannel is a short IPU (at most `backchannel_max_words` words, at most `backchannel_max_s` long)
  made only of listener tokens (BACKCHANNEL_TOKENS) while another speaker holds the floor; it does not
  take the floor;
- the floor passes to another speaker when an IPU of theirs that is not a backchannel outlasts the
  holder's speech; the floor transfer offset (FTO) is its start minus the end of the holder's speech:
  positive is a gap (between-speaker silence), negative an overlap (between-speaker overlap);
- a simultaneous start (IPUs of two speakers starting at the same millisecond) is no transition: the
  longer IPU is taken first, so the floor goes (or stays) with whoever speaks on, and the shorter IPU is
  overlap inside it, as any speech wholly inside the holder's is;
- a turn is one speaker's stretch of floor, from the start of its first word (also when it was taken in
  overlap) to the end of its last; a pause is a joint silence of `min_pause_s` or more between two of the
  holder's IPUs within one turn: a silence of the holder in which anyone else speaks (a backchannel
  too) is not a pause.
Alongside, `vocal_activity` is Heldner & Edlund's own vocal-activity classification, where every IPU
(backchannels too) is speech and nobody holds a floor: each stretch of joint silence is a *pause* when the
same speaker speaks alone on both sides of it and a *gap* when they differ; each stretch where two or more
speak is a *within-speaker overlap* when the same speaker speaks alone on both sides and a
*between-speaker overlap* when they differ (the nearest one-speaker stretch on each side; stretches at
either end of the conversation are left out).
Speech rate of a turn is its words per second of turn; articulation rate is the same words per second of
their IPUs (pauses left out), so a speech rate never exceeds its articulation rate. Rates are in words,
since transcripts give words, not syllables. Every threshold is compared on a millisecond grid (times
rounded to whole milliseconds first), so a silence of exactly `min_pause_s` on a 10 ms grid is a pause
whatever the floating-point rounding of its ends.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

BACKCHANNEL_TOKENS = frozenset({
    "mm", "mhm", "mm-hmm", "mmhmm", "hm", "hmm", "uh-huh", "uhhuh", "yeah", "yes", "yep", "ya", "right",
    "okay", "ok", "oh", "ah", "wow", "really", "sure", "true", "exactly", "nice", "cool", "aha",
})
# The definitions above in one sentence, for the methods a comparison prints.
DEFINITION = ("turn-taking by floor (Heldner and Edlund's 2010 terms, not their vocal-activity classification): "
              "inter-pausal units split at silences of the pause threshold or more; backchannels are short units "
              "of listener tokens that do not take the floor; the floor passes when another speaker's unit "
              "outlasts the holder's speech, the offset being gap (> 0) or overlap (< 0); a simultaneous start "
              "is overlap, not a transition; turns run from their first word to their last; a pause is a joint "
              "silence of the threshold or more inside a turn; speech and articulation rates count the words of "
              "a speaker's turns over turn time and over their speech time; times compared on a millisecond grid. "
              "The va_ measures are Heldner and Edlund's vocal-activity classification of the same units "
              "(backchannels included, no floor): joint silences are pauses (same speaker alone on both sides) "
              "or gaps (different), overlaps are within- or between-speaker likewise")
_PUNCTUATION = re.compile(r"[^\w'-]+")


def ms(seconds: float) -> int:
    """A time on the millisecond grid every threshold is compared on."""
    return round(seconds * 1000.0)


@dataclass(frozen=True)
class ConversationSettings:
    """Thresholds of the turn-taking analysis (seconds, words) and the listener tokens a backchannel is
    made of (stored with a cue run, so a changed list measures again)."""

    min_pause_s: float = 0.2
    backchannel_max_s: float = 1.0
    backchannel_max_words: int = 2
    backchannel_tokens: tuple[str, ...] = tuple(sorted(BACKCHANNEL_TOKENS))

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class TimedWord:
    speaker: str
    word: str
    start: float
    end: float


@dataclass(frozen=True)
class Unit:
    """An inter-pausal unit of one speaker."""

    speaker: str
    start: float
    end: float
    words: tuple[str, ...]
    backchannel: bool = False

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Turn:
    """One speaker's stretch of floor, from the start of its first word to the end of its last."""

    speaker: str
    start: float
    end: float
    n_words: int
    speech_s: float
    pauses: tuple[tuple[float, float], ...]

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def speech_rate(self) -> float:
        """Words per second of turn."""
        return self.n_words / self.duration if self.duration > 0 else float("nan")

    @property
    def articulation_rate(self) -> float:
        """Words per second of the turn's IPUs (its pauses left out): never below `speech_rate`."""
        return self.n_words / self.speech_s if self.speech_s > 0 else float("nan")


@dataclass(frozen=True)
class Transition:
    """The floor passing from one speaker to the other at `time` (where the new speaker starts)."""

    from_speaker: str
    to_speaker: str
    time: float
    offset_s: float  # > 0 gap, < 0 overlap

    @property
    def interval(self) -> tuple[float, float]:
        """The gap or overlap itself: from the earlier to the later of the two edges."""
        other = self.time - self.offset_s
        return (min(self.time, other), max(self.time, other))


VA_PAUSE, VA_GAP = "pause", "gap"
VA_WITHIN, VA_BETWEEN = "within-speaker overlap", "between-speaker overlap"


@dataclass(frozen=True)
class VocalActivity:
    """One stretch of Heldner & Edlund's classification: `kind` is VA_PAUSE, VA_GAP, VA_WITHIN or VA_BETWEEN;
    `before` and `after` are the speakers alone on either side."""

    kind: str
    start: float
    end: float
    before: str
    after: str

    @property
    def duration(self) -> float:
        return self.end - self.start


def vocal_activity(units: Sequence[Unit]) -> list[VocalActivity]:
    """Heldner & Edlund's classification of every joint silence and overlap between the first and the last
    speech (see the module docstring), on the millisecond grid."""
    changes: dict[int, dict[str, int]] = {}
    for u in units:
        if ms(u.end) > ms(u.start):
            for time, step in ((ms(u.start), 1), (ms(u.end), -1)):
                by_speaker = changes.setdefault(time, {})
                by_speaker[u.speaker] = by_speaker.get(u.speaker, 0) + step
    edges = sorted(changes)
    if len(edges) < 2:
        return []
    # the speakers active in each elementary stretch between consecutive edges, merged where they stay the same
    stretches: list[tuple[int, int, frozenset[str]]] = []
    talking: dict[str, int] = {}
    for a, b in zip(edges, edges[1:]):
        for speaker, step in changes[a].items():
            talking[speaker] = talking.get(speaker, 0) + step
        active = frozenset(speaker for speaker, n in talking.items() if n > 0)
        if stretches and stretches[-1][2] == active:
            stretches[-1] = (stretches[-1][0], b, active)
        else:
            stretches.append((a, b, active))
    alone = [next(iter(who)) if len(who) == 1 else None for _, _, who in stretches]
    out = []
    for i, (a, b, who) in enumerate(stretches):
        if len(who) == 1:
            continue
        before = next((alone[j] for j in range(i - 1, -1, -1) if alone[j] is not None), None)
        after = next((alone[j] for j in range(i + 1, len(stretches)) if alone[j] is not None), None)
        if before is None or after is None:
            continue
        same = before == after
        kind = (VA_PAUSE if same else VA_GAP) if not who else (VA_WITHIN if same else VA_BETWEEN)
        out.append(VocalActivity(kind, a / 1000.0, b / 1000.0, before, after))
    return out


@dataclass(frozen=True)
class Conversation:
    """Everything the turn-taking analysis found for one conversation."""

    speakers: tuple[str, ...]
    units: tuple[Unit, ...]
    turns: tuple[Turn, ...]
    transitions: tuple[Transition, ...]
    overlaps: tuple[tuple[float, float], ...]  # every stretch where two or more speak at once
    settings: ConversationSettings = field(default_factory=ConversationSettings)

    @property
    def gaps(self) -> list[Transition]:
        return [t for t in self.transitions if t.offset_s > 0]

    @property
    def overlapped_transitions(self) -> list[Transition]:
        return [t for t in self.transitions if t.offset_s < 0]

    @property
    def backchannels(self) -> list[Unit]:
        return [u for u in self.units if u.backchannel]

    @property
    def vocal_activity(self) -> list[VocalActivity]:
        """Heldner & Edlund's vocal-activity classification of the same IPUs (see `vocal_activity`)."""
        return vocal_activity(self.units)

    @property
    def simultaneous_starts(self) -> list[float]:
        """Times (on the millisecond grid) where IPUs of two or more speakers start together."""
        speakers_at: dict[int, set[str]] = {}
        for u in self.units:
            speakers_at.setdefault(ms(u.start), set()).add(u.speaker)
        return [t / 1000.0 for t, who in sorted(speakers_at.items()) if len(who) > 1]


def normalise_token(word: str) -> str:
    return _PUNCTUATION.sub("", word.lower()).strip("-'")


def _units(words: Sequence[TimedWord], settings: ConversationSettings) -> list[Unit]:
    units: list[Unit] = []
    by_speaker: dict[str, list[TimedWord]] = {}
    for word in words:
        by_speaker.setdefault(word.speaker, []).append(word)
    for speaker, own in by_speaker.items():
        own.sort(key=lambda w: (w.start, w.end))
        start, end, tokens = own[0].start, own[0].end, [own[0].word]
        for word in own[1:]:
            if ms(word.start) - ms(end) < ms(settings.min_pause_s):
                end, tokens = max(end, word.end), tokens + [word.word]
            else:
                units.append(Unit(speaker, start, end, tuple(tokens)))
                start, end, tokens = word.start, word.end, [word.word]
        units.append(Unit(speaker, start, end, tuple(tokens)))
    # at a simultaneous start the longer IPU comes first, so the shorter one falls inside it
    units.sort(key=lambda u: (ms(u.start), -u.end, u.speaker))
    return units


def _joint_silence(a: Unit, b: Unit, units: Sequence[Unit]) -> bool:
    """Whether nobody speaks between the end of `a` and the start of `b` (units of any speaker)."""
    return not any(u.start < b.start and u.end > a.end for u in units if u.speaker != a.speaker)


def _is_listener_token_unit(unit: Unit, settings: ConversationSettings) -> bool:
    tokens = [normalise_token(w) for w in unit.words]
    return (0 < len(tokens) <= settings.backchannel_max_words
            and ms(unit.end) - ms(unit.start) <= ms(settings.backchannel_max_s)
            and all(t in settings.backchannel_tokens for t in tokens))


def _overlaps(units: Sequence[Unit]) -> list[tuple[float, float]]:
    """Stretches where units of two different speakers run at once (merged)."""
    edges = sorted([(u.start, 1, u.speaker) for u in units] + [(u.end, -1, u.speaker) for u in units],
                   key=lambda e: (e[0], e[1]))
    active: dict[str, int] = {}
    out: list[tuple[float, float]] = []
    opened: float | None = None
    for time, step, speaker in edges:
        active[speaker] = active.get(speaker, 0) + step
        talking = sum(1 for n in active.values() if n > 0)
        if talking >= 2 and opened is None:
            opened = time
        elif talking < 2 and opened is not None:
            if time > opened:
                if out and out[-1][1] >= opened:
                    out[-1] = (out[-1][0], time)
                else:
                    out.append((opened, time))
            opened = None
    return out


def analyse(words: Iterable[TimedWord], settings: ConversationSettings = ConversationSettings()) -> Conversation:
    """The turn-taking of a conversation given every speaker's timed words."""
    word_list = [w for w in words if w.end >= w.start]
    units = _units(word_list, settings) if word_list else []
    speakers = tuple(sorted({u.speaker for u in units}))
    marked: list[Unit] = []
    turns: list[Turn] = []
    transitions: list[Transition] = []
    holder: str | None = None
    floor_start = holder_end = 0.0
    turn_units: list[Unit] = []

    def close_turn() -> None:
        pauses = tuple((a.end, b.start) for a, b in zip(turn_units, turn_units[1:])
                       if b.start > a.end and _joint_silence(a, b, units))
        turns.append(Turn(holder or "", floor_start, holder_end, sum(len(u.words) for u in turn_units),
                          sum(u.duration for u in turn_units), pauses))

    for unit in units:
        if holder is not None and unit.speaker != holder and _is_listener_token_unit(unit, settings):
            marked.append(Unit(unit.speaker, unit.start, unit.end, unit.words, backchannel=True))
            continue
        marked.append(unit)
        if holder is None:
            holder, floor_start, holder_end, turn_units = unit.speaker, unit.start, unit.end, [unit]
        elif unit.speaker == holder:
            holder_end = max(holder_end, unit.end)
            turn_units.append(unit)
        elif ms(unit.end) > ms(holder_end):
            close_turn()
            transitions.append(Transition(holder, unit.speaker, unit.start, unit.start - holder_end))
            holder, floor_start = unit.speaker, unit.start  # the turn starts at its first word
            holder_end, turn_units = unit.end, [unit]
        # else: speech wholly inside the holder's (a failed interruption): an overlap, not a floor change
    if holder is not None:
        close_turn()
    return Conversation(speakers, tuple(marked), tuple(turns), tuple(transitions), tuple(_overlaps(marked)),
                        settings)


def _stats(values: Sequence[float], prefix: str) -> dict[str, float]:
    n = len(values)
    ordered = sorted(values)
    median = float("nan") if n == 0 else (ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2)
    return {f"{prefix}_count": float(n), f"{prefix}_mean_s": sum(values) / n if n else float("nan"),
            f"{prefix}_median_s": median}


def _union_length(spans: Sequence[tuple[float, float]]) -> float:
    """How long at least one of `spans` lasts."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def _intersection(a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]]) -> float:
    return sum(max(0.0, min(x1, y1) - max(x0, y0)) for x0, x1 in a for y0, y1 in b)


def speaker_measures(conversation: Conversation, speaker: str) -> dict[str, float]:
    """One speaker's turn-taking cues: turns, rates, pauses, gaps and overlaps into their turns, overlap
    share (of their speech time, the part someone else also speaks), backchannels given. Speech and
    articulation rates count the same words, those of the speaker's turns (backchannels and speech
    inside another's turn are in neither), over turn time and over those turns' IPU time."""
    own = [u for u in conversation.units if u.speaker == speaker]
    turns = [t for t in conversation.turns if t.speaker == speaker]
    speech = sum(u.duration for u in own)
    words = sum(len(u.words) for u in own)
    turn_time = sum(t.duration for t in turns)
    turn_speech = sum(t.speech_s for t in turns)
    pauses = [b - a for t in turns for a, b in t.pauses]
    into = [t for t in conversation.transitions if t.to_speaker == speaker]
    rates = [t.speech_rate for t in turns if t.duration > 0]
    out = {
        "turn_count": float(len(turns)),
        "speech_time_s": speech,
        "word_count": float(words),
        "speech_rate_wps": sum(t.n_words for t in turns) / turn_time if turn_time > 0 else float("nan"),
        "turn_speech_rate_mean_wps": sum(rates) / len(rates) if rates else float("nan"),
        "articulation_rate_wps": (sum(t.n_words for t in turns) / turn_speech if turn_speech > 0
                                  else float("nan")),
        "pause_rate_per_min": 60.0 * len(pauses) / turn_time if turn_time > 0 else float("nan"),
        "backchannel_count": float(sum(1 for u in own if u.backchannel)),
        "overlap_share": (_intersection([(u.start, u.end) for u in own], conversation.overlaps) / speech
                          if speech > 0 else float("nan")),
    }
    out.update(_stats(pauses, "pause"))
    out.update(_stats([t.offset_s for t in into if t.offset_s > 0], "gap"))
    out.update(_stats([-t.offset_s for t in into if t.offset_s < 0], "overlap"))
    return out


def conversation_measures(conversation: Conversation) -> dict[str, float]:
    """Cues of the conversation as a whole: transitions, gaps, overlaps, floor balance. The overlap share is
    the overlapped time over the time anyone speaks (each moment counted once); the floor balance is the
    more talkative speaker's floor time over all speakers' floor times added."""
    total = max((u.end for u in conversation.units), default=0.0) - min((u.start for u in conversation.units),
                                                                          default=0.0)
    speech = _union_length([(u.start, u.end) for u in conversation.units])  # overlapped time counted once
    floor = {s: sum(t.duration for t in conversation.turns if t.speaker == s) for s in conversation.speakers}
    held = sum(floor.values())
    out = {
        "turn_count": float(len(conversation.turns)),
        "transition_count": float(len(conversation.transitions)),
        "overlapped_transition_share": (len(conversation.overlapped_transitions) / len(conversation.transitions)
                                        if conversation.transitions else float("nan")),
        "overlap_share": sum(b - a for a, b in conversation.overlaps) / speech if speech > 0 else float("nan"),
        "backchannel_count": float(len(conversation.backchannels)),
        "floor_balance": (max(floor.values()) / held if held > 0 else float("nan")),
        "fto_mean_s": (sum(t.offset_s for t in conversation.transitions) / len(conversation.transitions)
                       if conversation.transitions else float("nan")),
        "conversation_time_s": total,
        "simultaneous_start_count": float(len(conversation.simultaneous_starts)),
    }
    out.update(_stats([t.offset_s for t in conversation.gaps], "gap"))
    out.update(_stats([-t.offset_s for t in conversation.overlapped_transitions], "overlap"))
    classified = conversation.vocal_activity
    for kind, prefix in ((VA_PAUSE, "va_pause"), (VA_GAP, "va_gap"), (VA_WITHIN, "va_overlap_within"),
                         (VA_BETWEEN, "va_overlap_between")):
        out.update(_stats([v.duration for v in classified if v.kind == kind], prefix))
    return out
