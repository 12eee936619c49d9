"""A fifth benchmark is one module and one registration: a toy benchmark of riddles, written in a temporary
package (a module and its `*.dist-info/entry_points.txt` on the path, as pip installs it), is found through
the `thinslice.benchmarks` entry point with no edit to the app; its release is read by its own reader, found
through the `thinslice.importers` entry point, and its answers through the generic one, interpreted and scored
by its own rules, listed, scored on the dashboard, asked live against
a local server with its own question and its labels exported. Each step runs in a fresh interpreter with the
package on its path, as an installed copy would (the window's part: `test_toy_benchmark_gui.py`)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toy_benchmark import ROOT, make_store, run, write_toy


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    return write_toy(tmp_path_factory.mktemp("toy_package"))


@pytest.fixture(scope="module")
def store(toy, tmp_path_factory) -> Path:
    return make_store(toy, tmp_path_factory.mktemp("riddles"))


def test_the_toy_profile_is_found_through_its_entry_point_beside_the_built_ins(toy):
    shown = run(toy, code="from app.benchmarks import profiles, kind_profile; "
                          "print(list(profiles())); print(kind_profile('riddle', 'riddles').template.name)")
    names, template = shown.stdout.splitlines()
    assert json.loads(names.replace("'", '"'))[-1] == "riddles" and "friendbench" in names
    assert template == "riddles.answer"


def test_without_the_package_the_toy_is_unknown():
    from app.benchmarks import profiles
    assert "riddles" not in profiles()


def test_the_release_is_read_by_the_toy_s_own_reader_found_by_its_file(toy, store):
    listed = run(toy, "import", "--list").stdout
    assert "riddles" in listed and "Riddles release (.riddles)" in listed
    kinds = run(toy, code=(
        "import duckdb; c = duckdb.connect(%r, read_only=True); "
        "print(c.execute('SELECT DISTINCT s.kind, d.benchmark FROM stimulus s JOIN dataset d ON d.id = s.dataset_id')"
        ".fetchall())" % str(store))).stdout.strip()
    assert kinds == "[('riddle', 'riddles')]"


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


def test_a_riddle_s_labels_are_exported_as_written(toy, store, tmp_path):
    copy = tmp_path / "labelled.duckdb"
    copy.write_bytes(store.read_bytes())
    labels = tmp_path / "labels.csv"
    labels.write_text("stimulus,annotator,label_set,label,value,note\nr2,ana,difficulty,hard,,a pun\n")
    run(toy, "annotations", "import", "csv", str(labels), "--db", str(copy), "--dataset", "Riddles")
    out = tmp_path / "out.csv"
    run(toy, "export", "csv", str(out), "--db", str(copy), "--dataset", "Riddles")
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["stimulus"], r["annotator"], r["label_set"], r["label"], r["note"]) for r in rows] == [
        ("r2", "ana", "difficulty", "hard", "a pun")]


def test_an_entry_point_that_is_no_profile_is_refused_in_one_line_naming_it(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "broken_bench.py").write_text("PROFILE = 'not a profile'\n")
    info = broken / "broken_bench-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-bench\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[thinslice.benchmarks]\nbroken = broken_bench:PROFILE\n")
    done = subprocess.run(
        [sys.executable, "-c", "from app.benchmarks import BenchmarkProfileError, profiles\n"
                               "try:\n    profiles()\nexcept BenchmarkProfileError as exc:\n    print(exc)"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(broken), str(ROOT)])},
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("the thinslice.benchmarks entry point 'broken' is 'not a profile', not the "
                                   "BenchmarkProfile named 'broken'")
