"""`thinslice list` prints the stimulus ids a user can pass to --stimulus; a wrong name lists the right ones."""
from __future__ import annotations

from app.cli import dispatch
from fixtures_store import friendbench_like_plan, make_store


def store_file(tmp_path):
    path = tmp_path / "s.duckdb"
    make_store(path, friendbench_like_plan(tmp_path)).close()
    return path


def test_list_prints_every_id_kind_and_dataset(tmp_path, capsys):
    db = store_file(tmp_path)
    assert dispatch(["list", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 12
    assert lines[0] == "clip-000\tdyad\tDyads"


def test_list_filters_like_the_filter_bar(tmp_path, capsys):
    db = store_file(tmp_path)
    assert dispatch(["list", "--db", str(db), "--dataset", "Dyads", "--kind", "dyad",
                     "--filter", "truth=stranger", "--filter", "text=clip-00"]) == 0
    ids = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert ids == ["clip-001", "clip-003", "clip-005", "clip-007", "clip-009"]
    assert dispatch(["list", "--db", str(db), "--filter", "wrong=alpha"]) == 0
    wrong = {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()}
    assert dispatch(["list", "--db", str(db), "--filter", "correct=alpha"]) == 0
    right = {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()}
    assert wrong and right and not wrong & right and len(wrong | right) == 12


def test_a_wrong_dataset_or_kind_names_the_valid_ones(tmp_path, capsys):
    db = store_file(tmp_path)
    assert dispatch(["list", "--db", str(db), "--dataset", "Dyadz"]) == 1
    assert "Dyads" in capsys.readouterr().err
    assert dispatch(["list", "--db", str(db), "--kind", "mcq"]) == 1
    assert "dyad" in capsys.readouterr().err
    assert dispatch(["list", "--db", str(db), "--filter", "colour=red"]) == 2
    assert "truth" in capsys.readouterr().err
