"""Impossible values never reach the store, whichever reader brought them: the one check before every write.

Each plan is written to a real DuckDB file; a refused plan leaves every table as it was, and the message
names where the value was read (file and line when the reader recorded them) and what was expected.
"""
from __future__ import annotations

import math

import polars as pl
import pytest

from fixtures_store import friendbench_like_plan
from storage.errors import ImportFailed
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.store import Store

TABLES = ("dataset", "stimulus", "segment", "prediction", "judgment", "annotation", "model", "label")


def counts(store: Store) -> dict[str, int]:
    cur = store.cursor()
    return {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


@pytest.fixture
def store(tmp_path):
    opened = Store.open(tmp_path / "v.duckdb")
    yield opened
    opened.close()


def small_plan(tmp_path, **segment) -> ImportPlan:
    plan = ImportPlan(DatasetInfo("V", "generic", tmp_path, str(tmp_path / "release.json")), "test")
    plan.add("stimuli", [{"external_id": "s1", "kind": "clip"}, {"external_id": "s2", "kind": "clip"}])
    plan.origins["s2"] = ("release.json", 7, None)
    plan.add("segments", [{"stimulus": "s1", "ord": 0, "start_s": 0.0, "end_s": 1.0, "text": "fine"},
                          {"stimulus": "s2", "ord": 0, "start_s": 0.0, "end_s": 1.0, "text": "bad", **segment}])
    return plan


@pytest.mark.parametrize("segment, expected", [
    ({"start_s": math.nan}, "finite"), ({"end_s": math.inf}, "finite"), ({"start_s": -0.5}, "0 s or more"),
    ({"start_s": 2.0, "end_s": 1.0}, "start <= end"), ({"speaker": "A\x00B"}, "control characters")])
def test_an_impossible_segment_is_refused_naming_its_file_and_line(store, tmp_path, segment, expected):
    before = counts(store)
    with pytest.raises(ImportFailed) as failure:
        write_plan(store, small_plan(tmp_path, **segment))
    assert "release.json:7" in str(failure.value) and expected in str(failure.value)
    assert counts(store) == before


def test_skip_bad_writes_the_rest_and_lists_the_bad_row(store, tmp_path):
    summary = write_plan(store, small_plan(tmp_path, start_s=math.nan), skip_bad=True)
    assert counts(store)["segment"] == 1
    assert any("release.json:7" in line and "finite" in line for line in summary.skipped)


def test_a_stimulus_id_with_a_nul_is_left_out_whole_with_skip_bad(store, tmp_path):
    plan = small_plan(tmp_path)
    plan.frames["stimuli"] = plan.frames["stimuli"].with_columns(
        pl.when(pl.col("external_id") == "s2").then(pl.lit("s\x002")).otherwise(pl.col("external_id"))
        .alias("external_id"))
    plan.frames["segments"] = plan.frames["segments"].with_columns(
        pl.when(pl.col("stimulus") == "s2").then(pl.lit("s\x002")).otherwise(pl.col("stimulus")).alias("stimulus"))
    with pytest.raises(ImportFailed, match="control characters"):
        write_plan(store, plan)
    write_plan(store, plan, skip_bad=True)
    assert counts(store)["stimulus"] == 1 and counts(store)["segment"] == 1


@pytest.mark.parametrize("change, expected", [
    ({"score": math.inf}, "finite score"), ({"score": 9.0}, "judge's scale"), ({"score": -1.0}, "judge's scale"),
    ({"scale_max": math.nan}, "scale maximum")])
def test_a_judge_score_off_its_scale_is_refused(store, tmp_path, change, expected):
    plan = friendbench_like_plan(tmp_path, n_stimuli=2, models=("alpha",), modalities=("text",), n_raters=1)
    plan.frames["judgments"] = plan.frames["judgments"].with_columns(
        **{k: pl.lit(v, dtype=pl.Float64) for k, v in change.items()})
    before = counts(store)
    with pytest.raises(ImportFailed, match=expected):
        write_plan(store, plan)
    assert counts(store) == before


def test_a_model_name_with_a_control_character_is_refused(store, tmp_path):
    plan = friendbench_like_plan(tmp_path, n_stimuli=2, models=("al\x07pha",), modalities=("text",), n_raters=1)
    with pytest.raises(ImportFailed, match="model.*control characters"):
        write_plan(store, plan)
    assert counts(store)["model"] == 0


@pytest.mark.parametrize("row, field, expected", [
    ({"label": ["a", "b"]}, "label", "text"), ({"start_s": True, "end_s": True}, "start_s", "a number"),
    ({"label": "a\ud800"}, "label", "text")])
def test_a_value_of_the_wrong_kind_is_refused_not_converted(tmp_path, row, field, expected):
    plan = small_plan(tmp_path)
    with pytest.raises(ImportFailed) as failure:
        plan.add("annotations", [{"stimulus": "s2", "annotator": "a", "label_set": "cues", "label": "x",
                                  "start_s": 0.0, "end_s": 1.0, **row}])
    message = str(failure.value)
    assert "release.json:7" in message and f"field '{field}'" in message and f"expected {expected}" in message
    assert "annotations" not in plan.frames


def test_a_plan_with_no_rows_makes_no_dataset(store, tmp_path):
    plan = ImportPlan(DatasetInfo("Empty", "generic", tmp_path, str(tmp_path / "only_header.csv")), "test")
    with pytest.raises(ImportFailed, match="only_header.csv.*no rows"):
        write_plan(store, plan)
    assert counts(store)["dataset"] == 0


def test_good_values_are_written_as_they_are(store, tmp_path):
    write_plan(store, friendbench_like_plan(tmp_path))
    assert counts(store)["judgment"] == 12 * 9 and counts(store)["segment"] == 36
