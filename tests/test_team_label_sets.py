"""Label sets on a team are changed as labels are: each change names the revision it was made on, and one
made on a revision the set no longer has changes nothing on the server but is kept in its history as a
conflict beside the version that won, which the lead who lost then sees."""
from __future__ import annotations

import time

from storage import team_server
from tests.pg_server import Client, pg_server  # noqa: F401  (the session's cluster)


def _set_history(url: str) -> list[tuple[str, str, str | None, int | None]]:
    with team_server.connect(url) as con:
        return [tuple(r) for r in con.execute("SELECT member, action, document->>'description', base_revision"
                                              " FROM thinslice.label_set_event ORDER BY id").fetchall()]


def test_a_label_set_change_made_on_an_old_revision_is_kept_as_a_conflict(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    lea = Client(tmp_path / "lea.duckdb", pg_server.add_member(url, "lea", lead=True), "lea")
    leo = Client(tmp_path / "leo.duckdb", pg_server.add_member(url, "leo", lead=True), "leo")
    try:
        lea.model.save_label_set("gesture", description="hands")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and leo.session.local.set_revisions().get("gesture") != 1:
            time.sleep(0.02)   # lea's set reaches leo
        assert leo.model.store.label_set_document("gesture")["description"] == "hands"
        lea.model.save_label_set("gesture", description="fingers")   # revision 2
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and leo.session.local.set_revisions().get("gesture") != 2:
            time.sleep(0.02)
        # leo changes the set as he saw it before that arrived: his change stands on revision 1
        leo.session.local.keep_set_revisions({"gesture": 1})
        leo.model.save_label_set("gesture", description="arms")
        assert "conflicted" in leo.session.status().message
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and leo.model.store.label_set_document("gesture")["description"] != "fingers":
            time.sleep(0.02)
        assert leo.model.store.label_set_document("gesture")["description"] == "fingers"   # the team's
        assert leo.session.local.set_revisions()["gesture"] == 2
        leo.model.save_label_set("gesture", description="arms, again")   # now built on what he sees: taken
    finally:
        lea.close()
        leo.close()
    assert _set_history(url) == [("lea", "change", "hands", 0), ("lea", "change", "fingers", 1),
                                 ("leo", "conflict", "arms", 1), ("leo", "change", "arms, again", 2)]
