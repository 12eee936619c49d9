"""Turn-taking measures equal the ones worked out by hand for a generated dyad with known gaps and overlaps.

The dyad (seconds):
  A  so what do you think 0.00-1.60 | pause 0.5 | about it 2.10-2.70          me too 4.30-5.00   yes 5.40-5.50
  B              mhm 1.00-1.30                    well i like it 3.20-4.50              great then 5.30-5.90
B's "mhm" and A's "yes" are backchannels (listener tokens while the other holds the floor). Turns: A 0-2.7,
B 3.2-4.5 (gap 0.5), A 4.3-5.0 (taken in an overlap of 0.2, timed from its first word), B 5.3-5.9 (gap 0.3).
"""
from __future__ import annotations

import numpy as np
import pytest

from app.cues.conversation import (ConversationSettings, TimedWord, analyse, conversation_measures,
                                   speaker_measures)

A_WORDS = [("so", 0.0, 0.3), ("what", 0.35, 0.6), ("do", 0.65, 0.9), ("you", 0.95, 1.2), ("think", 1.25, 1.6),
           ("about", 2.1, 2.4), ("it", 2.45, 2.7), ("me", 4.3, 4.6), ("too", 4.65, 5.0), ("yes", 5.4, 5.5)]
B_WORDS = [("mhm", 1.0, 1.3), ("well", 3.2, 3.5), ("i", 3.55, 3.7), ("like", 3.75, 4.0), ("it", 4.05, 4.5),
           ("great", 5.3, 5.6), ("then", 5.65, 5.9)]


def dyad(extra: list[TimedWord] = ()) -> list[TimedWord]:
    words = [TimedWord("A", w, s, e) for w, s, e in A_WORDS] + [TimedWord("B", w, s, e) for w, s, e in B_WORDS]
    return words + list(extra)


def approx(value: float) -> object:
    return pytest.approx(value, abs=1e-9)


def test_floor_turns_gaps_and_overlaps():
    talk = analyse(dyad())
    assert [(t.speaker, t.start, t.end) for t in talk.turns] == [
        ("A", 0.0, 2.7), ("B", 3.2, 4.5), ("A", 4.3, 5.0), ("B", 5.3, 5.9)]
    assert [(t.from_speaker, t.to_speaker) for t in talk.transitions] == [("A", "B"), ("B", "A"), ("A", "B")]
    assert [t.offset_s for t in talk.transitions] == [approx(0.5), approx(-0.2), approx(0.3)]
    assert [t.interval for t in talk.transitions] == [(approx(2.7), approx(3.2)), (approx(4.3), approx(4.5)),
                                                      (approx(5.0), approx(5.3))]
    assert [(u.speaker, u.start) for u in talk.backchannels] == [("B", 1.0), ("A", 5.4)]
    assert talk.overlaps == (approx((1.0, 1.3)), approx((4.3, 4.5)), approx((5.4, 5.5)))
    assert talk.turns[0].pauses == ((1.6, 2.1),)
    assert talk.turns[0].n_words == 7 and talk.turns[0].speech_s == approx(2.2)


def test_per_speaker_measures():
    talk = analyse(dyad())
    a = speaker_measures(talk, "A")
    assert a["turn_count"] == 2
    assert a["speech_time_s"] == approx(3.0)
    assert a["word_count"] == 10
    assert a["speech_rate_wps"] == approx(9 / 3.4)  # turns 0-2.7 and 4.3-5.0, "yes" is a backchannel
    assert a["turn_speech_rate_mean_wps"] == approx((7 / 2.7 + 2 / 0.7) / 2)
    assert a["articulation_rate_wps"] == approx(9 / 2.9)  # the same 9 words over their 2.2 + 0.7 s of speech
    assert a["pause_count"] == 1 and a["pause_mean_s"] == approx(0.5)
    assert a["pause_rate_per_min"] == approx(60 / 3.4)
    assert a["backchannel_count"] == 1
    assert a["overlap_share"] == approx(0.6 / 3.0)
    assert a["gap_count"] == 0 and a["overlap_count"] == 1 and a["overlap_mean_s"] == approx(0.2)
    b = speaker_measures(talk, "B")
    assert b["turn_count"] == 2 and b["speech_time_s"] == approx(2.2)
    assert b["speech_rate_wps"] == approx(6 / 1.9)
    assert b["articulation_rate_wps"] == approx(6 / 1.9)  # no pause in B's turns; "mhm" is in neither
    assert b["gap_count"] == 2 and b["gap_mean_s"] == approx(0.4) and b["gap_median_s"] == approx(0.4)
    assert b["overlap_count"] == 0 and b["pause_count"] == 0
    assert b["overlap_share"] == approx(0.6 / 2.2)


def test_conversation_measures():
    whole = conversation_measures(analyse(dyad()))
    assert whole["turn_count"] == 4 and whole["transition_count"] == 3
    assert whole["overlapped_transition_share"] == approx(1 / 3)
    assert whole["overlap_share"] == approx(0.6 / 4.6)  # 5.2 s of speech, 0.6 s of it by two at once
    assert whole["backchannel_count"] == 2
    assert whole["floor_balance"] == approx(3.4 / 5.3)
    assert whole["fto_mean_s"] == approx((0.5 - 0.2 + 0.3) / 3)
    assert whole["gap_mean_s"] == approx(0.4) and whole["overlap_mean_s"] == approx(0.2)
    assert whole["conversation_time_s"] == approx(5.9)


def test_speech_wholly_inside_the_holders_is_an_overlap_not_a_floor_change():
    talk = analyse(dyad([TimedWord("B", "no", 0.4, 0.5), TimedWord("B", "wait", 0.55, 0.7)]))
    assert [(t.speaker, t.start) for t in talk.turns][:2] == [("A", 0.0), ("B", 3.2)]
    assert talk.overlaps[0] == approx((0.4, 0.7))
    assert not talk.units[1].backchannel  # two words, but not listener tokens


def test_a_shorter_pause_threshold_splits_more_units():
    coarse = analyse(dyad(), ConversationSettings(min_pause_s=0.6))
    assert coarse.turns[0].pauses == ()  # the 0.5 s silence is no pause at 0.6 s
    fine = analyse(dyad(), ConversationSettings(min_pause_s=0.04))
    # every 0.05 s silence between A's first words counts, but the one B's "mhm" (1.0-1.3) fills: no joint silence
    assert [a for a, _ in fine.turns[0].pauses] == [approx(0.3), approx(0.6), approx(0.9), approx(1.6), approx(2.4)]


def test_no_words_no_turns():
    talk = analyse([])
    assert talk.turns == () and conversation_measures(talk)["turn_count"] == 0


def test_a_turn_taken_in_overlap_is_timed_from_its_first_word_so_speech_rate_never_exceeds_articulation():
    # B takes over while A still speaks: 4 words in 1.5 s from B's first word, not from where A stopped
    talk = analyse([TimedWord("A", w, s, e) for w, s, e in (("one", 0.0, 0.5), ("two", 0.6, 1.0), ("three", 1.1, 2.0))]
                   + [TimedWord("B", w, s, e) for w, s, e in (("so", 1.5, 1.8), ("what", 1.85, 2.2),
                                                              ("about", 2.25, 2.7), ("it", 2.75, 3.0))])
    b_turn = talk.turns[1]
    assert (b_turn.speaker, b_turn.start, b_turn.end) == ("B", 1.5, 3.0)
    assert b_turn.speech_rate == approx(4 / 1.5) and b_turn.speech_rate <= b_turn.articulation_rate
    assert talk.transitions[0].offset_s == approx(-0.5)
    rng = np.random.default_rng(4)
    for _ in range(200):  # random dyads: the inequality holds for every turn and every speaker
        words = []
        for speaker in ("A", "B"):
            t = float(rng.uniform(0, 1))
            for _ in range(int(rng.integers(1, 25))):
                length = float(rng.uniform(0.05, 0.6))
                words.append(TimedWord(speaker, str(rng.choice(["word", "mm", "yeah", "so"])), t, t + length))
                t += length + float(rng.choice([0.0, 0.05, 0.2, 0.7, 1.5]))
        talk = analyse(words)
        for turn in talk.turns:
            assert turn.speech_rate <= turn.articulation_rate + 1e-12
            assert turn.start == min(u.start for u in talk.units if u.speaker == turn.speaker
                                     and turn.start <= u.start < turn.end)
        for speaker in talk.speakers:
            m = speaker_measures(talk, speaker)
            if m["turn_count"]:
                assert m["speech_rate_wps"] <= m["articulation_rate_wps"] + 1e-12
        spoken = np.zeros(int(max(w.end for w in words) * 1000) + 1)
        for u in talk.units:
            spoken[round(u.start * 1000):round(u.end * 1000)] = 1
        overlapped = sum(b - a for a, b in talk.overlaps)
        assert conversation_measures(talk)["overlap_share"] == pytest.approx(overlapped / (spoken.sum() / 1000),
                                                                             abs=0.01)


def test_a_simultaneous_start_is_overlap_not_a_transition():
    # both start at 0.0: B speaks on, so B has the floor from the start and A's words are overlap inside it
    talk = analyse([TimedWord("A", "well", 0.0, 1.0), TimedWord("B", "so", 0.0, 0.9), TimedWord("B", "then", 1.0, 2.0)])
    assert talk.transitions == ()
    assert [(t.speaker, t.start, t.end) for t in talk.turns] == [("B", 0.0, 2.0)]
    assert talk.overlaps == (approx((0.0, 1.0)),) and talk.simultaneous_starts == [0.0]
    assert conversation_measures(talk)["simultaneous_start_count"] == 1
    # after a gap both start again together (A at 3.0 for 0.3 s, B at 3.0 for 1 s): the floor passes to B with
    # the gap as its offset, never a negative offset of A's length
    talk = analyse([TimedWord("A", "right", 0.0, 2.0), TimedWord("A", "and", 3.0, 3.3),
                    TimedWord("B", "look", 3.0, 4.0)])
    assert [(t.from_speaker, t.to_speaker) for t in talk.transitions] == [("A", "B")]
    assert talk.transitions[0].offset_s == approx(1.0)
    assert all(t.offset_s >= 0 for t in talk.transitions)


def test_every_silence_of_exactly_the_threshold_on_a_10_ms_grid_is_a_pause():
    """Word edges at k * 0.01 s (as a 10 ms transcript grid stores them): the 0.2 s silences whose ends do not
    subtract to 0.2 in floating point are pauses too."""
    words, pauses_expected, t = [], 0, 0
    for k in range(3000):  # silences of exactly 20 steps at every position up to 15 minutes in
        start, end = t, t + 5
        words.append(TimedWord("A", "word", start * 0.01, end * 0.01))
        t = end + 20
        pauses_expected += 1
    pauses_expected -= 1
    inexact = sum(1 for a, b in zip(words, words[1:]) if b.start - a.end < 0.2)
    assert inexact > 1000  # the floating-point differences that the millisecond grid must absorb
    talk = analyse(words)
    assert len(talk.units) == 3000 and len(talk.turns) == 1
    assert len(talk.turns[0].pauses) == pauses_expected
    # and at every 10 ms position of the first five minutes, one silence at a time
    missed = [k for k in range(30000)
              if len(analyse([TimedWord("A", "a", max(0, k - 5) * 0.01, k * 0.01),
                              TimedWord("A", "b", (k + 20) * 0.01, (k + 25) * 0.01)]).turns[0].pauses) != 1]
    assert missed == []
    # a threshold 10 ms longer than every silence finds none
    assert analyse(words, ConversationSettings(min_pause_s=0.21)).turns[0].pauses == ()


def test_a_backchannel_inside_the_holders_silence_leaves_no_pause_there():
    """A pause is a joint silence: A's 1.0 s silence with B's "mhm" in it is not A's pause; A's later silence is."""
    words = [TimedWord("A", "so", 0.0, 1.0), TimedWord("B", "mhm", 1.4, 1.6), TimedWord("A", "then", 2.0, 3.0),
             TimedWord("A", "well", 3.5, 4.0)]
    talk = analyse(words)
    assert [u.backchannel for u in talk.units if u.speaker == "B"] == [True]
    assert [(t.speaker, t.start, t.end) for t in talk.turns] == [("A", 0.0, 4.0)]
    assert talk.turns[0].pauses == ((3.0, 3.5),)
    assert speaker_measures(talk, "A")["pause_count"] == 1
    # without the backchannel the same silence is a pause
    assert analyse([w for w in words if w.speaker == "A"]).turns[0].pauses == ((1.0, 2.0), (3.0, 3.5))


def test_heldner_and_edlunds_classification_of_the_hand_worked_dyad():
    talk = analyse(dyad())
    assert [(v.kind, v.start, v.end) for v in talk.vocal_activity] == [
        ("within-speaker overlap", 1.0, 1.3),  # B's "mhm" inside A's speech
        ("pause", 1.6, 2.1), ("gap", 2.7, 3.2),
        ("between-speaker overlap", 4.3, 4.5),  # A takes over from B
        ("gap", 5.0, 5.3), ("within-speaker overlap", 5.4, 5.5)]
    whole = conversation_measures(talk)
    assert whole["va_pause_count"] == 1 and whole["va_gap_count"] == 2 and whole["va_gap_mean_s"] == approx(0.4)
    assert whole["va_overlap_within_count"] == 2 and whole["va_overlap_between_mean_s"] == approx(0.2)
    # a backchannel in the holder's silence: no floor-based pause, and in Heldner and Edlund's view two gaps
    words = [TimedWord("A", "so", 0.0, 1.0), TimedWord("B", "mhm", 1.4, 1.6), TimedWord("A", "then", 2.0, 3.0)]
    assert [v.kind for v in analyse(words).vocal_activity] == ["gap", "gap"]


def reference_vocal_activity(words: list[TimedWord], settings: ConversationSettings) -> list[tuple[str, int, int]]:
    """Heldner and Edlund's classification done the slow way: each speaker's IPUs painted onto a 1 ms grid,
    runs of the joint state classified by the nearest one-speaker run on each side."""
    talk = analyse(words, settings)
    end = max(round(u.end * 1000) for u in talk.units)
    speakers = sorted({u.speaker for u in talk.units})
    grid = np.zeros((len(speakers), end + 1), bool)
    for u in talk.units:
        grid[speakers.index(u.speaker), round(u.start * 1000):round(u.end * 1000)] = True
    state = [tuple(np.flatnonzero(grid[:, t])) for t in range(end)]
    runs = []
    for t, s in enumerate(state):
        if runs and runs[-1][2] == s:
            runs[-1][1] = t + 1
        else:
            runs.append([t, t + 1, s])
    first = min(round(u.start * 1000) for u in talk.units)
    runs = [r for r in runs if r[0] >= first]
    out = []
    for i, (a, b, s) in enumerate(runs):
        if len(s) == 1:
            continue
        before = [r[2][0] for r in runs[:i] if len(r[2]) == 1]
        after = [r[2][0] for r in runs[i + 1:] if len(r[2]) == 1]
        if not before or not after:
            continue
        same = before[-1] == after[0]
        if not s:
            kind = "pause" if same else "gap"
        else:
            kind = "within-speaker overlap" if same else "between-speaker overlap"
        out.append((kind, a, b))
    return out


def test_the_classification_equals_a_millisecond_grid_reference_on_random_dyads():
    rng = np.random.default_rng(9)
    for _ in range(60):
        words = []
        for speaker in ("A", "B", "C")[: int(rng.integers(2, 4))]:
            t = int(rng.integers(0, 800))
            for _ in range(int(rng.integers(1, 15))):
                length = int(rng.integers(50, 700))
                words.append(TimedWord(speaker, "mm" if rng.random() < 0.2 else "word", t / 1000, (t + length) / 1000))
                t += length + int(rng.choice([0, 30, 200, 450, 1200]))
        ours = [(v.kind, round(v.start * 1000), round(v.end * 1000)) for v in analyse(words).vocal_activity]
        assert ours == reference_vocal_activity(words, ConversationSettings())
