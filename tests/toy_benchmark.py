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

# the reader of the riddles' own release format: a `.riddles` file, a riddle a line (id, riddle, answer by tabs)
READER = '''
"""Reads a riddles release: a `.riddles` file, one riddle a line: its id, the riddle and its answer, by tabs."""
from pathlib import Path

import polars as pl

from storage.errors import ImportFailed
from storage.importers.plan import DatasetInfo, ImportPlan


class RiddlesImporter:
    kind = "riddles"
    title = "Riddles release (.riddles)"
    version = 1

    def detect(self, path):
        return 0.9 if Path(path).suffix == ".riddles" else 0.0

    def plan(self, path, options):
        path = Path(path)
        rows = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            parts = line.split("\\t")
            if len(parts) != 3:
                raise ImportFailed(f"{path.name}:{number}: found {len(parts)} fields; expected id, riddle, answer")
            rows.append(parts)
        plan = ImportPlan(DatasetInfo(name=options.dataset_name or "Riddles", benchmark="riddles",
                                      root=path.parent, source=str(path)), importer=self.kind,
                          importer_version=self.version)
        plan.add("stimuli", pl.DataFrame({"external_id": [r[0] for r in rows], "kind": "riddle",
                                          "ground_truth": [r[2] for r in rows], "text": [r[1] for r in rows]}))
        plan.notes.append(f"read {len(rows)} riddles of {path.name}")
        return plan
'''


def write_toy(folder: Path) -> Path:
    """`folder` holding the toy benchmark's module and its distribution's entry points."""
    (folder / "toy_riddles.py").write_text(textwrap.dedent(MODULE))
    (folder / "toy_riddles_reader.py").write_text(textwrap.dedent(READER))
    info = folder / "toy_riddles-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-riddles\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[thinslice.benchmarks]\nriddles = toy_riddles:PROFILE\n\n"
                                           "[thinslice.importers]\nriddles = toy_riddles_reader:RiddlesImporter\n")
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
    (folder / "release.riddles").write_text(
        "r1\tWhat has keys but cannot open locks?\tpiano\n"
        "r2\tWhat gets wetter the more it dries?\ttowel\n"
        "r3\tWhat has hands but cannot clap?\tclock\n")
    (folder / "answers.csv").write_text(
        "id,model,raw\nr1,tiny,Piano.\nr2,tiny,A sponge\nr3,tiny,clock\n")
    db = folder / "store.duckdb"
    # the release through its own reader, found by its file (no kind named); the answers through the generic one
    run(toy, "import", "auto", str(folder / "release.riddles"), "--db", str(db), "--create", "--dataset", "Riddles")
    run(toy, "import", "generic", str(folder / "answers.csv"), "--db", str(db), "--dataset", "Riddles",
        "--map", "stimulus=id", "--map", "model=model", "--map", "raw=raw")
    return db
