"""Two members of a team on a real PostgreSQL server: each sees the other's edits as they are made, by
LISTEN/NOTIFY; labels, history and agreement on a team project read the same as on a local one. (How fast they
arrive is measured in benchmarks/bench_team.py; the tests only wait, generously, for them to arrive.)"""
from __future__ import annotations

import threading
import time

import pytest

from app.changes import Topic
from tests.pg_server import Client, pg_server, until  # noqa: F401  (the session's cluster)


@pytest.fixture
def team(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    ana = Client(tmp_path / "ana.duckdb", pg_server.add_member(url, "ana"), "ana")
    ben = Client(tmp_path / "ben.duckdb", pg_server.add_member(url, "ben"), "ben")
    yield ana, ben
    ana.close()
    ben.close()


# long enough for a loaded machine, far shorter than any periodic re-read: an edit that arrives came by NOTIFY
ARRIVAL_WAIT_S = 15.0


def test_each_member_sees_the_others_edits_as_they_are_made(team):
    ana, ben = team
    ana.show("a")
    ben.show("a")
    arrived = threading.Event()
    ben.changes.subscribe([Topic.ANNOTATIONS], lambda change: arrived.set())
    ana.model.add_label("vocal", "laugh", 1.0, 2.0)
    assert arrived.wait(ARRIVAL_WAIT_S), "ana's label did not reach ben"
    [seen] = ben.model.annotations()
    assert (seen.annotator, seen.label, seen.start_s, seen.end_s) == ("ana", "laugh", 1.0, 2.0)

    back = threading.Event()
    ana.changes.subscribe([Topic.ANNOTATIONS], lambda change: back.set())
    ben.model.set_whole("rating", "familiar")
    assert back.wait(ARRIVAL_WAIT_S)
    assert {(a.annotator, a.label) for a in ana.model.annotations()} == {("ana", "laugh"), ("ben", "familiar")}

    arrived.clear()
    ana.model.move(ana.model.annotations()[-1].id if ana.model.annotations()[-1].annotator == "ana"
                   else ana.model.annotations()[0].id, (3.0, 4.0))
    assert arrived.wait(ARRIVAL_WAIT_S)
    moved = [a for a in ben.model.annotations() if a.annotator == "ana"]
    assert (moved[0].start_s, moved[0].end_s) == (3.0, 4.0)
    # ben's history shows ana's edits as ana's
    events = ben.model.history(ben.stimulus("a"))
    assert [e.action for e in events if e.annotator == "ana"][:2] == ["update", "create"]


def test_agreement_export_and_history_read_the_team_labels_as_a_local_project_does(team, tmp_path):
    from app.agreement import whole_agreement
    from app.export_service import export_annotations
    ana, ben = team
    for name, (mine, theirs) in {"a": ("familiar", "familiar"), "b": ("stranger", "familiar"),
                                 "c": ("stranger", "stranger")}.items():
        ana.show(name)
        ana.model.set_whole("rating", mine)
        ben.show(name)
        ben.model.set_whole("rating", theirs)
    deadline = time.monotonic() + ARRIVAL_WAIT_S   # each one's last label is on its way to the other
    while time.monotonic() < deadline and min(len(c.model.store.for_stimuli(dataset_id=1)) for c in (ana, ben)) < 6:
        time.sleep(0.05)
    for client in (ana, ben):
        everything = client.model.store.for_stimuli(dataset_id=1)
        report = whole_agreement(everything, "rating")
        assert report.annotators == ("ana", "ben")
        assert [d.stimulus_id for d in report.disagreements] == [client.stimulus("b")]
        out = tmp_path / f"{client.model.annotator}.csv"
        export_annotations(client.store, "csv", out)
        text = out.read_text()
        assert text.count("ana") == 3 and text.count("ben") == 3
        assert "team-test-secret" not in text


def test_labels_on_a_release_this_store_does_not_have_are_reported_not_guessed(pg_server, tmp_path):  # noqa: F811
    from app.annotation_model import AnnotationModel
    from app.changes import ChangeChannel
    from app.team import TeamSession, join_team
    from storage.annotations import AnnotationStore
    from tests.pg_server import member_store
    url = pg_server.new_database()
    ana = Client(tmp_path / "ana.duckdb", pg_server.add_member(url, "ana"), "ana")
    try:
        ana.show("a")
        ana.model.add_label("vocal", "laugh", 1.0, 2.0)
    finally:
        ana.close()
    # ben imported the release under another name: nothing of ana's is pinned on his stimuli by guess
    store = member_store(tmp_path / "ben.duckdb", dataset="Dyads (copy)")
    join_team(store, pg_server.add_member(url, "ben"), "ben")
    model = AnnotationModel(AnnotationStore(store), ChangeChannel(), annotator="ben")
    session = TeamSession(store, model)
    session.start()
    try:
        assert session.report.unmatched == [
            "The team labels the dataset 'Dyads', which this store does not have (import the same release under"
            " the same name to see those labels)."]
        assert "Dyads" in session.status().message
        assert model.store.for_stimuli(dataset_id=1) == []
    finally:
        session.stop()
        store.close()


def test_undo_and_redo_reach_the_other_member_as_edits(team):
    ana, ben = team
    ana.show("b")
    ben.show("b")
    arrived = threading.Event()
    ben.changes.subscribe([Topic.ANNOTATIONS], lambda change: arrived.set())
    ana.model.set_whole("rating", "familiar")
    assert arrived.wait(ARRIVAL_WAIT_S)
    for step, expected in ((ana.model.undo, []), (ana.model.redo, ["familiar"]), (ana.model.undo, [])):
        arrived.clear()
        step()
        assert arrived.wait(ARRIVAL_WAIT_S)
        assert [a.label for a in ben.model.annotations()] == expected
    assert ana.session.status().message == "" and ben.session.status().message == ""


def test_an_edit_that_commits_while_the_others_labels_are_written_here_still_reaches_the_team(team):
    # ben's rating commits; before his session sends it, ana's rating arrives and is written in his store: his
    # own is still sent, and both copies end with both ratings
    from storage import team_server
    from storage.annotations import after_commit
    ana, ben = team
    ana.show("a")
    ben.show("a")
    first = []

    def the_team_first() -> None:
        if not first:
            first.append(True)
            ana.model.set_whole("rating", "familiar")   # on the server once this returns
            ben.session.catch_up()
    after_commit(ben.store, the_team_first)
    try:
        ben.model.set_whole("rating", "stranger")
    finally:
        after_commit(ben.store, the_team_first, remove=True)
    assert first
    with team_server.connect(ana.session.url) as con:
        on_server = {(row["annotator"], row["label"]) for row in team_server.annotations(con)}
    assert on_server == {("ana", "familiar"), ("ben", "stranger")}
    assert ben.session.status().waiting == 0
    assert until(lambda: all({(a.annotator, a.label) for a in c.model.annotations()} == on_server for c in (ana, ben)),
                 ARRIVAL_WAIT_S)
