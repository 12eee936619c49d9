"""Column sniffing: which column holds the clip id, label, answer ... and how sure the guess is."""
from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from storage.importers.common import ProblemLog
from storage.importers.sniff import sniff_columns, sniff_frame, unit_scale
from storage.tables import read_table


def test_renamed_columns_are_found_by_name_and_values():
    frame = pl.DataFrame({
        "ClipID": ["c1", "c2", "c3"],
        "TrueRelationship": ["friends", "strangers", "friends"],
        "System": ["m1", "m1", "m2"],
        "InputModality": ["text", "audio", "video"],
        "RawResponse": ["I think they are friends because they laugh a lot together."] * 3,
        "ParsedPrediction": ["familiar", "stranger", "stranger"],
        "LatencyMs": ["12", "40", "33"],
    })
    guesses = sniff_frame(frame)
    found = {field: g.column for field, g in guesses.items()}
    assert found["stimulus"] == "ClipID"
    assert found["label"] == "TrueRelationship"
    assert found["model"] == "System"
    assert found["modality"] == "InputModality"
    assert found["raw"] == "RawResponse"
    assert found["answer"] == "ParsedPrediction"
    assert found["latency"] == "LatencyMs"
    assert unit_scale("LatencyMs") == 0.001 and unit_scale("rt_s") == 1.0
    assert all(0 < g.confidence <= 1 for g in guesses.values())


def test_values_alone_find_a_condition_column_with_a_meaningless_name():
    frame = pl.DataFrame({"col_7": ["text", "audio", "video", "audio"], "who": ["r1", "r2", "r3", "r4"]})
    guess = sniff_frame(frame, fields=["modality", "rater"])["modality"]
    assert guess.column == "col_7" and guess.reason == "values"


def test_a_user_mapping_wins_and_frees_the_column_it_took():
    frame = pl.DataFrame({"label": ["x", "y"], "dyad_relation": ["familiar", "stranger"], "clip": ["a", "b"]})
    guesses = sniff_frame(frame, overrides={"label": "dyad_relation"}, fields=["stimulus", "label", "answer"])
    assert guesses["label"].column == "dyad_relation"
    assert guesses["label"].confidence == 1.0 and guesses["label"].reason == "mapping"
    # a mapping naming a column this table lacks leaves the field to sniffing
    other = sniff_columns(["clip", "label"], overrides={"label": "dyad_relation"}, fields=["label"])
    assert other["label"].column == "label"


def test_read_table_keeps_line_numbers_and_reports_ragged_rows(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('a,b\n1,"two\nlines"\n\n3\n4,5\n', encoding="utf-8")
    log = ProblemLog(skip_bad=True)
    table = read_table(path, "t.csv", log)
    assert table.lines == [2, 6]
    assert table.frame["b"].to_list() == ["two\nlines", "5"]
    assert [(p.file, p.line) for p in log.problems] == [("t.csv", 5)]


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=12), st.lists(st.one_of(st.none(), st.text(max_size=20)),
                                                                  min_size=3, max_size=3), max_size=6))
def test_any_table_gets_at_most_one_field_per_column(columns):
    guesses = sniff_columns(list(columns), columns)
    used = [g.column for g in guesses.values()]
    assert len(used) == len(set(used))
    assert all(g.column in columns and 0 <= g.confidence <= 1 for g in guesses.values())
