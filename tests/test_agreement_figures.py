"""Agreement figures match the reference implementations on generated data."""
from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa as sm_fleiss

from app.agreement import (cohen_kappa, fleiss_kappa, frame_values, interval_agreement, krippendorff_alpha,
                           whole_agreement)
from storage.annotations import Annotation

LABELS = ["laugh", "sigh", "overlap"]


def ann(ident, stimulus, annotator, label, start=None, end=None, label_set="cues"):
    return Annotation(ident, stimulus, annotator, label_set, label, start, end)


@pytest.mark.parametrize("seed", range(5))
def test_formulas_match_references(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, 200)
    noisy = [np.where(rng.random(200) < 0.3, rng.integers(0, 4, 200), truth) for _ in range(4)]
    matrix = np.array(noisy)
    value, n = cohen_kappa(matrix[0], matrix[1])
    assert value == pytest.approx(cohen_kappa_score(matrix[0], matrix[1]), abs=1e-12) and n == 200
    table, _ = aggregate_raters(matrix.T)
    assert fleiss_kappa(matrix)[0] == pytest.approx(sm_fleiss(table, method="fleiss"), abs=1e-12)
    missing = matrix.copy()
    missing[rng.random(missing.shape) < 0.2] = -1
    reference = krippendorff.alpha(reliability_data=np.where(missing < 0, np.nan, missing).astype(float),
                                   level_of_measurement="nominal")
    assert krippendorff_alpha(missing)[0] == pytest.approx(reference, abs=1e-10)


def test_whole_labels_with_missing_annotator_and_disagreements():
    rng = np.random.default_rng(3)
    items, ident = [], 0
    codes = {name: [] for name in ("ana", "bo", "cy")}
    for stimulus in range(60):
        base = rng.integers(0, 2)
        for name in codes:
            choice = base if rng.random() > 0.25 else 1 - base
            if name == "cy" and stimulus % 5 == 0:
                codes[name].append(np.nan)
                continue
            ident += 1
            items.append(ann(ident, stimulus, name, ["familiar", "stranger"][choice], label_set="familiarity"))
            codes[name].append(float(choice))
    report = whole_agreement(items, "familiarity")
    figures = {r.measure: r for r in report.results}
    assert "cohen_kappa" not in figures  # three annotators
    data = np.array([codes[n] for n in ("ana", "bo", "cy")])
    assert figures["krippendorff_alpha"].value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-10)
    complete = data[:, ~np.isnan(data).any(axis=0)].astype(int)
    assert figures["fleiss_kappa"].value == pytest.approx(sm_fleiss(aggregate_raters(complete.T)[0]), abs=1e-12)
    assert figures["fleiss_kappa"].n_units == complete.shape[1]
    assert figures["krippendorff_alpha"].grid_s is None and "Krippendorff" in figures["krippendorff_alpha"].formula
    expected = [s for s in range(60) if len({codes[n][s] for n in codes if not math.isnan(codes[n][s])}) > 1]
    assert [d.stimulus_id for d in report.disagreements] == expected


def naive_frames(labels, duration, grid):
    """Independent reading of the frame rule: a frame takes every label whose range holds its centre."""
    out = []
    for i in range(int(round(duration / grid))):
        centre = (i + 0.5) * grid
        inside = sorted({a.label for a in labels if a.start_s <= centre < a.end_s})
        out.append("+".join(inside) or "none")
    return out


def test_time_ranges_on_a_grid_match_references():
    rng = np.random.default_rng(11)
    items, ident = [], 0
    durations = {1: 20.0, 2: 12.0}
    for stimulus, duration in durations.items():
        for name in ("ana", "bo"):
            for _ in range(15):
                start = float(rng.uniform(0, duration - 1))
                ident += 1
                items.append(ann(ident, stimulus, name, str(rng.choice(LABELS)), round(start, 3),
                                 round(start + float(rng.uniform(0.1, 1.5)), 3)))
    report = interval_agreement(items, "cues", durations, grid_s=0.01)
    frames = {n: [] for n in ("ana", "bo")}
    for stimulus, duration in durations.items():
        for name in frames:
            mine = [a for a in items if a.stimulus_id == stimulus and a.annotator == name]
            expected = naive_frames(mine, duration, 0.01)
            assert frame_values(mine, duration, 0.01) == expected
            frames[name] += expected
    figures = {r.measure: r for r in report.results}
    assert figures["cohen_kappa"].value == pytest.approx(cohen_kappa_score(frames["ana"], frames["bo"]), abs=1e-12)
    assert figures["cohen_kappa"].n_units == 3200 and figures["cohen_kappa"].grid_s == 0.01
    assert figures["cohen_kappa"].unit == "10 ms frame"
    categories = sorted(set(frames["ana"]) | set(frames["bo"]))
    data = np.array([[categories.index(v) for v in frames[n]] for n in frames], dtype=float)
    assert figures["krippendorff_alpha"].value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-10)
    # every disagreement run really disagrees, and the runs cover every disagreeing frame
    covered = 0
    for d in report.disagreements:
        assert len(set(d.labels.values())) == 2
        covered += round((d.end_s - d.start_s) / 0.01)
    assert covered == sum(a != b for a, b in zip(frames["ana"], frames["bo"]))


def test_undefined_figures_say_why():
    items = [ann(1, 1, "ana", "laugh", 0.0, 1.0), ann(2, 1, "bo", "laugh", 0.0, 1.0)]
    report = interval_agreement(items, "cues", {1: 1.0})
    assert all(math.isnan(r.value) and r.reason for r in report.results)
    assert report.disagreements == []


def test_interval_agreement_without_any_interval_labels_is_empty_not_an_error():
    items = [ann(1, 1, "ana", "familiar", label_set="familiarity"), ann(2, 1, "bo", "stranger", label_set="familiarity")]
    report = interval_agreement(items, "familiarity", {1: 2.0})
    assert report.results == [] and report.disagreements == []
