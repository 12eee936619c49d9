"""Building small stores through the real import path (plan -> write_plan), for tests and benchmarks."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.store import Store


def friendbench_like_plan(root: Path, n_stimuli: int = 12, models: tuple[str, ...] = ("alpha", "beta", "gamma"),
                          modalities: tuple[str, ...] = ("text", "audio", "video"), n_raters: int = 5,
                          name: str = "Dyads", seed: int = 1) -> ImportPlan:
    rng = np.random.default_rng(seed)
    plan = ImportPlan(DatasetInfo(name, "friendbench", root, "generated in a test", synthetic=True), "test")
    truths = ["familiar" if i % 2 == 0 else "stranger" for i in range(n_stimuli)]
    ids = [f"clip-{i:03d}" for i in range(n_stimuli)]
    plan.add("stimuli", [{"external_id": s, "kind": "dyad", "ground_truth": t, "title": f"Dyad {i}",
                          "meta": json.dumps({"vendor": f"V{i % 3}", "gender": "same" if i % 4 < 2 else "mixed"})}
                         for i, (s, t) in enumerate(zip(ids, truths))])
    plan.add("segments", [{"stimulus": s, "ord": k, "speaker": "AB"[k % 2], "start_s": 2.0 * k,
                           "end_s": 2.0 * k + 1.5, "text": f"turn {k} of {s}",
                           "words": json.dumps([{"word": "turn", "start": 2.0 * k, "end": 2.0 * k + 0.4}])}
                          for s in ids for k in range(3)])
    plan.add("media", [{"stimulus": s, "role": f"audio:{p}", "path": f"media/{s}_{p}.wav", "present": False}
                       for s in ids for p in "AB"])
    preds, judg = [], []
    for m_i, model in enumerate(models):
        for modality in modalities:
            for s, t in zip(ids, truths):
                answer = t if rng.random() < 0.5 + 0.1 * m_i else ("stranger" if t == "familiar" else "familiar")
                preds.append({"stimulus": s, "model": model, "modality": modality, "answer": answer,
                              "raw_output": f"I think they are {answer}.", "correct": answer == t})
                judg.append({"stimulus": s, "model": model, "modality": modality, "judge": "judge-x",
                             "criterion": "C1", "score": float(rng.integers(1, 6)), "scale_max": 5.0,
                             "rationale": f"reason for {s}"})
    plan.add("predictions", preds)
    plan.add("judgments", judg)
    ratings = []
    for s, t in zip(ids, truths):
        for r in range(n_raters):
            for modality in modalities:
                answer = t if rng.random() < 0.65 else ("stranger" if t == "familiar" else "familiar")
                ratings.append({"stimulus": s, "rater": f"r{r}", "condition": modality, "answer": answer,
                                "correct": answer == t})
    plan.add("human_ratings", ratings)
    return plan


def big_predictions_plan(root: Path, n_stimuli: int, n_models: int, name: str = "Big") -> ImportPlan:
    """n_stimuli x n_models predictions, built as frames (no Python loops per row)."""
    plan = ImportPlan(DatasetInfo(name, "generic", root, "generated", synthetic=True), "test")
    ids = pl.Series("external_id", [f"s{i:07d}" for i in range(n_stimuli)])
    truth = pl.Series("ground_truth", np.where(np.arange(n_stimuli) % 2 == 0, "familiar", "stranger"))
    plan.add("stimuli", pl.DataFrame([ids, truth]).with_columns(pl.lit("generic").alias("kind")))
    frames = []
    for m in range(n_models):
        correct = (np.arange(n_stimuli) * (m + 7)) % 3 != 0
        frames.append(pl.DataFrame({"stimulus": ids, "model": f"model-{m:02d}", "modality": "text",
                                    "answer": np.where(correct, truth.to_numpy(), "other"), "correct": correct}))
    plan.add("predictions", pl.concat(frames))
    return plan


def make_store(path: Path, plan: ImportPlan) -> Store:
    store = Store.open(path)
    write_plan(store, plan)
    return store
