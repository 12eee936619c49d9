"""Nothing is lost when the team server goes away: edits made meanwhile wait in the local store, in order,
the status says how many, a restart of the app keeps them, and when the server returns each arrives once,
in order. A client killed mid-burst has every edit it acknowledged on the server."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from storage import team_server
from tests.pg_server import Client, pg_server  # noqa: F401  (the session's cluster)

ROOT = Path(__file__).resolve().parents[1]


def _values_on_server(url: str) -> list[str]:
    """The `value` of every create event on the server, in the order the server wrote them."""
    with team_server.connect(url) as con:
        rows = con.execute("SELECT after->>'value' FROM thinslice.annotation_event WHERE action = 'create'"
                           " ORDER BY id").fetchall()
    return [r[0] for r in rows]


def _burst(client: Client, values: range) -> None:
    for i in values:
        client.model.add_label("vocal", "laugh", float(i), float(i) + 0.5, value=str(i))


def _sent(client: Client) -> threading.Event:
    """Set once the client's outbox is empty and it is online again."""
    done = threading.Event()

    def check(status) -> None:
        if status.online and status.waiting == 0:
            done.set()
    client.session.status_listeners.append(check)
    return done


def test_server_stopped_mid_burst_every_queued_edit_arrives_once_in_order(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    ana = Client(tmp_path / "ana.duckdb", pg_server.add_member(url, "ana"), "ana")
    try:
        ana.show("a")
        _burst(ana, range(0, 15))
        pg_server.stop()
        try:
            _burst(ana, range(15, 40))
            status = ana.session.status()
            assert not status.online and status.waiting == 25
            assert "25 edits waiting" in status.text()
            # the edits are on screen and in the local store meanwhile
            assert len(ana.model.annotations()) == 40
            done = _sent(ana)
        finally:
            pg_server.start()
        assert done.wait(10), ana.session.status()
        assert _values_on_server(url) == [str(i) for i in range(40)]
    finally:
        ana.close()


def test_a_restart_while_offline_loses_nothing(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    path = tmp_path / "ana.duckdb"
    ana = Client(path, member_url, "ana")
    ana.show("b")
    _burst(ana, range(3))
    pg_server.stop()
    try:
        _burst(ana, range(3, 8))
        assert ana.session.status().waiting == 5
        ana.close()                              # the app quits with five edits unsent
    finally:
        pg_server.start()
    again = Client(path, member_url, "ana", fresh=False)   # and starts again later
    try:
        again.show("b")
        assert again.session.status().waiting == 0
        assert _values_on_server(url) == [str(i) for i in range(8)]
        assert len(again.model.annotations()) == 8
    finally:
        again.close()


CHILD = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.pg_server import Client
client = Client(Path({path!r}), {url!r}, "ana")
client.show("a")
for i in range(100000):
    client.model.add_label("vocal", "laugh", float(i % 500), float(i % 500) + 0.5, value=str(i))
    print(i, flush=True)   # acknowledged: the call returned
"""


def test_a_client_killed_mid_burst_has_every_acknowledged_edit_on_the_server(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT), path=str(tmp_path / "ana.duckdb"),
                                                                 url=member_url)],
                             stdout=subprocess.PIPE, text=True, env={**os.environ, "THINSLICE_TEST_PART": "core"})
    acknowledged = []
    try:
        for line in child.stdout:
            acknowledged.append(line.strip())
            if len(acknowledged) == 60:
                child.send_signal(signal.SIGKILL)
                break
    finally:
        child.kill()
        child.wait()
    for line in child.stdout:    # lines printed before the kill landed
        acknowledged.append(line.strip())
    on_server = _values_on_server(url)
    assert len(acknowledged) >= 60
    assert on_server[:len(acknowledged)] == acknowledged
    assert len(on_server) <= len(acknowledged) + 1   # at most the edit in flight, never one twice


def test_labels_made_before_joining_or_without_the_session_reach_the_team(pg_server, tmp_path):  # noqa: F811
    from app.annotation_model import AnnotationModel
    from storage.annotations import AnnotationStore
    from tests.pg_server import member_store
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    path = tmp_path / "ana.duckdb"
    store = member_store(path)
    alone = AnnotationModel(AnnotationStore(store), annotator="ana")   # a local project, as before the team
    alone.load(store.cursor().execute("SELECT id FROM stimulus WHERE external_id = 'c'").fetchone()[0])
    alone.add_label("vocal", "sigh", 0.0, 1.0, value="before")
    AnnotationStore(store).create(alone.stimulus_id, "rater7", "vocal", "laugh")   # the release's own rater
    store.close()
    from app.team import join_team
    from storage.store import Store
    store = Store.open(path)
    join_team(store, member_url, "ana")
    store.close()
    ana = Client(path, member_url, "ana", fresh=False)
    try:
        assert _values_on_server(url) == ["before"]   # hers only: the release's rater is not hers to send
    finally:
        ana.close()
