"""The metrics dashboard over one million stored FriendBench predictions, timed as the window computes it.

When a service says on the change channel that a dataset's figures changed, the window's metrics view asks for
the dataset's frames again and computes its dashboard on a worker: `DashboardFrames.load` (app/dashboard_cache.py,
which reads `app.dashboard.load_frames`: the answers counted per model, modality, truth and answer in one DuckDB
GROUP BY, the ratings, the imported figures) then `AnalysisFrames.dashboard` (the statistics, from those counts).
That is what is timed here, on a store of 12,820 dyads x 26 models x 3 modalities (999,960 predictions, 2% of
them without a familiar/stranger answer) and 15,000 human ratings, written by the import path:

- ``dashboard_recompute_1m_ms``: a change to the dataset's figures is published, then its dashboard is computed
  (accuracy with 95% Wilson intervals, d' and c per model x modality and for the human crowd per condition).
- ``dashboard_groupby_mean_baseline_1m_ms``: the bare group-by over the same stored predictions, in the same run
  and interleaved with the recompute: the mean of correct per model x modality in DuckDB.
- ``dashboard_recompute_vs_groupby_mean_ratio``: the first median over the second.
- ``dashboard_correction_switch_ms``: the other d' rate correction chosen, from the frames already read.
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
from app.dashboard_cache import DashboardFrames  # noqa: E402
from storage.importers.plan import DatasetInfo, ImportPlan  # noqa: E402
from storage.importers.writer import write_plan  # noqa: E402
from storage.store import Store  # noqa: E402

DYADS = 12_820
MODELS = 26
MODALITIES = ("text", "audio", "video")
RATED_DYADS, RATERS = 1_000, 5
REPEATS = 11
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
        store = Store.open(Path(tmp) / "dyads.duckdb")
        try:
            write_plan(store, friendbench_plan(Path(tmp)))
            return _figures(store)
        finally:
            store.close()


def _figures(store: Store) -> list[tuple[str, float, str]]:
    cur = store.cursor()
    dataset_id = cur.execute("SELECT id FROM dataset").fetchall()[0][0]
    assert cur.execute("SELECT count(*) FROM prediction").fetchall()[0][0] == DYADS * MODELS * len(MODALITIES)
    changes = ChangeChannel()
    frames = DashboardFrames(store, changes)

    def recompute() -> None:
        changes.publish({Topic.METRICS}, dataset_id=dataset_id, source="bench")
        shown = frames.load(dataset_id).dashboard("loglinear")
        assert shown.table("friendbench.accuracy").frame.height == MODELS * len(MODALITIES) + len(MODALITIES)

    def bare() -> None:
        assert len(cur.execute(BARE_GROUP_BY, [dataset_id]).fetchall()) == MODELS * len(MODALITIES)

    recompute()  # warm-up: the file cache, polars and the rules' imports
    bare()
    recompute_times, bare_times = [], []
    for _ in range(REPEATS):   # interleaved, so a busy moment of the machine weighs on both alike
        recompute_times.append(_timed_ms(recompute))
        bare_times.append(_timed_ms(bare))
    recompute_ms, bare_ms = statistics.median(recompute_times), statistics.median(bare_times)

    switch_times, again_times = [], []
    for _ in range(REPEATS):
        changes.publish({Topic.METRICS}, dataset_id=dataset_id, source="bench")
        frames.load(dataset_id).dashboard("loglinear")
        switch_times.append(_timed_ms(lambda: frames.load(dataset_id).dashboard("half_over_n")))
        again_times.append(_timed_ms(lambda: frames.load(dataset_id).dashboard("loglinear")))
    frames.close()
    return [
        ("dashboard_recompute_1m_ms", recompute_ms, "ms"),
        ("dashboard_groupby_mean_baseline_1m_ms", bare_ms, "ms"),
        ("dashboard_recompute_vs_groupby_mean_ratio", recompute_ms / bare_ms, "x"),
        ("dashboard_correction_switch_ms", statistics.median(switch_times), "ms"),
        ("dashboard_shown_again_ms", statistics.median(again_times), "ms"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.2f} {unit}")
