"""The real window on a team project: File > Team… joins it, the status bar names the team, says it is
online and who else has the stimulus open, and another member's label appears in the window's labels
within a second (LISTEN/NOTIFY, handed to the GUI thread)."""
from __future__ import annotations

from PySide6.QtWidgets import QApplication

from tests.pg_server import Client, member_store, pg_server  # noqa: F401  (the session's cluster)


def test_the_window_joins_a_team_and_shows_the_others_work_live(pg_server, tmp_path, qtbot, window_for):  # noqa: F811
    url = pg_server.new_database()
    ana_url, ben_url = pg_server.add_member(url, "ana"), pg_server.add_member(url, "ben")
    store = member_store(tmp_path / "ana.duckdb")
    win = window_for(store, annotator="someone")
    assert not win.team.label.isVisible()       # a local project says nothing about teams

    from widgets.team_dialog import TeamDialog
    dialog = TeamDialog(win.team, win)
    dialog.url.setText(ana_url)
    dialog.join_button.click()
    assert "Joined as ana" in dialog.state.text()
    dialog.close()
    assert win.session.annotator == "ana"        # edits are stamped with the member's name
    qtbot.waitUntil(lambda: "online" in win.team.label.text(), timeout=3000)
    assert "Team 127.0.0.1" in win.team.label.text() and "as ana" in win.team.label.text()

    first = store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'a'").fetchone()[0]
    win.select_stimulus_id(first)
    qtbot.waitUntil(lambda: win.annotation_model.stimulus_id == first and win.annotation_model.ready, timeout=5000)
    ben = Client(tmp_path / "ben.duckdb", ben_url, "ben")
    try:
        ben.show("a")
        qtbot.waitUntil(lambda: "also here: ben" in win.team.label.text(), timeout=2000)
        ben.model.add_label("vocal", "laugh", 1.0, 2.0)
        qtbot.waitUntil(lambda: [(a.annotator, a.label) for a in win.annotation_model.annotations()]
                        == [("ben", "laugh")], timeout=1000)
    finally:
        ben.close()
    QApplication.processEvents()
