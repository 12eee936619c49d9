"""Catch-up goes by commit, not by event id: an edit whose transaction took its history id before another
member's but committed after it still reaches every member, whichever of the two they read first."""
from __future__ import annotations

import json
import uuid

from storage import team_server
from tests.pg_server import Client, pg_server, until  # noqa: F401  (the session's cluster)


def _labels(client: Client) -> set[tuple[str, str]]:
    return {(a.annotator, a.label) for a in client.model.store.for_stimulus(client.stimulus("a"))}


def test_an_edit_committed_after_a_later_numbered_one_still_arrives(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    ana_url, ben_url = pg_server.add_member(url, "ana"), pg_server.add_member(url, "ben")
    cleo_url = pg_server.add_member(url, "cleo")
    ana = Client(tmp_path / "ana.duckdb", ana_url, "ana")
    cleo = Client(tmp_path / "cleo.duckdb", cleo_url, "cleo")
    held = team_server.connect(ben_url, autocommit=False)   # ben's edit, its transaction held open
    try:
        edit = {"kind": "annotation", "edit_uid": str(uuid.uuid4()), "uid": str(uuid.uuid4()), "dataset": "Dyads",
                "stimulus": "a", "annotator": "ben", "base_revision": 0,
                "after": {"label_set": "vocal", "label": "sigh", "start_s": 0.0, "end_s": 1.0, "value": None,
                          "note": None, "media_role": None, "deleted": False}}
        held.execute("SELECT thinslice.apply_edit(%s::jsonb)", [json.dumps(edit)])
        ana.show("a")
        ana.model.add_label("vocal", "laugh", 2.0, 3.0)       # a later event id, committed first
        with team_server.connect(url) as con:
            ids = dict(con.execute("SELECT member, id FROM thinslice.annotation_event").fetchall())
        assert list(ids) == ["ana"]   # ben's is not committed yet
        cleo.session.catch_up()
        assert until(lambda: _labels(cleo) == {("ana", "laugh")}, 5.0)
        held.commit()
        with team_server.connect(url) as con:
            ids = dict(con.execute("SELECT member, id FROM thinslice.annotation_event").fetchall())
        assert ids["ben"] < ids["ana"]   # the case itself: ben's id is the earlier one
        cleo.session.catch_up()
        assert until(lambda: _labels(cleo) == {("ana", "laugh"), ("ben", "sigh")}, 5.0), _labels(cleo)
    finally:
        held.close()
        ana.close()
        cleo.close()
    # and the position kept in the store does not skip it either: a restart reads nothing new, loses nothing
    again = Client(tmp_path / "cleo.duckdb", cleo_url, "cleo", fresh=False)
    try:
        again.session.catch_up()
        assert _labels(again) == {("ana", "laugh"), ("ben", "sigh")}
    finally:
        again.close()
