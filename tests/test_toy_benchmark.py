"""A fifth benchmark is one module and one registration: a toy benchmark of riddles, written in a temporary
package (a module and its `*.dist-info/entry_points.txt` on the path, as pip installs it), is found through
the `thinslice.benchmarks` entry point with no edit to the app, and its datasets are imported through the
generic reader, interpreted and scored by its own rules, listed, scored on the dashboard and asked live
against a local server with its own question. Each step runs in a fresh interpreter with the package on
its path, as an installed copy would."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    """A folder holding the toy benchmark's module and its distribution's entry points."""
    folder = tmp_path_factory.mktemp("toy_package")
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


@pytest.fixture(scope="module")
def store(toy, tmp_path_factory) -> Path:
    """A store holding the riddles dataset (three riddles) and one model's answers to them."""
    folder = tmp_path_factory.mktemp("riddles")
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


def test_the_toy_profile_is_found_through_its_entry_point_beside_the_built_ins(toy):
    shown = run(toy, code="from app.benchmarks import profiles, kind_profile; "
                          "print(list(profiles())); print(kind_profile('generic', 'riddles').template.name)")
    names, template = shown.stdout.splitlines()
    assert json.loads(names.replace("'", '"'))[-1] == "riddles" and "friendbench" in names
    assert template == "riddles.answer"


def test_without_the_package_the_toy_is_unknown():
    from app.benchmarks import profiles
    assert "riddles" not in profiles()


def test_imported_answers_are_scored_by_the_toy_s_rules_and_listed(toy, store):
    rows = run(toy, code=(
        "import duckdb; c = duckdb.connect(%r, read_only=True); "
        "print(c.execute(\"SELECT benchmark FROM dataset WHERE name = 'Riddles'\").fetchall()); "
        "print(c.execute('SELECT s.external_id, p.answer, p.correct FROM prediction p "
        "JOIN stimulus s ON s.id = p.stimulus_id ORDER BY 1').fetchall())" % str(store))).stdout.splitlines()
    assert rows == ["[('riddles',)]", "[('r1', 'piano', True), ('r2', 'a sponge', False), ('r3', 'clock', True)]"]
    listed = run(toy, "list", "--db", str(store), "--dataset", "Riddles").stdout.splitlines()
    assert [line.split("\t")[0] for line in listed] == ["r1", "r2", "r3"]


def test_the_dashboard_scores_the_toy_s_answers(toy, store):
    figures = json.loads(run(toy, "metrics", "--db", str(store), "--dataset", "Riddles", "--json").stdout)
    dataset = figures["datasets"][0]
    assert dataset["benchmark"] == "riddles"
    table = next(t for t in dataset["tables"] if t["key"] == "generic.accuracy")
    row = table["rows"][0]
    assert row["model"] == "tiny" and row["n"] == 3 and abs(row["accuracy"] - 2 / 3) < 1e-9


def test_a_riddle_is_asked_live_with_the_toy_s_question_and_scored_by_its_rules(toy, store, tmp_path):
    copy = tmp_path / "live.duckdb"
    copy.write_bytes(store.read_bytes())
    script = textwrap.dedent(f'''
        import json
        from live_server import Reply, ScriptedServer
        from app.live import LiveSettings
        from app.live.service import AskOptions, LiveService
        from storage.store import Store
        store = Store.open({str(copy)!r})
        sid = store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'r2'").fetchone()[0]
        service = LiveService(store)
        with ScriptedServer([Reply(text="Towel.")]) as server:
            options = AskOptions(LiveSettings(server.base_url, "live-model", "THINSLICE_NO_KEY"), stream=False)
            result = service.ask(service.detail(sid), options)
        print(json.dumps([result.answer, result.correct, server.requests[0]["messages"]]))
        store.close()
    ''')
    answer, correct, messages = json.loads(run(toy, code=script).stdout.splitlines()[-1])
    assert (answer, correct) == ("towel", True)
    assert messages[0] == {"role": "system", "content": "You solve riddles."}
    assert messages[1]["content"] == "Answer the riddle with one word.\n\nWhat gets wetter the more it dries?"
