"""The command line as a script would use it: info, import with a mapping, export and import back."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl

from fixtures_store import friendbench_like_plan, make_store

ROOT = Path(__file__).resolve().parents[1]


def thinslice(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True,
                          timeout=180)


def test_import_is_all_or_nothing_and_idempotent_from_the_command_line(tmp_path):
    db = tmp_path / "s.duckdb"
    make_store(db, friendbench_like_plan(tmp_path)).close()
    before = json.loads(thinslice("info", "--db", str(db)).stdout)
    good = tmp_path / "preds.csv"
    pl.DataFrame({"clip": [f"clip-{i:03d}" for i in range(12)], "system": ["newbie"] * 12,
                  "pred": ["familiar"] * 12}).write_csv(good)
    mapping = ["--map", "stimulus=clip", "--map", "model=system", "--map", "answer=pred"]
    dry = thinslice("import", "generic", str(good), "--db", str(db), "--dataset", "Dyads", *mapping, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["counts"]["predictions"] == 12
    assert json.loads(thinslice("info", "--db", str(db)).stdout) == before
    bad = tmp_path / "bad.csv"
    bad.write_text("clip,system,pred\nclip-000,newbie,familiar\nno-such-clip,newbie,stranger\n")
    failed = thinslice("import", "generic", str(bad), "--db", str(db), "--dataset", "Dyads", *mapping,
                       "--set", "stimuli_exist=true")
    assert failed.returncode != 0 and "no-such-clip" in failed.stderr and "Traceback" not in failed.stderr
    assert json.loads(thinslice("info", "--db", str(db)).stdout) == before
    for _ in range(2):
        done = thinslice("import", "generic", str(good), "--db", str(db), "--dataset", "Dyads", *mapping)
        assert done.returncode == 0, done.stderr
    after = json.loads(thinslice("info", "--db", str(db)).stdout)["datasets"][0]["counts"]
    assert after["predictions"] == before["datasets"][0]["counts"]["predictions"] + 12
    assert after["models"] == before["datasets"][0]["counts"]["models"] + 1


def test_annotations_exported_then_imported_back_through_the_command_line(tmp_path):
    db = tmp_path / "s.duckdb"
    plan = friendbench_like_plan(tmp_path, n_stimuli=3)
    plan.add("annotations", [{"stimulus": "clip-001", "annotator": "ana", "label_set": "vocal cues",
                              "label": "laugh", "start_s": 1.25, "end_s": 2.5}])
    make_store(db, plan).close()
    out = tmp_path / "labels.TextGrid"
    exported = thinslice("export", "textgrid", str(out), "--db", str(db), "--dataset", "Dyads")
    assert exported.returncode == 0, exported.stderr
    fresh = tmp_path / "fresh.duckdb"
    make_store(fresh, friendbench_like_plan(tmp_path, n_stimuli=3)).close()
    unnamed = thinslice("annotations", "import", "textgrid", str(out), "--db", str(fresh), "--dataset", "Dyads")
    # the file name is not a stimulus id: the message names the file and the way out
    assert unnamed.returncode == 1 and "labels.TextGrid" in unnamed.stderr and "--stimulus" in unnamed.stderr
    imported = thinslice("annotations", "import", "textgrid", str(out), "--db", str(fresh), "--dataset", "Dyads",
                         "--stimulus", "clip-001")
    assert imported.returncode == 0, imported.stderr
    assert "added 1 labels" in imported.stdout
    import duckdb
    con = duckdb.connect(str(fresh), read_only=True)
    assert con.execute("SELECT annotator, label_set, label, start_s, end_s FROM annotation").fetchall() == [
        ("ana", "vocal cues", "laugh", 1.25, 2.5)]
    con.close()
