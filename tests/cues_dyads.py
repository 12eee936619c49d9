"""Generated dyads with real audio for the cue tests: each participant's microphone holds a voiced tone
of known F0 exactly while their words are timed, and the turn-taking is the hand-worked dyad of
test_cues_conversation (gaps 0.5 and 0.3 s, one 0.2 s overlap, two backchannels)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from storage.importers.plan import DatasetInfo, ImportPlan

RATE = 16000
DURATION_S = 6.0
A_WORDS = [("so", 0.0, 0.3), ("what", 0.35, 0.6), ("do", 0.65, 0.9), ("you", 0.95, 1.2), ("think", 1.25, 1.6),
           ("about", 2.1, 2.4), ("it", 2.45, 2.7), ("me", 4.3, 4.6), ("too", 4.65, 5.0), ("yes", 5.4, 5.5)]
B_WORDS = [("mhm", 1.0, 1.3), ("well", 3.2, 3.5), ("i", 3.55, 3.7), ("like", 3.75, 4.0), ("it", 4.05, 4.5),
           ("great", 5.3, 5.6), ("then", 5.65, 5.9)]


def voiced_track(f0: float, words: list[tuple[str, float, float]]) -> np.ndarray:
    t = np.arange(int(DURATION_S * RATE)) / RATE
    wave = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6))
    wave = 0.2 * wave / np.max(np.abs(wave))
    on = np.zeros_like(t, dtype=bool)
    for _, start, end in words:
        on |= (t >= start) & (t < end)
    return np.where(on, wave, 0.0).astype(np.float32)


def f0_of(index: int) -> tuple[float, float]:
    """The participants' F0 in stimulus `index`: A rises with the index, B falls."""
    return 120.0 + 20.0 * index, 260.0 - 15.0 * index


def dyad_plan(root: Path, n: int = 4, name: str = "Generated dyads") -> ImportPlan:
    """n dyads; humans get the first half right and the second half wrong, model `m` the reverse."""
    plan = ImportPlan(DatasetInfo(name, "friendbench", root, "generated in a test", synthetic=True), "test")
    ids = [f"d{i}" for i in range(n)]
    plan.add("stimuli", [{"external_id": s, "kind": "dyad", "ground_truth": "familiar"} for s in ids])
    media, segments, ratings, predictions, labels = [], [], [], [], []
    for i, s in enumerate(ids):
        for speaker, f0, words in (("A", f0_of(i)[0], A_WORDS), ("B", f0_of(i)[1], B_WORDS)):
            path = root / f"{s}_{speaker}.wav"
            sf.write(path, voiced_track(f0, words), RATE, subtype="PCM_16")
            media.append({"stimulus": s, "role": f"audio:{speaker}", "path": path.name, "present": True,
                          "duration_s": DURATION_S, "sample_rate": RATE})
            segments.append({"stimulus": s, "ord": len(segments), "speaker": speaker, "start_s": words[0][1],
                             "end_s": words[-1][2], "text": " ".join(w for w, _, _ in words),
                             "words": json.dumps([{"word": w, "start": a, "end": b} for w, a, b in words]),
                             "media_role": f"audio:{speaker}"})
        right = i < n // 2
        ratings += [{"stimulus": s, "rater": f"r{k}", "condition": "audio", "answer": "x", "correct": right}
                    for k in range(3)]
        predictions.append({"stimulus": s, "model": "m", "modality": "audio", "answer": "x", "correct": not right})
        labels += [{"stimulus": s, "annotator": who, "label_set": "vocal cues", "label": "laugh",
                    "start_s": 0.5 + k, "end_s": 0.8 + k, "media_role": "audio:A"}
                   for who in ("ana", "ben") for k in range(i)]
    plan.add("media", media)
    plan.add("segments", segments)
    plan.add("human_ratings", ratings)
    plan.add("predictions", predictions)
    if labels:
        plan.add("annotations", labels)
    return plan


def dyad_store(folder: Path, n: int):
    """A store in `folder` holding the bundled label sets and `n` generated dyads (media under `folder/media`);
    returns the open store and the media folder."""
    from app.sample import import_label_sets
    from storage.importers.writer import write_plan
    from storage.store import Store

    root = folder / "media"
    root.mkdir()
    store = Store.open(folder / "tracks.duckdb")
    import_label_sets(store)
    write_plan(store, dyad_plan(root, n=n))
    return store, root
