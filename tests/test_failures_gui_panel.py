"""The failure panel: ready filters count what an independent computation counts; choices drill down."""
from __future__ import annotations

import polars as pl
import pytest

from app.dashboard import load_frames
from fixtures_store import friendbench_like_plan, make_store
from widgets.failure_panel import HUMANS_KEY, FailurePanel


@pytest.fixture
def setup(qtbot, tmp_path):
    plan = friendbench_like_plan(tmp_path, n_stimuli=40, n_raters=5)
    store = make_store(tmp_path / "fb.duckdb", plan)
    dataset_id = store.cursor().execute("SELECT id FROM dataset").fetchall()[0][0]
    ids = dict(store.cursor().execute("SELECT external_id, id FROM stimulus").fetchall())
    panel = FailurePanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.stateReady, timeout=20000):
        panel.set_frames(load_frames(store, dataset_id))
    yield panel, plan, ids
    panel.runner.wait()
    store.close()


def _expected_wrong_humans_right(plan, ids, model, modality) -> list[int]:
    preds = plan.frame("predictions").filter((pl.col("model") == model) & (pl.col("modality") == modality))
    wrong = {s for s, c in zip(preds["stimulus"], preds["correct"]) if not c}
    crowd = plan.frame("human_ratings").group_by("stimulus").agg(pl.col("correct").mean())
    humans_right = {s for s, share in zip(crowd["stimulus"], crowd["correct"]) if share > 0.5}
    return sorted(ids[s] for s in wrong & humans_right)


def test_model_wrong_humans_right_counts_and_drills_down(qtbot, setup):
    panel, plan, ids = setup
    labels = [r.label for r in panel.filter_results()]
    index = labels.index("alpha / video wrong, humans right")
    expected = _expected_wrong_humans_right(plan, ids, "alpha", "video")
    assert panel.filter_results()[index].count == len(expected)
    assert panel.filter_list.item(index).text().endswith(f"— {len(expected)}")
    with qtbot.waitSignal(panel.drillDown) as caught:
        panel.filter_list.itemClicked.emit(panel.filter_list.item(index))
    assert sorted(caught.args[0]) == expected


def test_all_wrong_and_disagree_and_their_combination(qtbot, setup):
    panel, plan, ids = setup
    preds = plan.frame("predictions")
    per_stim = preds.group_by("stimulus").agg(pl.col("correct").sum().alias("k"), pl.len().alias("n"))
    all_wrong = sorted(ids[s] for s, k in zip(per_stim["stimulus"], per_stim["k"]) if k == 0)
    disagree = sorted(ids[s] for s, k, n in zip(per_stim["stimulus"], per_stim["k"], per_stim["n"]) if 0 < k < n)
    labels = [r.label for r in panel.filter_results()]
    results = panel.filter_results()
    assert sorted(results[labels.index("all models wrong")].stimulus_ids) == all_wrong
    assert sorted(results[labels.index("models disagree")].stimulus_ids) == disagree
    # OR of the two is every stimulus with at least one wrong answer
    panel.check_filters([labels.index("all models wrong"), labels.index("models disagree")])
    panel.any_of.setChecked(True)
    with qtbot.waitSignal(panel.drillDown) as caught:
        panel.show_combination.click()
    assert sorted(caught.args[0]) == sorted(set(all_wrong) | set(disagree))
    panel.all_of.setChecked(True)
    assert panel.combination().apply(panel.state.wide).count == 0   # nobody is both


def test_judge_filter_uses_the_chosen_threshold(qtbot, setup):
    panel, plan, ids = setup
    judg = plan.frame("judgments")
    low = sorted({ids[s] for s, score in zip(judg["stimulus"], judg["score"]) if score <= 2})
    labels = [r.label for r in panel.filter_results()]
    result = panel.filter_results()[next(i for i, l in enumerate(labels) if l.startswith("C1 <= 2"))]
    assert sorted(result.stimulus_ids) == low


def test_slice_finder_ranks_slices_and_drills_down(qtbot, setup):
    panel, plan, ids = setup
    panel.side_a.setCurrentText("gamma / text")
    panel.side_b.setCurrentText(HUMANS_KEY)
    panel.min_size.setValue(5)
    with qtbot.waitSignal(panel.stateReady, timeout=20000):
        panel.find_slices()
    assert panel.slices is not None and panel.slices.height > 0
    assert panel.slice_table.row_count() == panel.slices.height
    row = panel.slices.row(0, named=True)
    with qtbot.waitSignal(panel.drillDown) as caught:
        panel.slice_table.rowClicked.emit(0)
    assert len(caught.args[0]) == row["n"]
    meta = {ids[s]: m for s, m in zip(plan.frame("stimuli")["external_id"], plan.frame("stimuli")["meta"])}
    if row["column_1"] in ("vendor", "gender"):
        import json

        assert all(str(json.loads(meta[i])[row["column_1"]]) == row["value_1"] for i in caught.args[0])


def test_the_judge_threshold_lives_on_the_judges_own_scale(qtbot, tmp_path):
    plan = friendbench_like_plan(tmp_path, n_stimuli=12)
    # the same judge on a 1-10 scale (as AgentViSS's judges score)
    plan.frames["judgments"] = plan.frame("judgments").with_columns((pl.col("score") * 2).alias("score"),
                                                                    pl.lit(10.0).alias("scale_max"))
    store = make_store(tmp_path / "ten.duckdb", plan)
    dataset_id = store.cursor().execute("SELECT id FROM dataset").fetchall()[0][0]
    panel = FailurePanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.stateReady, timeout=20000):
        panel.set_frames(load_frames(store, dataset_id))
    qtbot.waitUntil(lambda: panel.k.maximum() == 10.0, timeout=10000)
    assert panel.k.value() == 4.0 and panel.k.suffix() == " of 10"
    qtbot.waitUntil(lambda: any(r.label.startswith("C1 <= 4") for r in panel.filter_results()), timeout=10000)
    panel.runner.wait()
    store.close()
