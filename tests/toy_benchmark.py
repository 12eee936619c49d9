"""A toy fifth benchmark, riddles, in a temporary package of its own: its module and the
`*.dist-info/entry_points.txt` pip would write, registering it in `thinslice.benchmarks`; and a store of its
dataset made by the command line in a fresh interpreter with the package on its path, as an installed copy
would run. Shared by the Qt-free and the window tests of the toy."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent

MODULE = '''
"""Riddles: a one-word answer, right when it is the riddle's answer."""
import polars as pl

from app.benchmarks import generic
from app.benchmarks.profile import BenchmarkProfile, KindProfile
from app.prompt_template import PromptTemplate

PROMPT = PromptTemplate("riddles.answer", "Riddles", "Answer a riddle in one word.",
                        "You solve riddles.", "Answer the riddle with one word.")


def answer_of(text):
    return (text or "").strip().strip(".!").lower() or None


def score_reply(detail, text):
    answer = answer_of(text)
    truth = (detail.ground_truth or "").lower()
    return answer, (answer == truth if answer and truth else None)


def interpret(plan, log):
    predictions = plan.frame("predictions")
    if not predictions.height or plan.known_stimuli is None:
        return
    truths = dict(plan.known_stimuli.select("external_id", "ground_truth").iter_rows())
    answers = [answer_of(a if a is not None else r) for a, r in predictions.select("answer", "raw_output").iter_rows()]
    plan.frames["predictions"] = predictions.with_columns(
        pl.Series("answer", answers, dtype=pl.String),
        pl.Series("correct", [a == (truths.get(s) or "").lower() if a else None
                              for a, s in zip(answers, predictions["stimulus"])], dtype=pl.Boolean))


PROFILE = BenchmarkProfile("riddles", "Riddles", interpret, score_reply, generic.dashboard_tables,
                           kinds=(KindProfile("riddle", "riddle", template=PROMPT),), asks_unknown_kinds=True)
'''


def write_toy(folder: Path) -> Path:
    """`folder` holding the toy benchmark's module and its distribution's entry points."""
    (folder / "toy_riddles.py").write_text(textwrap.dedent(MODULE))
    info = folder / "toy_riddles-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-riddles\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[thinslice.benchmarks]\nriddles = toy_riddles:PROFILE\n")
    return folder


def run(toy: Path, *argv: str, code: str | None = None) -> subprocess.CompletedProcess:
    """`thinslice ARGV` (or a script) in a fresh interpreter with the toy package on its path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(toy), str(ROOT), str(TESTS)])}
    command = [sys.executable, "-c", code] if code is not None else [sys.executable, str(ROOT / "main.py"), *argv]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done


def make_store(toy: Path, folder: Path) -> Path:
    """A store in `folder` holding the riddles dataset (three riddles) and one model's answers to them."""
    (folder / "riddles.csv").write_text(
        "id,text,label\n"
        "r1,What has keys but cannot open locks?,piano\n"
        "r2,What gets wetter the more it dries?,towel\n"
        "r3,What has hands but cannot clap?,clock\n")
    (folder / "answers.csv").write_text(
        "id,model,raw\nr1,tiny,Piano.\nr2,tiny,A sponge\nr3,tiny,clock\n")
    db = folder / "store.duckdb"
    run(toy, "import", "generic", str(folder / "riddles.csv"), "--db", str(db), "--create", "--dataset", "Riddles",
        "--map", "stimulus=id", "--map", "text=text", "--map", "label=label", "--set", "benchmark=riddles")
    run(toy, "import", "generic", str(folder / "answers.csv"), "--db", str(db), "--dataset", "Riddles",
        "--map", "stimulus=id", "--map", "model=model", "--map", "raw=raw")
    return db
