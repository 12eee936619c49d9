"""A member holds one connection to the team's server, which both carries their edits and listens for the
others': counted on a real server from `pg_stat_activity`, in the command line's session and the window's,
before and after the server drops it. News that arrives while the member's own query runs is not lost."""
from __future__ import annotations

import queue
import threading
import time

import pytest

from app.changes import Topic
from storage import team_server
from tests.pg_server import Client, pg_server, until  # noqa: F401  (the session's cluster)

ARRIVAL_WAIT_S = 15.0   # generous for a loaded machine; nothing here re-reads on a timer


def _connections(url: str, member: str) -> int:
    with team_server.connect(url) as con:
        return int(con.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND datname = current_database()",
                               [member]).fetchone()[0])


@pytest.fixture
def team(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    ana = Client(tmp_path / "ana.duckdb", pg_server.add_member(url, "ana"), "ana")
    ben = Client(tmp_path / "ben.duckdb", pg_server.add_member(url, "ben"), "ben")
    yield url, ana, ben
    ana.close()
    ben.close()


def _arrival(client: Client) -> threading.Event:
    arrived = threading.Event()
    client.changes.subscribe([Topic.ANNOTATIONS], lambda change: arrived.set())
    return arrived


def test_each_member_holds_one_connection_that_sends_and_listens(team):
    url, ana, ben = team
    ana.show("a")
    ben.show("a")
    assert _connections(url, "ana") == 1 and _connections(url, "ben") == 1
    arrived = _arrival(ben)
    ana.model.add_label("vocal", "laugh", 1.0, 2.0)
    assert arrived.wait(ARRIVAL_WAIT_S), "ana's label did not reach ben"
    assert [(a.annotator, a.label) for a in ben.model.annotations()] == [("ana", "laugh")]
    back = _arrival(ana)
    ben.model.add_label("vocal", "sigh", 3.0, 4.0)
    assert back.wait(ARRIVAL_WAIT_S), "ben's label did not reach ana"
    assert _connections(url, "ana") == 1 and _connections(url, "ben") == 1


def test_news_that_arrives_during_the_members_own_query_is_handed_up(team):
    url, ana, ben = team
    ana.show("a")
    ben.show("a")
    arrived = _arrival(ana)
    # ana's one connection is busy with a long query of hers while ben's edit is announced
    busy = threading.Thread(target=lambda: ana.session._connection().execute("SELECT pg_sleep(1.5)"))
    busy.start()
    time.sleep(0.3)
    ben.model.add_label("vocal", "sigh", 3.0, 4.0)
    busy.join()
    assert arrived.wait(ARRIVAL_WAIT_S), "the news that came during ana's query was lost"
    assert [(a.annotator, a.label) for a in ana.model.annotations()] == [("ben", "sigh")]
    assert _connections(url, "ana") == 1


def test_after_the_server_drops_it_a_member_comes_back_on_one_connection_and_catches_up(team):
    url, ana, ben = team
    ana.show("a")
    ben.show("a")
    with team_server.connect(url) as con:
        con.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'ana'")
    ben.model.add_label("vocal", "sigh", 3.0, 4.0)   # made while ana is away
    assert until(lambda: ana.session.status().online and _connections(url, "ana") == 1, ARRIVAL_WAIT_S)
    assert until(lambda: [(a.annotator, a.label) for a in ana.model.annotations()] == [("ben", "sigh")], ARRIVAL_WAIT_S)
    ana.model.add_label("vocal", "laugh", 1.0, 2.0)
    assert until(lambda: sorted(a.label for a in ben.model.annotations()) == ["laugh", "sigh"], ARRIVAL_WAIT_S)
    assert _connections(url, "ana") == 1 and _connections(url, "ben") == 1


def test_the_windows_session_holds_one_connection_too(pg_server, tmp_path):  # noqa: F811
    from app.annotation_model import AnnotationModel
    from app.changes import ChangeChannel
    from app.team import TeamSession, join_team
    from storage.annotations import AnnotationStore
    from tests.pg_server import member_store
    url = pg_server.new_database()
    ben = Client(tmp_path / "ben.duckdb", pg_server.add_member(url, "ben"), "ben")
    store = member_store(tmp_path / "ana.duckdb")
    join_team(store, pg_server.add_member(url, "ana"), "ana")
    model = AnnotationModel(AnnotationStore(store), ChangeChannel(), annotator="ana")
    posted: queue.SimpleQueue = queue.SimpleQueue()   # the window's GUI thread: work handed to it runs here
    session = TeamSession(store, model, post=posted.put)
    session.start(wait=False)

    def pump_until(condition) -> bool:
        deadline = time.monotonic() + ARRIVAL_WAIT_S
        while time.monotonic() < deadline:
            try:
                posted.get(timeout=0.05)()
            except queue.Empty:
                pass
            if condition():
                return True
        return False
    try:
        model.load(ben.stimulus("a"))
        ben.show("a")
        assert pump_until(lambda: session.status().online)
        model.add_label("vocal", "laugh", 1.0, 2.0)
        assert until(lambda: [a.label for a in ben.model.annotations()] == ["laugh"], ARRIVAL_WAIT_S)
        ben.model.add_label("vocal", "sigh", 3.0, 4.0)
        assert pump_until(lambda: sorted(a.label for a in model.annotations()) == ["laugh", "sigh"])
        assert _connections(url, "ana") == 1
    finally:
        session.stop()
        store.close()
        ben.close()


def test_a_query_under_way_when_the_connection_is_dropped_gets_its_answer_and_the_connection_closes_after(
        pg_server):  # noqa: F811
    # the listener drops the connection when it hears the server go, while the session's thread may still be
    # reading an answer on it: that answer must come whole, and the connection must still be closed after
    url = pg_server.new_database()
    link = team_server.MemberConnection(url, lambda batch: None, lambda up: None, lambda: [])
    con = link.connection()
    answers: list = []
    busy = threading.Thread(target=lambda: answers.append(con.execute("SELECT 7, pg_sleep(0.8)").fetchone()[0]))
    busy.start()
    time.sleep(0.3)
    link.drop()
    assert not con.closed, "closed under the query"
    busy.join()
    assert answers == [7]
    assert until(lambda: con.closed, ARRIVAL_WAIT_S), "the dropped connection was never closed"
    assert link.connection() is not con
    link.drop()


def test_the_listener_outlives_its_connection_being_dropped_under_it_and_still_hands_news_up(pg_server):  # noqa: F811
    # the session drops the connection after an error of its own, often while the listener waits on its socket;
    # the listener must go on to the next connection, not end with the socket gone from under it
    from storage import pg_schema
    url = pg_server.new_database()
    heard: list = []
    states: list = []
    link = team_server.MemberConnection(url, heard.extend, states.append, lambda: [])
    link.start()
    try:
        assert until(lambda: states[-1:] == [True], ARRIVAL_WAIT_S)
        for _ in range(30):
            link.drop()
            link.connection()
            time.sleep(0.01)
        with team_server.connect(url) as con:
            con.execute("SELECT pg_notify(%s, %s)", [pg_schema.CHANNEL, '{"kind": "ping"}'])
        assert until(lambda: {"kind": "ping"} in heard, ARRIVAL_WAIT_S), "the listener stopped handing news up"
    finally:
        link.stop()
        link.drop()
