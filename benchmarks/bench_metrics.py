"""The metrics dashboard over one million stored FriendBench predictions, timed as the window computes it.

The window reads a dataset's frames once per change (`DashboardFrames.load`, app/dashboard_cache.py: a service
that changed the dataset's figures says so on the change channel), and the first dashboard of those frames counts
the answers per run, truth and answer in one DuckDB GROUP BY (`storage.analysis.prediction_answer_counts`); every
dashboard of those frames (one per d' rate correction, `app.dashboard.dashboard`) computes its statistics from
those few hundred counts. After a change of the dataset's figures alone (a live run's answers, cue measures) the
frames keep what only an import writes (the dataset's record, its human ratings and published figures,
`app.analysis_frames.ImportedFrames`); after an import everything is read again. Timed here on a store of 12,820
dyads x 26 models x 3 modalities (999,960 predictions, 2% of them neither label) and 15,000 human ratings, written
by the import path and opened again as the window opens a store, each figure the median of interleaved runs:

- ``dashboard_recompute_1m_ms``: what the window computes when the dashboard's filter changes (the d' rate
  correction): accuracy with 95% Wilson intervals, d' and c per model x modality and for the human crowd per
  condition, from the counts read at the last change.
- ``dashboard_groupby_mean_baseline_1m_ms``: the bare group-by over the same stored predictions: the mean of
  correct per model x modality in DuckDB.
- ``dashboard_recompute_vs_groupby_mean_ratio``: the first over the second.
- ``dashboard_after_change_1m_ms`` and ``dashboard_after_change_vs_groupby_mean_ratio``: a change to the
  dataset's figures published, then the dashboard shown: the answers counted again, the statistics computed.
- ``dashboard_after_import_1m_ms`` and ``dashboard_after_import_vs_groupby_mean_ratio``: the same after an
  import (the datasets changed): every frame the dashboard needs read again as well.
- ``dashboard_shown_again_ms``: the dataset shown again with no change between (nothing is read or computed).
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.changes import ChangeChannel, Topic  # noqa: E402
from app.dashboard import dashboard  # noqa: E402
from app.dashboard_cache import DashboardFrames  # noqa: E402
from storage.importers.plan import DatasetInfo, ImportPlan  # noqa: E402
from storage.importers.writer import write_plan  # noqa: E402
from storage.store import Store  # noqa: E402

DYADS = 12_820
MODELS = 26
MODALITIES = ("text", "audio", "video")
RATED_DYADS, RATERS = 1_000, 5
REPEATS = 25
BARE_GROUP_BY = ("SELECT m.name AS model, r.modality, avg(CAST(p.correct AS DOUBLE)) AS accuracy FROM prediction p"
                 " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id WHERE r.dataset_id = ?"
                 " GROUP BY m.name, r.modality")


def friendbench_plan(root: Path, seed: int = 0) -> ImportPlan:
    """DYADS dyads, each answered by every model in every modality, and RATERS raters on RATED_DYADS of them."""
    rng = np.random.default_rng(seed)
    plan = ImportPlan(DatasetInfo("Dyads (1M answers)", "friendbench", root, "generated", synthetic=True), "bench")
    ids = np.array([f"dyad-{i:05d}" for i in range(DYADS)])
    truth = np.where(rng.random(DYADS) < 0.5, "familiar", "stranger")
    other = np.where(truth == "familiar", "stranger", "familiar")
    meta = [json.dumps({"vendor": f"V{i % 4}", "gender": "same" if i % 3 else "mixed"}) for i in range(DYADS)]
    plan.add("stimuli", pl.DataFrame({"external_id": ids, "kind": "dyad", "ground_truth": truth, "meta": meta}))
    answers = []
    for m in range(MODELS):
        for modality in MODALITIES:
            right = rng.random(DYADS) < 0.55 + 0.01 * m
            said = pl.Series(np.where(right, truth, other)).set(pl.Series(rng.random(DYADS) < 0.02), None)
            answers.append(pl.DataFrame({"stimulus": ids, "model": f"model-{m:02d}", "modality": modality,
                                         "answer": said, "correct": right & said.is_not_null().to_numpy()}))
    plan.add("predictions", pl.concat(answers))
    rated = np.repeat(np.arange(RATED_DYADS), RATERS * len(MODALITIES))
    rater_right = rng.random(rated.size) < 0.65
    plan.add("human_ratings", pl.DataFrame({
        "stimulus": ids[rated], "rater": [f"r{k}" for k in np.tile(np.repeat(np.arange(RATERS), 3), RATED_DYADS)],
        "condition": np.tile(MODALITIES, RATED_DYADS * RATERS),
        "answer": np.where(rater_right, truth[rated], other[rated]), "correct": rater_right}))
    return plan


def _timed_ms(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000.0


def run() -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory(prefix="bench_metrics_") as tmp:
        path = Path(tmp) / "dyads.duckdb"
        store = Store.open(path)
        write_plan(store, friendbench_plan(Path(tmp)))
        store.close()
        store = Store.open(path)   # as the window opens a store imported before
        try:
            return _figures(store)
        finally:
            store.close()


def _figures(store: Store) -> list[tuple[str, float, str]]:
    cur = store.cursor()
    dataset_id = cur.execute("SELECT id FROM dataset").fetchall()[0][0]
    assert cur.execute("SELECT count(*) FROM prediction").fetchall()[0][0] == DYADS * MODELS * len(MODALITIES)
    changes = ChangeChannel()
    frames = DashboardFrames(store, changes)

    def shown_after(topic: Topic) -> None:
        changes.publish({topic}, dataset_id=dataset_id, source="bench")
        shown = dashboard(frames.load(dataset_id), "loglinear")
        assert shown.table("friendbench.accuracy").frame.height == MODELS * len(MODALITIES) + len(MODALITIES)

    def after_change() -> None:
        shown_after(Topic.METRICS)

    def after_import() -> None:
        shown_after(Topic.DATASETS)

    def filter_changed() -> None:
        dashboard(frames.load(dataset_id), "half_over_n")

    def shown_again() -> None:
        dashboard(frames.load(dataset_id), "loglinear")

    def bare() -> None:
        assert len(cur.execute(BARE_GROUP_BY, [dataset_id]).fetchall()) == MODELS * len(MODALITIES)

    after_import()  # warm-up: the file cache, polars and the rules' imports
    after_change()
    filter_changed()
    bare()
    works = (("after_change", after_change), ("filter_changed", filter_changed), ("shown_again", shown_again),
             ("after_import", after_import), ("bare", bare))
    times: dict[str, list[float]] = {name: [] for name, _ in works}
    # Interleaved, so a busy moment of the machine weighs on each alike, and in turn in every order, so each
    # follows each of the others as often: a query started right after another one's million rows was seen
    # to take up to half as long again as the same query after a smaller one.
    for repeat in range(REPEATS):
        shift = repeat % len(works)
        for name, work in works[shift:] + works[:shift]:
            times[name].append(_timed_ms(work))
    frames.close()
    median = {name: statistics.median(values) for name, values in times.items()}
    return [
        ("dashboard_recompute_1m_ms", median["filter_changed"], "ms"),
        ("dashboard_groupby_mean_baseline_1m_ms", median["bare"], "ms"),
        ("dashboard_recompute_vs_groupby_mean_ratio", median["filter_changed"] / median["bare"], "x"),
        ("dashboard_after_change_1m_ms", median["after_change"], "ms"),
        ("dashboard_after_change_vs_groupby_mean_ratio", median["after_change"] / median["bare"], "x"),
        ("dashboard_after_import_1m_ms", median["after_import"], "ms"),
        ("dashboard_after_import_vs_groupby_mean_ratio", median["after_import"] / median["bare"], "x"),
        ("dashboard_shown_again_ms", median["shown_again"], "ms"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.2f} {unit}")
