"""Turn-taking measures equal the ones worked out by hand for a generated dyad with known gaps and overlaps.

The dyad (seconds):
  A  so what do you think 0.00-1.60 | pause 0.5 | about it 2.10-2.70          me too 4.30-5.00   yes 5.40-5.50
  B              mhm 1.00-1.30                    well i like it 3.20-4.50              great then 5.30-5.90
B's "mhm" and A's "yes" are backchannels (listener tokens while the other holds the floor). Turns: A 0-2.7,
B 3.2-4.5 (gap 0.5), A 4.5-5.0 (taken in an overlap of 0.2), B 5.3-5.9 (gap 0.3).
"""
from __future__ import annotations

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
        ("A", 0.0, 2.7), ("B", 3.2, 4.5), ("A", 4.5, 5.0), ("B", 5.3, 5.9)]
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
    assert a["speech_rate_wps"] == approx(9 / 3.2)
    assert a["turn_speech_rate_mean_wps"] == approx((7 / 2.7 + 2 / 0.5) / 2)
    assert a["articulation_rate_wps"] == approx(10 / 3.0)
    assert a["pause_count"] == 1 and a["pause_mean_s"] == approx(0.5)
    assert a["pause_rate_per_min"] == approx(60 / 3.2)
    assert a["backchannel_count"] == 1
    assert a["overlap_share"] == approx(0.6 / 3.0)
    assert a["gap_count"] == 0 and a["overlap_count"] == 1 and a["overlap_mean_s"] == approx(0.2)
    b = speaker_measures(talk, "B")
    assert b["turn_count"] == 2 and b["speech_time_s"] == approx(2.2)
    assert b["speech_rate_wps"] == approx(6 / 1.9)
    assert b["articulation_rate_wps"] == approx(7 / 2.2)
    assert b["gap_count"] == 2 and b["gap_mean_s"] == approx(0.4) and b["gap_median_s"] == approx(0.4)
    assert b["overlap_count"] == 0 and b["pause_count"] == 0
    assert b["overlap_share"] == approx(0.6 / 2.2)


def test_conversation_measures():
    whole = conversation_measures(analyse(dyad()))
    assert whole["turn_count"] == 4 and whole["transition_count"] == 3
    assert whole["overlapped_transition_share"] == approx(1 / 3)
    assert whole["overlap_share"] == approx(0.6 / 5.2)
    assert whole["backchannel_count"] == 2
    assert whole["floor_balance"] == approx(3.2 / 5.1)
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
    assert len(fine.turns[0].pauses) == 6  # every 0.05 s silence between A's first words counts


def test_no_words_no_turns():
    talk = analyse([])
    assert talk.turns == () and conversation_measures(talk)["turn_count"] == 0
