"""The dashboard's figures come from answers counted in the store, and are computed once per change.

The counts are read in one GROUP BY per run; every figure must equal the statistics computed over each stored
prediction, row by row (`app.metrics` over the per-prediction frame), and each row's stimuli those answered. A
dataset's frames are read again only when the change channel says its data changed; after a change of its figures
alone (a live answer) the ratings, published figures and the dataset's record are kept, and the dashboard equals
the one of frames read from nothing."""
from __future__ import annotations

import polars as pl
import pytest

from app.changes import ChangeChannel, Topic
from app.dashboard import Dashboard, dashboard, load_frames
from app.dashboard_cache import DashboardFrames
from app.metrics import accuracy_table, human_signal_detection, signal_detection_table
from fixtures_store import big_predictions_plan, friendbench_like_plan, make_store
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.live_runs import store_live_prediction

TRUTHS = ["familiar", "stranger"]


def _plan_with_awkward_runs(tmp_path):
    """FriendBench answers plus what makes counting per run differ from counting per model, or from counting
    answers and their correctness: a second prompt setting of the same model and modality, answers that are
    neither label (one of them without a verdict at all), a clip without a truth, and unscored answers."""
    plan = friendbench_like_plan(tmp_path, n_stimuli=14, n_raters=4)
    stimuli = plan.frame("stimuli")
    plan.frames["stimuli"] = stimuli.with_columns(
        pl.when(pl.col("external_id") == "clip-013").then(None).otherwise(pl.col("ground_truth")).alias("ground_truth"))
    answers = plan.frame("predictions")
    other_setting = answers.filter(pl.col("model") == "beta").with_columns(
        pl.lit("chain of thought").alias("prompt_setting"),
        pl.when(pl.col("stimulus").is_in(["clip-002", "clip-005"])).then(pl.lit("unsure"))
        .when(pl.col("stimulus") == "clip-008").then(None)
        .otherwise(pl.col("answer")).alias("answer"),
        pl.when(pl.col("stimulus").is_in(["clip-004", "clip-008"])).then(None)
        .otherwise(pl.col("correct")).alias("correct"))
    plan.frames["predictions"] = pl.concat([answers, other_setting], how="diagonal_relaxed")
    return plan


def _truth_replaced(tmp_path, name: str, external_id: str, truth: str) -> ImportPlan:
    """A later import that states another truth for one clip (asked to replace it): the answers stored before keep
    the correctness they were scored with."""
    plan = ImportPlan(DatasetInfo(name, "friendbench", tmp_path, "generated in a test", synthetic=True), "test")
    plan.add("stimuli", [{"external_id": external_id, "kind": "dyad", "ground_truth": truth}])
    return plan


@pytest.fixture
def fb(tmp_path):
    store = make_store(tmp_path / "fb.duckdb", _plan_with_awkward_runs(tmp_path))
    # clip-001 was a stranger when its answers were scored: its truth now says familiar
    write_plan(store, _truth_replaced(tmp_path, "Dyads", "clip-001", "familiar"), replace_stimuli=True)
    dataset_id = store.cursor().execute("SELECT id FROM dataset").fetchall()[0][0]
    detail_ids = [r[0] for r in store.cursor().execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
    # a live answer (its own transaction): its model is shown apart, as "gamma (live)"
    store_live_prediction(store.cursor(), dataset_id, "gamma", "text", "", "", "", detail_ids[0], "prompt",
                          "They are strangers.", "stranger", False, 0.4, 10, 3)
    yield store, dataset_id
    store.close()


@pytest.mark.parametrize("correction", ["loglinear", "half_over_n"])
def test_every_figure_equals_the_statistics_over_each_stored_prediction(fb, correction):
    store, dataset_id = fb
    frames = load_frames(store, dataset_id)
    shown = dashboard(frames, correction)
    table = shown.table("friendbench.signal").frame
    assert shown.table("friendbench.accuracy").frame.equals(table)

    every_answer = frames.predictions.filter(pl.col("ground_truth").is_in(TRUTHS))
    expected_models = signal_detection_table(every_answer, ["model", "modality"], correction=correction)
    expected_humans = human_signal_detection(frames.ratings.drop("ground_truth"),
                                             truth=frames.stimuli.select("stimulus_id", "ground_truth"),
                                             correction=correction)
    models = table.filter(pl.col("model") != "humans")
    humans = table.filter(pl.col("model") == "humans").drop("model").rename({"modality": "condition"})
    assert models.equals(expected_models)
    assert humans.equals(expected_humans.select(humans.columns))
    # what the awkward runs must show: both prompt settings pooled, the unsure answers unanswered, the live
    # answer apart, the clip without a truth left out
    beta_text = models.filter((pl.col("model") == "beta") & (pl.col("modality") == "text")).row(0, named=True)
    assert beta_text["n"] == 2 * 13 and beta_text["n_unanswered"] == 3
    # clip-001's answers are counted by its truth now, whatever correctness they were scored with: 8 familiar
    # clips in each setting, less the two answered by neither label
    assert beta_text["n_signal"] == 2 * 8 - 2
    stale = frames.predictions.filter((pl.col("external_id") == "clip-001") & pl.col("correct").is_not_null())
    assert (stale["correct"] != (stale["answer"] == "familiar")).all()
    live = models.filter(pl.col("model") == "gamma (live)").row(0, named=True)
    assert (live["n"], live["n_signal"], live["hits"]) == (1, 1, 0)


def test_frames_and_dashboards_are_kept_until_the_channel_says_the_data_changed(fb, tmp_path):
    store, dataset_id = fb
    changes = ChangeChannel()
    frames = DashboardFrames(store, changes)
    first = frames.load(dataset_id)
    assert frames.load(dataset_id) is first
    assert dashboard(first, "loglinear") is dashboard(first, "loglinear")
    # a change elsewhere: another dataset's figures, or this dataset's labels
    changes.publish({Topic.METRICS}, dataset_id=dataset_id + 1)
    changes.publish({Topic.ANNOTATIONS, Topic.ROWS}, dataset_id=dataset_id)
    assert frames.load(dataset_id) is first

    sid = store.cursor().execute("SELECT max(id) FROM stimulus WHERE ground_truth IS NOT NULL").fetchall()[0][0]
    store_live_prediction(store.cursor(), dataset_id, "delta", "video", "", "", "", sid, "prompt", "Familiar.",
                          "familiar", None, 0.2, 9, 1)
    assert frames.load(dataset_id) is first   # nothing said yet: what was shown stays
    changes.publish({Topic.METRICS}, dataset_id=dataset_id, stimulus_ids=[sid])
    second = frames.load(dataset_id)
    assert second is not first
    rows = dashboard(second, "loglinear").table("friendbench.accuracy").frame
    assert rows.filter(pl.col("model") == "delta (live)")["n"].to_list() == [1]
    assert "delta (live)" not in dashboard(first, "loglinear").table("friendbench.accuracy").frame["model"]

    # a new dataset list forgets every dataset
    write_plan(store, friendbench_like_plan(tmp_path, n_stimuli=4, name="More dyads"))
    changes.publish({Topic.DATASETS}, dataset_id=dataset_id + 1)
    assert frames.load(dataset_id) is not second
    frames.close()
    changes.publish({Topic.METRICS}, dataset_id=dataset_id)   # no longer listening: nothing to hear it


def _same_dashboards(shown: list[Dashboard], fresh: list[Dashboard]) -> None:
    for a, b in zip(shown, fresh, strict=True):
        assert a.notes == b.notes and [t.key for t in a.tables] == [t.key for t in b.tables]
        for table, expected in zip(a.tables, b.tables):
            assert table.frame.equals(expected.frame), table.key
            assert [table.stimulus_ids[row] for row in range(table.frame.height)] == \
                [expected.stimulus_ids[row] for row in range(expected.frame.height)]


def test_after_a_live_answer_the_dashboard_equals_one_read_from_nothing_and_an_import_reads_all_again(fb, tmp_path):
    store, dataset_id = fb
    changes = ChangeChannel()
    frames = DashboardFrames(store, changes)
    first = frames.load(dataset_id)
    dashboard(first, "loglinear")
    clips = dict(store.cursor().execute("SELECT external_id, id FROM stimulus").fetchall())
    for model, clip, answer, correct in (("gamma", "clip-003", "familiar", False), ("delta", "clip-006", None, None),
                                          ("delta", "clip-007", "stranger", False)):
        store_live_prediction(store.cursor(), dataset_id, model, "audio", "", "", "", clips[clip], "prompt",
                              f"reply {answer}", answer, correct, 0.2, 9, 1)
    changes.publish({Topic.ROWS, Topic.METRICS}, dataset_id=dataset_id, stimulus_ids=[clips["clip-003"]])
    second = frames.load(dataset_id)
    assert second.ratings is first.ratings and second.dataset == first.dataset   # an import's part: kept
    corrections = ("loglinear", "half_over_n")
    _same_dashboards([dashboard(second, c) for c in corrections],
                     [dashboard(load_frames(store, dataset_id), c) for c in corrections])
    delta = dashboard(second).table("friendbench.accuracy").frame.filter(pl.col("model") == "delta (live)")
    assert delta.select("n", "n_unanswered", "n_noise").rows() == [(2, 1, 1)]

    # an import of more ratings says the datasets changed: the ratings are read again
    more = ImportPlan(DatasetInfo("Dyads", "friendbench", tmp_path, "generated in a test", synthetic=True), "test")
    more.add("human_ratings", [{"stimulus": "clip-000", "rater": "r9", "condition": "video", "answer": "familiar",
                                "correct": True}])
    write_plan(store, more)
    changes.publish({Topic.DATASETS}, dataset_id=dataset_id)
    third = frames.load(dataset_id)
    assert third.ratings.height == first.ratings.height + 1
    _same_dashboards([dashboard(third, c) for c in corrections],
                     [dashboard(load_frames(store, dataset_id), c) for c in corrections])
    humans = dashboard(third).table("friendbench.accuracy").frame.filter(pl.col("model") == "humans")
    assert humans.filter(pl.col("modality") == "video")["n"].to_list() == [13 * 4 + 1]
    frames.close()


def test_only_the_dataset_shown_and_the_one_before_are_kept(tmp_path):
    store = make_store(tmp_path / "three.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4, name="First"))
    for name in ("Second", "Third"):
        write_plan(store, friendbench_like_plan(tmp_path, n_stimuli=4, name=name))
    ids = dict(store.cursor().execute("SELECT name, id FROM dataset").fetchall())
    frames = DashboardFrames(store, ChangeChannel())
    first, second = frames.load(ids["First"]), frames.load(ids["Second"])
    assert frames.load(ids["First"]) is first   # back and forth between two: nothing read again
    frames.load(ids["Third"])                    # a third pushes out the one shown longest ago
    assert frames.load(ids["First"]) is first and frames.load(ids["Second"]) is not second
    frames.close()
    store.close()


def test_a_generic_tables_figures_and_stimuli_equal_those_over_each_stored_prediction(tmp_path):
    plan = big_predictions_plan(tmp_path, n_stimuli=40, n_models=3)
    answers = plan.frame("predictions")
    unscored = pl.col("stimulus").is_in(["s0000003", "s0000007"]) & (pl.col("model") == "model-01")
    plan.frames["predictions"] = pl.concat([   # some answers unscored, and a second prompt setting of one model
        answers.with_columns(pl.when(unscored).then(None).otherwise(pl.col("correct")).alias("correct")),
        answers.filter(pl.col("model") == "model-02").with_columns(pl.lit("few-shot").alias("prompt_setting"))],
        how="diagonal_relaxed")
    store = make_store(tmp_path / "generic.duckdb", plan)
    dataset_id = store.cursor().execute("SELECT id FROM dataset").fetchall()[0][0]
    frames = load_frames(store, dataset_id)
    table = dashboard(frames).table("generic.accuracy")

    scored = frames.predictions.filter(pl.col("correct").is_not_null())
    assert table.frame.equals(accuracy_table(scored, ["model", "modality"]))
    assert table.frame["n"].to_list() == [40, 38, 80]
    for row, values in enumerate(table.frame.iter_rows(named=True)):
        behind = scored.filter((pl.col("model") == values["model"]) & (pl.col("modality") == values["modality"]))
        assert table.stimulus_ids[row] == behind["stimulus_id"].unique().sort().to_list()
        assert table.stimulus_count(row) == (40 if values["model"] != "model-01" else 38)
    store.close()


def test_a_dataset_of_human_ratings_alone_shows_the_crowd(tmp_path):
    plan = friendbench_like_plan(tmp_path, n_stimuli=6, n_raters=3)
    for table in ("predictions", "judgments"):
        del plan.frames[table]
    store = make_store(tmp_path / "crowd.duckdb", plan)
    dataset_id = store.cursor().execute("SELECT id FROM dataset").fetchall()[0][0]
    frames = load_frames(store, dataset_id)
    table = dashboard(frames, "half_over_n").table("friendbench.signal")
    expected = human_signal_detection(frames.ratings, correction="half_over_n")
    assert table.frame["model"].unique().to_list() == ["humans"]
    assert table.frame.drop("model").rename({"modality": "condition"}).equals(expected)
    assert table.stimulus_ids[0] == list(range(min(frames.stimuli["stimulus_id"]), max(frames.stimuli["stimulus_id"]) + 1))
    store.close()
