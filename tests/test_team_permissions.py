"""The team server, not the client, decides who may change what: row-level security refuses another
member's label even through raw SQL in that member's role and from a modified client; only a lead writes the
consensus tier and the label sets; nobody rewrites or deletes history; a conflicting edit keeps both versions."""
from __future__ import annotations

import socket
import threading

import psycopg
import pytest

from app.changes import Topic
from storage import team_server
from tests.pg_server import Client, pg_server  # noqa: F401  (the session's cluster)


@pytest.fixture
def project(pg_server):  # noqa: F811
    url = pg_server.new_database()
    return url, {name: pg_server.add_member(url, name, lead=(name == "lea")) for name in ("ana", "ben", "lea")}


def _dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _server_rows(url):
    with team_server.connect(url) as con:
        return team_server.annotations(con)


def test_a_member_cannot_change_anothers_label_even_with_raw_sql(project, tmp_path):
    url, urls = project
    ana = Client(tmp_path / "ana.duckdb", urls["ana"], "ana")
    try:
        ana.show("a")
        ana.model.add_label("vocal", "laugh", 1.0, 2.0)
    finally:
        ana.close()
    [row] = _server_rows(url)
    with psycopg.connect(urls["ben"], autocommit=True) as ben:
        # ben reads ana's label ...
        assert ben.execute("SELECT label FROM thinslice.annotation").fetchall() == [("laugh",)]
        # ... but an UPDATE of it touches nothing, and he cannot write a row in her name
        assert ben.execute("UPDATE thinslice.annotation SET label = 'sigh'").rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            ben.execute("INSERT INTO thinslice.annotation (uid, dataset, stimulus, annotator, label_set, label)"
                        " VALUES (gen_random_uuid(), 'Dyads', 'a', 'ana', 'vocal', 'sigh')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            ben.execute("DELETE FROM thinslice.annotation")
        # nor take over her label by changing its annotator through the edit function
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            ben.execute("SELECT thinslice.apply_edit(%s::jsonb)", [psycopg.types.json.Jsonb({
                "edit_uid": "00000000-0000-0000-0000-000000000001", "uid": str(row["uid"]), "dataset": "Dyads",
                "stimulus": "a", "annotator": "ben", "base_revision": 1,
                "after": {"label_set": "vocal", "label": "sigh", "start_s": 1.0, "end_s": 2.0}})])
        # history: nobody rewrites or deletes it, nor writes an event in someone else's name
        for statement in ("UPDATE thinslice.annotation_event SET action = 'x'",
                          "DELETE FROM thinslice.annotation_event"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                ben.execute(statement)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            ben.execute("INSERT INTO thinslice.annotation_event (edit_uid, annotation_uid, dataset, stimulus, member,"
                        " action, base_revision) VALUES (gen_random_uuid(), gen_random_uuid(), 'Dyads', 'a', 'ana',"
                        " 'delete', 1)")
    # ana may change her own label by hand, but not around the history: the server writes the event itself
    with psycopg.connect(urls["ana"], autocommit=True) as ana_sql:
        assert ana_sql.execute("UPDATE thinslice.annotation SET label = 'giggle', revision = 99").rowcount == 1
    with team_server.connect(url) as con:
        [last] = team_server.history(con, "Dyads", "a")[:1]
        [now] = team_server.annotations(con)
    assert (last["member"], last["action"], last["before"]["label"], last["after"]["label"]) == \
        ("ana", "update", "laugh", "giggle")
    assert (now["revision"], now["updated_by"]) == (2, "ana")
    # not even the tables' owner can rewrite the history
    with psycopg.connect(url, autocommit=True) as owner:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="cannot be changed"):
            owner.execute("DELETE FROM thinslice.annotation_event")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="cannot be changed"):
            owner.execute("UPDATE thinslice.annotation_event SET member = 'ben'")
    assert [r["label"] for r in _server_rows(url)] == ["giggle"]


def test_a_modified_client_is_refused_and_shows_the_servers_label_again(project, tmp_path):
    url, urls = project
    ana = Client(tmp_path / "ana.duckdb", urls["ana"], "ana")
    # ben's copy of the program claims to be ana, so its own checks let him edit her label
    ben = Client(tmp_path / "ben.duckdb", urls["ben"], "ben", annotator="ana")
    try:
        ana.show("a")
        ben.show("a")
        arrived = threading.Event()
        ben.changes.subscribe([Topic.ANNOTATIONS], lambda change: arrived.set())
        label = ana.model.add_label("vocal", "laugh", 1.0, 2.0)
        assert arrived.wait(1.0)
        [copy] = ben.model.annotations()
        ben.model.relabel([copy.id], "sigh")
        assert "refused" in ben.session.status().message
        assert [a.label for a in ben.model.annotations()] == ["laugh"]   # back to what the server has
        assert [r["label"] for r in _server_rows(url)] == ["laugh"]
        assert ana.model.get(label.id).label == "laugh"
        assert ben.session.status().waiting == 0
    finally:
        ana.close()
        ben.close()


def test_a_lead_adjudicates_and_edits_label_sets_a_member_cannot(project, tmp_path):
    url, urls = project
    lea = Client(tmp_path / "lea.duckdb", urls["lea"], "lea", annotator="consensus")
    ben = Client(tmp_path / "ben.duckdb", urls["ben"], "ben", annotator="consensus")
    try:
        lea.show("a")
        ben.show("a")
        assert lea.session.status().lead and not ben.session.status().lead
        arrived = threading.Event()
        ben.changes.subscribe([Topic.ANNOTATIONS], lambda change: arrived.set())
        lea.model.set_whole("rating", "familiar")
        assert arrived.wait(1.0)
        assert [(r["annotator"], r["label"], r["updated_by"]) for r in _server_rows(url)] == \
            [("consensus", "familiar", "lea")]
        # ben may not write the consensus tier
        [whole] = ben.model.annotations()
        ben.model.set_whole("rating", "stranger")
        assert "refused" in ben.session.status().message
        assert [r["label"] for r in _server_rows(url)] == ["familiar"]
        assert [a.label for a in ben.model.annotations()] == ["familiar"]

        # the lead's label set reaches ben; ben's edit of a set is refused on the server
        sets = threading.Event()
        ben.changes.subscribe([Topic.LABEL_SETS], lambda change: sets.set())
        lea.model.add_labels("vocal", [("laugh", "a laugh"), ("sigh", None)])
        assert sets.wait(1.0)
        assert [l.name for l in ben.model.labels("vocal")] == ["laugh", "sigh"]
        ben.model.add_labels("vocal", [("cough", None)])
        assert "only a lead" in ben.session.status().message
        assert [l.name for l in ben.model.labels("vocal")] == ["laugh", "sigh"]   # back to the team's set
        with team_server.connect(url) as con:
            assert [l["name"] for l in team_server.label_sets(con)["vocal"][0]["labels"]] == ["laugh", "sigh"]
        # a set the lead deletes goes from ben's store too
        sets.clear()
        lea.model.save_label_set("scratch")
        assert sets.wait(1.0) and ben.model.label_set("scratch") is not None
        sets.clear()
        lea.model.delete_label_set("scratch")
        assert sets.wait(1.0) and ben.model.label_set("scratch") is None
    finally:
        lea.close()
        ben.close()


def test_a_conflicting_edit_is_reported_and_both_versions_are_kept(project, tmp_path, pg_server):  # noqa: F811
    url, urls = project
    desk = Client(tmp_path / "desk.duckdb", urls["ana"], "ana")
    laptop = Client(tmp_path / "laptop.duckdb", urls["ana"], "ana")
    try:
        desk.show("a")
        laptop.show("a")
        arrived = threading.Event()
        laptop.changes.subscribe([Topic.ANNOTATIONS], lambda change: arrived.set())
        label = desk.model.add_label("vocal", "laugh", 1.0, 2.0)
        assert arrived.wait(1.0)
        from app.team import TeamSession
        laptop.session.stop()                  # the laptop goes offline (its server address leads nowhere) ...
        laptop.session = TeamSession(laptop.store, laptop.model, url=f"postgresql://ana@127.0.0.1:{_dead_port()}/x",
                                     member="ana")
        laptop.session.start()
        assert not laptop.session.status().online
        [copy] = laptop.model.annotations()
        laptop.model.relabel([copy.id], "sigh")  # ... and ana relabels it there
        desk.model.relabel([label.id], "cough")  # while at the desk she relabels it too
        assert laptop.session.status().waiting == 1
        laptop.session.stop()
        laptop.session = TeamSession(laptop.store, laptop.model)
        laptop.session.start()                 # back online: the laptop's edit meets the desk's
        status = laptop.session.status()
        assert status.waiting == 0 and "conflicted" in status.message
        assert [a.label for a in laptop.model.annotations()] == ["cough"]
        with team_server.connect(url) as con:
            [row] = team_server.annotations(con)
            events = team_server.history(con, "Dyads", "a")
        assert row["label"] == "cough"
        assert [(e["action"], e["after"]["label"]) for e in reversed(events)] == \
            [("create", "laugh"), ("update", "cough"), ("conflict", "sigh")]
        # the laptop's own history keeps its version beside the one that won
        assert [e.after["label"] for e in laptop.model.history(laptop.stimulus("a"))][:2] == ["cough", "sigh"]
    finally:
        desk.close()
        laptop.close()
