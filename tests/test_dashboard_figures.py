"""Dashboard figures match an independent computation; clicking a bar drills down; the CLI prints the same."""
from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import polars as pl
import pytest
from scipy.stats import norm

from app.dashboard import compute_dashboard, dashboard_json, load_frames
from fixtures_store import friendbench_like_plan, make_store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fb(tmp_path):
    plan = friendbench_like_plan(tmp_path, n_stimuli=16, n_raters=6)
    store = make_store(tmp_path / "fb.duckdb", plan)
    dataset_id = store.cursor().execute("SELECT id FROM dataset WHERE name = 'Dyads'").fetchall()[0][0]
    yield store, dataset_id, plan
    store.close()


def _rate(k: int, n: int, correction: str) -> float:
    if correction == "loglinear":
        return (k + 0.5) / (n + 1)
    return 1 / (2 * n) if k == 0 else (1 - 1 / (2 * n) if k == n else k / n)


def expected_signal(rows: pl.DataFrame, truth: dict[str, str], correction: str) -> dict[tuple, tuple[float, float, float]]:
    """(model, modality) -> (accuracy, d', c) counted in plain Python from the plan's own rows."""
    out = {}
    for (model, modality), group in rows.group_by(["model", "modality"]):
        hits = fa = n_sig = n_noise = right = 0
        for stim, answer in zip(group["stimulus"], group["answer"]):
            t = truth[stim]
            right += answer == t
            if t == "familiar":
                n_sig += 1
                hits += answer == "familiar"
            else:
                n_noise += 1
                fa += answer == "familiar"
        zh, zf = norm.ppf(_rate(hits, n_sig, correction)), norm.ppf(_rate(fa, n_noise, correction))
        out[(model, modality)] = (right / len(group), zh - zf, -(zh + zf) / 2)
    return out


@pytest.mark.parametrize("correction", ["loglinear", "half_over_n"])
def test_friendbench_accuracy_and_signal_detection_match_scipy(fb, correction):
    store, dataset_id, plan = fb
    truth = dict(zip(plan.frame("stimuli")["external_id"], plan.frame("stimuli")["ground_truth"]))
    expected = expected_signal(plan.frame("predictions"), truth, correction)
    ratings = plan.frame("human_ratings").rename({"condition": "modality"}).with_columns(model=pl.lit("humans"))
    expected |= expected_signal(ratings, truth, correction)
    table = compute_dashboard(load_frames(store, dataset_id), correction).table("friendbench.signal")
    assert table.frame.height == len(expected) == 12
    for row in table.frame.iter_rows(named=True):
        accuracy, d_prime, c = expected[(row["model"], row["modality"])]
        assert row["accuracy"] == pytest.approx(accuracy)
        assert row["d_prime"] == pytest.approx(d_prime, abs=1e-9)
        assert row["criterion"] == pytest.approx(c, abs=1e-9)
        assert row["correction"] == correction
    assert ("1/(2N)" if correction == "half_over_n" else "log-linear") in table.title


def test_each_row_carries_the_stimuli_behind_it(fb):
    store, dataset_id, plan = fb
    dashboard = compute_dashboard(load_frames(store, dataset_id))
    table = dashboard.table("friendbench.accuracy")
    ids = dict(store.cursor().execute("SELECT external_id, id FROM stimulus").fetchall())
    for i, row in enumerate(table.frame.iter_rows(named=True)):
        if row["model"] == "humans":
            source = plan.frame("human_ratings").filter(pl.col("condition") == row["modality"])
        else:
            source = plan.frame("predictions").filter((pl.col("model") == row["model"])
                                                      & (pl.col("modality") == row["modality"]))
        assert table.stimulus_ids[i] == sorted(ids[s] for s in set(source["stimulus"]))


def test_cli_json_prints_the_same_figures(fb, tmp_path):
    store, dataset_id, _plan = fb
    in_process = compute_dashboard(load_frames(store, dataset_id), "half_over_n").table("friendbench.signal")
    path = store.path
    store.close()
    result = subprocess.run([sys.executable, "main.py", "metrics", "--db", str(path), "--dataset", "Dyads",
                             "--correction", "half_over_n", "--json"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    (dataset,) = printed["datasets"]
    assert dataset["correction"] == "half_over_n"
    rows = {(r["model"], r["modality"]): r for t in dataset["tables"] if t["key"] == "friendbench.signal"
            for r in t["rows"]}
    for row in in_process.frame.iter_rows(named=True):
        shown = rows[(row["model"], row["modality"])]
        assert shown["d_prime"] == pytest.approx(row["d_prime"])
        assert shown["criterion"] == pytest.approx(row["criterion"])
        assert shown["accuracy"] == pytest.approx(row["accuracy"])


def test_cli_text_output_and_unknown_dataset(fb, capsys):
    from app.cli_metrics import metrics_main

    store, _dataset_id, _plan = fb
    path = store.path
    store.close()
    assert metrics_main(["--db", str(path)]) == 0
    out = capsys.readouterr().out
    assert "FriendBench accuracy" in out and "humans" in out and "log-linear" in out
    assert metrics_main(["--db", str(path), "--dataset", "nope"]) == 1
    assert "no dataset named 'nope'" in capsys.readouterr().err


def test_methods_paragraph_states_each_figures_method_and_n(fb, capsys):
    from app.cli_metrics import metrics_main

    store, _dataset_id, _plan = fb
    path = store.path
    doc = dashboard_json(store)
    store.close()
    assert metrics_main(["--db", str(path), "--methods"]) == 0
    paragraph = capsys.readouterr().out.strip()
    assert "\n" not in paragraph and paragraph.startswith("Figures of Dyads (friendbench) were recomputed by Thinslice")
    for table in doc["datasets"][0]["tables"]:
        counts = [r["n_stimuli"] for r in table["rows"]]
        assert f"{table['title']}: {table['note'].rstrip('.')} ({len(counts)} rows" in paragraph
    assert "log-linear" in paragraph


def test_dashboard_json_has_no_nan(fb):
    store, _dataset_id, _plan = fb
    text = json.dumps(dashboard_json(store), allow_nan=False)
    assert "Dyads" in text
