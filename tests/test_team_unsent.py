"""Changes made while no team session runs reach the server at the next session start: changes of labels
the server already has (made through the command line or another tool with the app closed), once each and
in the order they were made, a conflict with the team's newer version keeping both in the history; and a
lead's consensus labels made before joining."""
from __future__ import annotations

from pathlib import Path

from app.annotation_model import AnnotationModel
from storage import pg_schema, team_server
from storage.annotations import AnnotationStore
from storage.store import Store
from tests.pg_server import Client, member_store, pg_server  # noqa: F401  (the session's cluster)


def _server_events(url: str) -> list[tuple[str, str, str | None, str | None]]:
    """(action, label, value, member) of every annotation event on the server, in the order written."""
    with team_server.connect(url) as con:
        rows = con.execute("SELECT action, coalesce(after->>'label', ''), after->>'value', member"
                           " FROM thinslice.annotation_event ORDER BY id").fetchall()
    return [tuple(r) for r in rows]


def _server_labels(url: str) -> list[tuple[str, str, str | None, bool]]:
    with team_server.connect(url) as con:
        return [(row["annotator"], row["label"], row["value"], row["deleted"]) for row in team_server.annotations(con)]


def _without_session(path: Path, member: str, stimulus: str) -> tuple[Store, AnnotationModel]:
    """The store opened as the command line opens it: the annotation model, no team session."""
    store = Store.open(path)
    model = AnnotationModel(AnnotationStore(store), annotator=member)
    model.load(store.cursor().execute("SELECT id FROM stimulus WHERE external_id = ?", [stimulus]).fetchone()[0])
    return store, model


def test_changes_to_labels_the_server_has_made_with_the_app_closed_arrive_once_in_order(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    path = tmp_path / "ana.duckdb"
    ana = Client(path, member_url, "ana")
    ana.show("a")
    kept = ana.model.add_label("vocal", "laugh", 1.0, 2.0, value="first")
    gone = ana.model.add_label("vocal", "sigh", 3.0, 4.0)
    ana.close()
    assert _server_labels(url) == [("ana", "laugh", "first", False), ("ana", "sigh", None, False)]

    store, alone = _without_session(path, "ana", "a")   # the app is closed; the command line edits
    alone.relabel([kept.id], "cough")
    alone.set_label_note(kept.id, "checked twice")
    alone.delete([gone.id])
    alone.add_label("vocal", "laugh", 5.0, 6.0, value="new")
    store.close()
    assert _server_labels(url)[0] == ("ana", "laugh", "first", False)   # nothing sent meanwhile

    again = Client(path, member_url, "ana", fresh=False)   # the app starts again
    try:
        assert again.session.status().waiting == 0
    finally:
        again.close()
    labels = _server_labels(url)
    assert labels[:2] == [("ana", "cough", "first", False), ("ana", "sigh", None, True)]
    assert labels[2] == ("ana", "laugh", "new", False)
    with team_server.connect(url) as con:
        note = con.execute("SELECT note FROM thinslice.annotation WHERE label = 'cough'").fetchone()[0]
    assert note == "checked twice"
    after_first_start = _server_events(url)
    # in the order they were made: the two creations, then the changes and the new label
    assert [(action, label) for action, label, _, _ in after_first_start] == [
        ("create", "laugh"), ("create", "sigh"),
        ("update", "cough"), ("update", "cough"), ("delete", "sigh"), ("create", "laugh")]

    once_more = Client(path, member_url, "ana", fresh=False)   # and once more: nothing is sent twice
    once_more.close()
    assert _server_events(url) == after_first_start


def test_a_change_made_offline_that_meets_a_newer_team_version_keeps_both(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    desk_path = tmp_path / "desk.duckdb"
    desk = Client(desk_path, member_url, "ana")
    desk.show("a")
    label = desk.model.add_label("vocal", "laugh", 1.0, 2.0)
    desk.close()
    laptop = Client(tmp_path / "laptop.duckdb", member_url, "ana")   # ana relabels it on her laptop
    try:
        laptop.show("a")
        [copy] = laptop.model.annotations()
        laptop.model.relabel([copy.id], "sigh")
    finally:
        laptop.close()
    store, alone = _without_session(desk_path, "ana", "a")   # and at the desk, with the app closed
    alone.relabel([label.id], "cough")
    store.close()
    desk = Client(desk_path, member_url, "ana", fresh=False)
    try:
        assert "conflicted" in desk.session.status().message
        desk.show("a")
        assert [a.label for a in desk.model.annotations()] == ["sigh"]   # the team's version is shown
    finally:
        desk.close()
    actions = [(action, label) for action, label, _, _ in _server_events(url)]
    assert ("conflict", "cough") in actions and ("update", "sigh") in actions   # both kept


def test_a_leads_consensus_labels_made_before_joining_arrive(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    lead_url = pg_server.add_member(url, "lea", lead=True)
    member_url = pg_server.add_member(url, "ben")
    for name, member in (("lea", "lea"), ("ben", "ben")):
        store = member_store(tmp_path / f"{name}.duckdb")
        consensus = AnnotationModel(AnnotationStore(store), annotator=pg_schema.CONSENSUS)
        consensus.load(store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'b'").fetchone()[0])
        consensus.add_label("vocal", "laugh", 0.0, 1.0, value=f"adjudicated by {member}")
        store.close()
    from app.team import join_team
    for name, address in (("lea", lead_url), ("ben", member_url)):
        store = Store.open(tmp_path / f"{name}.duckdb")
        join_team(store, address, name)
        store.close()
        client = Client(tmp_path / f"{name}.duckdb", address, name, fresh=False)
        client.close()
    # the lead's arrives; a member's own consensus label is not theirs to send (the server would refuse it)
    assert _server_labels(url) == [(pg_schema.CONSENSUS, "laugh", "adjudicated by lea", False)]
