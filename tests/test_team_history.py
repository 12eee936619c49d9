"""The team's history is written by the server alone: a member cannot insert a history event, not even in
their own name about their own label; conflicts and label-set changes are recorded by the server's
triggers and functions, in the name of the member the server saw."""
from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg.types.json import Jsonb

from storage import team_server
from tests.pg_server import Client, pg_server  # noqa: F401  (the session's cluster)


def _history(url: str) -> list[tuple[str, str, str | None]]:
    with team_server.connect(url) as con:
        return [tuple(r) for r in con.execute("SELECT member, action, after->>'label'"
                                              " FROM thinslice.annotation_event ORDER BY id").fetchall()]


def test_a_member_cannot_insert_history_and_the_server_records_conflicts_itself(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    ana_url, ben_url = pg_server.add_member(url, "ana"), pg_server.add_member(url, "ben")
    lea_url = pg_server.add_member(url, "lea", lead=True)
    ana = Client(tmp_path / "ana.duckdb", ana_url, "ana")
    try:
        ana.show("a")
        ana.model.add_label("vocal", "laugh", 1.0, 2.0)
    finally:
        ana.close()
    with team_server.connect(url) as con:
        [row] = team_server.annotations(con)
    before = _history(url)
    with team_server.connect(ana_url) as con:
        # not in her own name, about her own label, with any action
        for action in ("delete", "update", "conflict"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                con.execute("INSERT INTO thinslice.annotation_event (edit_uid, annotation_uid, dataset, stimulus,"
                            " member, action, base_revision, after) VALUES (%s, %s, 'Dyads', 'a', 'ana', %s, 1,"
                            " '{\"label\": \"forged\"}')", [str(uuid.uuid4()), str(row["uid"]), action])
        # nor a label set's history
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            con.execute("INSERT INTO thinslice.label_set_event (name, document) VALUES ('vocal', NULL)")
        # the conflict recorder writes only a true conflict of a label the caller may write
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="no conflict"):
            con.execute("SELECT thinslice.record_conflict(%s)", [Jsonb({
                "edit_uid": str(uuid.uuid4()), "uid": str(row["uid"]), "base_revision": 1, "after": {}})])
    with team_server.connect(ben_url) as con:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="not yours"):
            con.execute("SELECT thinslice.record_conflict(%s)", [Jsonb({
                "edit_uid": str(uuid.uuid4()), "uid": str(row["uid"]), "base_revision": 0, "after": {}})])
    assert _history(url) == before == [("ana", "create", "laugh")]

    # a real conflict is still recorded, by the server, in the name of who lost
    desk = Client(tmp_path / "desk.duckdb", ana_url, "ana")
    laptop = Client(tmp_path / "laptop.duckdb", ana_url, "ana")
    try:
        for client in (desk, laptop):
            client.session.catch_up()
            client.show("a")
        [on_desk], [on_laptop] = desk.model.annotations(), laptop.model.annotations()
        desk.session.stop()   # the desk edits offline, the laptop online: the desk's edit then conflicts
        desk.model.relabel([on_desk.id], "cough")
        laptop.model.relabel([on_laptop.id], "sigh")
    finally:
        laptop.close()
        desk.store.close()
    again = Client(tmp_path / "desk.duckdb", ana_url, "ana", fresh=False)
    again.close()
    assert _history(url)[1:] == [("ana", "update", "sigh"), ("ana", "conflict", "cough")]

    # a lead's change of a label set, and its deletion, are recorded by the server too, in the lead's name
    lea = Client(tmp_path / "lea.duckdb", lea_url, "lea")
    try:
        lea.model.save_label_set("gesture", description="hands")
        lea.model.delete_label_set("gesture")
    finally:
        lea.close()
    with team_server.connect(url) as con:
        events = con.execute("SELECT member, name, document->>'description' FROM thinslice.label_set_event"
                             " ORDER BY id").fetchall()
    assert events == [("lea", "gesture", "hands"), ("lea", "gesture", None)]
