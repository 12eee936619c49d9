"""The real window on a team project: File > Team… joins it, the status bar names the team, says it is
online and who else has the stimulus open, and another member's label appears in the window's labels as it
is made (LISTEN/NOTIFY, handed to the GUI thread; how fast is measured in benchmarks/bench_team.py, the test
only waits, generously, for it). A server that stops answering never holds the
window: its event loop keeps turning through the reconnection attempts, an edit made meanwhile waits in
the outbox at once, and it arrives when the server is back."""
from __future__ import annotations

import socket

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from storage import team_server
from tests.pg_server import Client, member_store, pg_server  # noqa: F401  (the session's cluster)

# long enough for a loaded machine, far shorter than any periodic re-read (presence is said again every 30 s)
ARRIVAL_WAIT_MS = 15000


def test_the_window_joins_a_team_and_shows_the_others_work_live(pg_server, tmp_path, qtbot, window_for):  # noqa: F811
    url = pg_server.new_database()
    ana_url, ben_url = pg_server.add_member(url, "ana"), pg_server.add_member(url, "ben")
    store = member_store(tmp_path / "ana.duckdb")
    win = window_for(store, annotator="someone")
    assert not win.team.label.isVisible()       # a local project says nothing about teams

    from widgets.team_dialog import TeamDialog
    dialog = TeamDialog(win.team, win)
    dialog.url.setText(ana_url)
    dialog.join_button.click()                  # the server is asked on the window's worker
    qtbot.waitUntil(lambda: "Joined as ana" in dialog.state.text(), timeout=5000)
    dialog.close()
    assert win.session.annotator == "ana"        # edits are stamped with the member's name
    qtbot.waitUntil(lambda: "online" in win.team.label.text(), timeout=ARRIVAL_WAIT_MS)
    assert "Team 127.0.0.1" in win.team.label.text() and "as ana" in win.team.label.text()

    first = store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'a'").fetchone()[0]
    win.select_stimulus_id(first)
    qtbot.waitUntil(lambda: win.annotation_model.stimulus_id == first and win.annotation_model.ready, timeout=5000)
    ben = Client(tmp_path / "ben.duckdb", ben_url, "ben")
    try:
        ben.show("a")
        qtbot.waitUntil(lambda: "also here: ben" in win.team.label.text(), timeout=ARRIVAL_WAIT_MS)
        ben.model.add_label("vocal", "laugh", 1.0, 2.0)
        qtbot.waitUntil(lambda: [(a.annotator, a.label) for a in win.annotation_model.annotations()]
                        == [("ben", "laugh")], timeout=ARRIVAL_WAIT_MS)
    finally:
        ben.close()
    QApplication.processEvents()


def _ticks(qtbot, ms: int) -> int:
    """How often a 10 ms timer fired while the event loop ran for `ms`."""
    count = [0]
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: count.__setitem__(0, count[0] + 1))
    timer.start()
    qtbot.wait(ms)
    timer.stop()
    return count[0]


def _silent_server(port: int) -> socket.socket:
    """A host that takes the connection on the server's port and never says a word (a server hung, or a
    network that swallows the replies): each connection attempt lasts until libpq's connect timeout."""
    silent = socket.socket()
    silent.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    silent.bind(("127.0.0.1", port))
    silent.listen(16)
    return silent


def test_a_reconnection_to_a_server_that_does_not_answer_never_holds_the_window(pg_server, tmp_path, qtbot,  # noqa: F811
                                                                              window_for):
    from app.team import join_team
    url = pg_server.new_database()
    ana_url = pg_server.add_member(url, "ana")
    store = member_store(tmp_path / "ana.duckdb")
    join_team(store, ana_url, "ana")
    win = window_for(store, annotator="ana")
    qtbot.waitUntil(lambda: "online" in win.team.label.text(), timeout=5000)
    first = store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'a'").fetchone()[0]
    win.select_stimulus_id(first)
    qtbot.waitUntil(lambda: win.annotation_model.stimulus_id == first and win.annotation_model.ready, timeout=5000)
    idle = _ticks(qtbot, 4000)

    shown: list[str] = []
    win.team.session.status_listeners.append(lambda status: shown.append(status.text()))
    pg_server.stop()
    silent = _silent_server(pg_server.port)
    try:
        qtbot.waitUntil(lambda: "online" not in win.team.label.text(), timeout=10000)
        win.annotation_model.add_label("vocal", "laugh", 1.0, 2.0, value="while away")
        # in the outbox at once, and said as soon as the status reaches the window's thread
        qtbot.waitUntil(lambda: "1 edit waiting" in win.team.label.text(), timeout=10000)
        win.team.start()   # File > Team… joins again: a new session, a new connection attempt
        win.team.session.status_listeners.append(lambda status: shown.append(status.text()))
        busy = _ticks(qtbot, 4000)
        assert any("connecting…" in text for text in shown)   # an attempt was under way meanwhile
        assert "1 edit waiting" in win.team.label.text()
    finally:
        silent.close()
        pg_server.start()
    # the event loop kept turning through the attempts as it does idle (a blocked GUI thread would have
    # missed the three seconds each attempt lasts)
    assert busy >= idle * 0.6, (busy, idle)
    qtbot.waitUntil(lambda: "online" in win.team.label.text() and "waiting" not in win.team.label.text(),
                    timeout=15000)
    with team_server.connect(url) as con:
        values = [r[0] for r in con.execute("SELECT value FROM thinslice.annotation").fetchall()]
    assert values == ["while away"]


def test_the_window_sends_at_its_start_what_was_changed_while_it_was_closed(pg_server, tmp_path, qtbot,  # noqa: F811
                                                                           window_for):
    from app.annotation_model import AnnotationModel
    from storage.annotations import AnnotationStore
    from storage.store import Store
    url = pg_server.new_database()
    ana_url = pg_server.add_member(url, "ana")
    path = tmp_path / "ana.duckdb"
    ana = Client(path, ana_url, "ana")
    ana.show("a")
    label = ana.model.add_label("vocal", "laugh", 1.0, 2.0)
    ana.close()
    store = Store.open(path)
    alone = AnnotationModel(AnnotationStore(store), annotator="ana")   # the window is closed: another tool edits
    alone.load(label.stimulus_id)
    alone.relabel([label.id], "sigh")
    win = window_for(store, annotator="ana")

    def on_server() -> list[str]:
        with team_server.connect(url) as con:
            return [r[0] for r in con.execute("SELECT label FROM thinslice.annotation").fetchall()]
    qtbot.waitUntil(lambda: "online" in win.team.label.text() and "waiting" not in win.team.label.text(),
                    timeout=5000)
    qtbot.waitUntil(lambda: on_server() == ["sigh"], timeout=ARRIVAL_WAIT_MS)
