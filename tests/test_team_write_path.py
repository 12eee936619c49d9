"""Team sync hangs off the store's one write path: whatever writes a member's labels (the media page's
model, the scene page's second model, the command line's store, an annotation-file import) is sent, in the
order it was written, each change once."""
from __future__ import annotations

from app.annotation_model import AnnotationModel
from storage import team_server
from storage.annotations import AnnotationStore
from tests.pg_server import Client, pg_server  # noqa: F401  (the session's cluster)


def _server_events(url: str) -> list[tuple[str, str, str, bool]]:
    with team_server.connect(url) as con:
        rows = con.execute("SELECT stimulus, action, after->>'label', (after->>'deleted')::boolean"
                           " FROM thinslice.annotation_event ORDER BY id").fetchall()
    return [tuple(r) for r in rows]


def test_a_scene_page_delete_then_a_media_page_edit_both_arrive_in_order(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    ana = Client(tmp_path / "ana.duckdb", pg_server.add_member(url, "ana"), "ana")
    try:
        scene = AnnotationModel(AnnotationStore(ana.store), ana.changes, annotator="ana")   # the scene page's
        scene.load(ana.stimulus("b"))
        ana.show("a")
        first = ana.model.add_label("vocal", "laugh", 1.0, 2.0)
        step = scene.add_label("scene", "handover", 0.0, 4.0)
        scene.delete([step.id])
        ana.model.move(first.id, (1.5, 2.5))
        assert ana.session.status().waiting == 0
    finally:
        ana.close()
    assert _server_events(url) == [("a", "create", "laugh", False), ("b", "create", "handover", False),
                                   ("b", "delete", "handover", True), ("a", "update", "laugh", False)]
    again = Client(tmp_path / "ana.duckdb", pg_server.add_member(url, "ana"), "ana", fresh=False)
    again.close()   # a restart finds nothing unsent: nothing is sent twice
    assert len(_server_events(url)) == 4


def test_a_write_straight_to_the_store_and_an_import_are_sent(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    ana = Client(tmp_path / "ana.duckdb", pg_server.add_member(url, "ana"), "ana")
    try:
        direct = AnnotationStore(ana.store)    # as the command line writes, while the session runs
        made = direct.create(ana.stimulus("c"), "ana", "vocal", "cough", 0.5, 0.75)
        direct.update(made.id, "ana", note="checked")
        ana.model.import_rows([{"stimulus_id": ana.stimulus("a"), "annotator": "ana", "label_set": "rating",
                                "label": "familiar"}], "ratings.csv")
        # the release's own tiers (someone else's labels the server never had) stay here
        direct.create(ana.stimulus("c"), "friendbench", "gold", "smile", 0.0, 1.0)
        ana.session.flush()
        assert ana.session.status().waiting == 0
    finally:
        ana.close()
    assert _server_events(url) == [("c", "create", "cough", False), ("c", "update", "cough", False),
                                   ("a", "create", "familiar", False)]
    with team_server.connect(url) as con:
        assert con.execute("SELECT note FROM thinslice.annotation WHERE label = 'cough'").fetchone()[0] == "checked"


def test_an_edit_resent_after_a_crash_that_lost_its_answer_is_taken_once(pg_server, tmp_path):  # noqa: F811
    import shutil
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    path, before = tmp_path / "ana.duckdb", tmp_path / "before-the-answer.duckdb"
    ana = Client(path, member_url, "ana")
    ana.session.stop()
    ana.show("a")
    made = ana.model.add_label("vocal", "laugh", 1.0, 2.0)
    ana.model.relabel([made.id], "sigh")
    ana.store.close()
    shutil.copy(path, before)   # the store as it was when the client sent, before the answer was written
    Client(path, member_url, "ana", fresh=False).close()   # sent and answered
    assert _server_events(url) == [("a", "create", "laugh", False), ("a", "update", "sigh", False)]
    shutil.copy(before, path)   # the client died before writing the answer: it sends the same edits again
    again = Client(path, member_url, "ana", fresh=False)
    try:
        assert again.session.status().waiting == 0
        again.show("a")
        again.model.move(made.id, (3.0, 4.0))   # and goes on from the server's revision
    finally:
        again.close()
    assert _server_events(url) == [("a", "create", "laugh", False), ("a", "update", "sigh", False),
                                   ("a", "update", "sigh", False)]
    with team_server.connect(url) as con:
        assert con.execute("SELECT label, start_s, revision FROM thinslice.annotation").fetchall() == [("sigh", 3.0, 3)]
