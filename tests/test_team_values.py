"""One value rule on both sides of a team: the server refuses what no store may hold (times that are not
finite, negative or end before they start; names with control characters), as the import path does; a row
written before that rule is skipped and reported by the member who meets it, and everyone else's edits keep
arriving; an edit the server refuses waits in the outbox, marked, and is never taken as sent."""
from __future__ import annotations

import json
import uuid

import psycopg
import pytest

from app.cli import dispatch
from storage import team_server
from app.team import join_team
from tests.pg_server import Client, member_store, pg_server  # noqa: F401  (the session's cluster)

GOOD = {"label_set": "vocal", "label": "laugh", "start_s": 1.0, "end_s": 2.0}


def _insert(url: str, **values) -> None:
    """A member's raw INSERT of their own label (row-level security allows it)."""
    row = {**GOOD, **values}
    with team_server.connect(url) as con:
        con.execute("INSERT INTO thinslice.annotation (uid, dataset, stimulus, annotator, label_set, label,"
                    " start_s, end_s) VALUES (%s, 'Dyads', 'a', current_user, %s, %s, %s, %s)",
                    [str(uuid.uuid4()), row["label_set"], row["label"], row["start_s"], row["end_s"]])


@pytest.mark.parametrize("values", [
    {"start_s": float("nan"), "end_s": float("nan")}, {"start_s": 0.0, "end_s": float("nan")},
    {"start_s": 0.0, "end_s": float("inf")}, {"start_s": float("-inf"), "end_s": 1.0},
    {"start_s": -1.0, "end_s": 1.0}, {"start_s": 2.0, "end_s": 1.0},
    {"label": "la\x01ugh"}, {"label_set": "vo\x1fcal"}, {"label": "la\x85ugh"}])
def test_the_server_refuses_values_no_store_may_hold(pg_server, values):  # noqa: F811
    url = pg_server.new_database()
    ana = pg_server.add_member(url, "ana")
    with pytest.raises(psycopg.errors.CheckViolation):
        _insert(ana, **values)
    _insert(ana)   # a good row goes in
    with team_server.connect(url) as con:
        assert con.execute("SELECT count(*) FROM thinslice.annotation").fetchone()[0] == 1


def test_a_row_written_before_the_rule_is_skipped_and_reported_and_sync_goes_on(pg_server, tmp_path, capsys):  # noqa: F811
    with team_server.connect(pg_server.url()) as con:
        con.execute("CREATE DATABASE values_before")
    url = pg_server.url("values_before")
    with team_server.connect(url) as con:
        team_server.migrate(con, target=2)   # a project whose rows predate the rule
    ana, ben = pg_server.add_member(url, "ana"), pg_server.add_member(url, "ben")
    _insert(ben, label="nan-row", start_s=float("nan"), end_s=float("nan"))
    _insert(ben, label="inf-row", start_s=0.0, end_s=float("inf"))
    _insert(ben, label="huge", start_s=0.0, end_s=1e308)
    with team_server.connect(url) as con:
        team_server.migrate(con)
    cleo_path, cleo_url = tmp_path / "cleo.duckdb", pg_server.add_member(url, "cleo")
    store = member_store(cleo_path)
    join_team(store, cleo_url, "cleo")
    store.close()
    assert dispatch(["team", "sync", "--db", str(cleo_path)]) == 0   # the command line says so too
    out = json.loads(capsys.readouterr().out)
    assert out["online"] and len(out["skipped"]) == 2 and out["waiting"] == 0
    cleo = Client(cleo_path, cleo_url, "cleo", fresh=False)
    anas = Client(tmp_path / "ana.duckdb", ana, "ana")
    try:
        anas.show("a")
        anas.model.add_label("vocal", "sigh", 3.0, 4.0)   # a later edit by someone else still arrives
        cleo.session.catch_up()
        labels = {(a.annotator, a.label, a.end_s) for a in cleo.model.store.for_stimulus(cleo.stimulus("a"))}
        assert labels == {("ben", "huge", 1e308), ("ana", "sigh", 4.0)}
    finally:
        anas.close()
        cleo.close()
    # a store that meets them in the window's session reports who and which label
    fresh = Client(tmp_path / "dan.duckdb", pg_server.add_member(url, "dan"), "dan")
    try:
        skipped = fresh.session.report.skipped
        assert len(skipped) == 2 and all(text.startswith("ben's label ") for text in skipped)
        assert any("'nan-row'" in text and "not a number" in text for text in skipped)
        assert any("'inf-row'" in text for text in skipped)
    finally:
        fresh.close()


def test_an_edit_the_server_refuses_waits_marked_until_a_later_edit_replaces_it(pg_server, tmp_path, capsys):  # noqa: F811
    url = pg_server.new_database()
    path = tmp_path / "ana.duckdb"
    ana = Client(path, pg_server.add_member(url, "ana"), "ana")
    try:
        ana.show("a")
        label = ana.model.add_label("vocal", "laugh", 1.0, 2.0)
        ana.model.set_label_note(label.id, "nul \x00 inside")   # kept here; PostgreSQL text cannot hold it
        # a later edit of the label carries its whole state, the note too: refused as well, kept as well
        ana.model.move(label.id, (1.5, 2.5))
        status = ana.session.status()
        assert status.waiting == 2 and len(status.refused) == 2
        assert all("refused the edit of ana's label 'laugh'" in text for text in status.refused)
        assert "2 refused by the server" in status.text()
    finally:
        ana.close()
    with team_server.connect(url) as con:
        assert con.execute("SELECT note, start_s, revision FROM thinslice.annotation").fetchall() == [(None, 1.0, 1)]
    assert dispatch(["team", "status", "--db", str(path)]) == 0   # and after a restart, still said
    out = json.loads(capsys.readouterr().out)
    assert out["waiting"] == 2 and len(out["refused"]) == 2 and "laugh" in out["refused"][0]

    again = Client(path, pg_server.add_member(url, "ana"), "ana", fresh=False)
    try:
        again.show("a")
        again.model.set_label_note(label.id, "fixed")   # the label's whole state, sendable again
        assert again.session.status().waiting == 0 and again.session.status().refused == ()
    finally:
        again.close()
    with team_server.connect(url) as con:
        assert con.execute("SELECT note, start_s, revision FROM thinslice.annotation").fetchall() == [("fixed", 1.5, 2)]
