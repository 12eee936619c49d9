"""FriendBench answers read column by column: every row gets exactly what the one rule says for it alone (the
rule a live reply meets), whatever mix of given answers, raw outputs, flags, truths and metadata a release has."""
from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl

from app.benchmarks import interpret_plan
from app.benchmarks.friendbench import answer_of, is_correct
from storage.importers.plan import DatasetInfo, ImportPlan

ANSWERS = ["familiar", "stranger", None, "Familiar", " stranger ", "maybe friends", "no idea", ""]
RAWS = [None, "They are not strangers at all.", "Answer: stranger", "hmm", "They don't know each other.",
        "could be familiar, could be strangers", "FAMILIAR", "We never met before, said one."]
TRUTHS = ["familiar", "stranger", " Stranger", None]
METAS = [None, '{"turns": 3}', '{"unparsed": false, "k": [1, 2]}']


def _plan(rows: int, seed: int) -> tuple[ImportPlan, dict[str, str | None]]:
    rng = random.Random(seed)
    clips = [f"clip-{i}" for i in range(rows // 4 + 1)]
    plan = ImportPlan(DatasetInfo("FB", "friendbench", Path("."), "results.csv"), importer="generic")
    truth = {clip: rng.choice(TRUTHS) for clip in clips}
    # a clip listed twice: its later truth is the one that counts, as the later row would be written
    twice = clips[0]
    plan.add("stimuli", pl.DataFrame({"external_id": [*clips, twice],
                                      "ground_truth": [*[truth[c] for c in clips], "familiar"]}))
    truth[twice] = "familiar"
    # clips already stored: their stored truth counts only where the plan states none
    known = [f"stored-{i}" for i in range(5)]
    plan.known_stimuli = pl.DataFrame({"external_id": [*known, clips[1]], "kind": "dyad",
                                       "ground_truth": ["stranger"] * 5 + ["stranger"], "meta": None})
    truth.update({k: "stranger" for k in known})
    if truth[clips[1]] is None:
        truth[clips[1]] = "stranger"
    every = clips + known
    plan.add("predictions", pl.DataFrame({
        "stimulus": [rng.choice(every) for _ in range(rows)],
        "model": [f"m{rng.randrange(3)}" for _ in range(rows)],
        "raw_output": [rng.choice(RAWS) for _ in range(rows)],
        "answer": [rng.choice(ANSWERS) or None for _ in range(rows)],
        "correct": [rng.choice([True, False, None]) for _ in range(rows)],
        "meta": [rng.choice(METAS) for _ in range(rows)],
    }, schema_overrides={"correct": pl.Boolean}))
    return plan, truth


def test_every_answer_is_what_the_rule_says_for_its_row_alone():
    for seed in range(5):
        plan, truth = _plan(2_000, seed)
        before = plan.frame("predictions")
        after = interpret_plan(plan, skip_bad=False).frame("predictions")
        assert after.height == before.height
        unparsed = 0
        for old, new in zip(before.iter_rows(named=True), after.iter_rows(named=True)):
            verdict = answer_of(old["answer"], old["raw_output"])
            assert new["answer"] == verdict
            assert new["correct"] == is_correct(verdict, truth.get(old["stimulus"]), old["correct"])
            if verdict is None:
                unparsed += 1
                assert json.loads(new["meta"]) == {**json.loads(old["meta"] or "{}"), "unparsed": True}
            else:
                assert new["meta"] == old["meta"]
            assert (new["stimulus"], new["model"], new["raw_output"]) == (old["stimulus"], old["model"],
                                                                         old["raw_output"])
        assert unparsed and plan.notes == [f"{unparsed} predictions without a familiar/stranger answer"]


def test_a_release_whose_answers_all_parse_has_no_note_and_keeps_its_metadata():
    plan = ImportPlan(DatasetInfo("FB", "friendbench", Path("."), "results.csv"), importer="generic")
    plan.add("stimuli", pl.DataFrame({"external_id": ["a", "b"], "ground_truth": ["familiar", "stranger"]}))
    plan.add("predictions", pl.DataFrame({"stimulus": ["a", "b", "a"], "model": ["m", "m", "n"],
                                          "answer": ["familiar", None, "Stranger"],
                                          "raw_output": [None, "Answer: stranger", None],
                                          "meta": ['{"x": 1}', None, None]}))
    out = interpret_plan(plan, skip_bad=False).frame("predictions")
    assert out.select("answer", "correct", "meta").rows() == [("familiar", True, '{"x": 1}'),
                                                               ("stranger", True, None),
                                                               ("stranger", False, None)]
    assert plan.notes == []
