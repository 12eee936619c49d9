"""A team under load: what waits in the outbox goes in one round trip (one server transaction) and in order;
an edit the batch cannot carry is found and kept back while the rest arrive; a member whose client died
without saying goodbye stops being shown as present."""
from __future__ import annotations

from storage import team_server
from tests.pg_server import Client, pg_server  # noqa: F401  (the session's cluster)


def _events(url: str) -> list[tuple[int, str, str]]:
    with team_server.connect(url) as con:
        return [tuple(r) for r in con.execute("SELECT xact::text::bigint, action, after->>'label'"
                                              " FROM thinslice.annotation_event ORDER BY id").fetchall()]


def test_edits_made_offline_go_in_one_round_trip_in_order(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    path = tmp_path / "ana.duckdb"
    ana = Client(path, member_url, "ana")
    ana.session.stop()   # offline: everything waits
    ana.show("a")
    made = [ana.model.add_label("vocal", f"l{i}", float(i), float(i) + 0.5) for i in range(30)]
    for item in made[::3]:
        ana.model.relabel([item.id], f"{item.label}-again")
    ana.model.delete([made[-1].id])
    ana.store.close()
    again = Client(path, member_url, "ana", fresh=False)   # back: the 41 edits are sent
    try:
        assert again.session.status().waiting == 0
    finally:
        again.close()
    events = _events(url)
    assert len(events) == 41 and len({xact for xact, _, _ in events}) == 1   # one transaction
    assert [(a, label) for _, a, label in events] == \
        [("create", f"l{i}") for i in range(30)] + [("update", f"l{i}-again") for i in range(0, 30, 3)] \
        + [("delete", "l29")]


def test_an_edit_the_batch_cannot_carry_is_kept_back_and_the_rest_arrive(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    path = tmp_path / "ana.duckdb"
    ana = Client(path, member_url, "ana")
    ana.session.stop()
    ana.show("a")
    for i in range(5):
        made = ana.model.add_label("vocal", f"l{i}", float(i), float(i) + 0.5)
        if i == 2:
            ana.model.set_label_note(made.id, "nul \x00 inside")
    ana.store.close()
    again = Client(path, member_url, "ana", fresh=False)
    try:
        status = again.session.status()
        # the label whose note PostgreSQL cannot hold: its creation went, its note waits, marked
        assert status.waiting == 1 and len(status.refused) == 1 and "'l2'" in status.refused[0]
    finally:
        again.close()
    assert [(a, label) for _, a, label in _events(url)] == [("create", f"l{i}") for i in range(5)]


def test_presence_expires_when_a_client_stops_saying_it_is_there(pg_server, tmp_path):  # noqa: F811
    url = pg_server.new_database()
    ana = Client(tmp_path / "ana.duckdb", pg_server.add_member(url, "ana"), "ana")
    ben = Client(tmp_path / "ben.duckdb", pg_server.add_member(url, "ben"), "ben")
    try:
        ana.show("a")
        ben.show("a")
        with team_server.connect(pg_server.add_member(url, "ben")) as con:
            assert team_server.present(con, "Dyads", "a") == ["ana"]
        with team_server.connect(url) as con:   # ana's client was killed long ago: no heartbeat since
            con.execute("UPDATE thinslice.presence SET seen_at = now() - make_interval(secs => %s)"
                        " WHERE member = 'ana'", [team_server.PRESENCE_TTL_S + 1])
        with team_server.connect(pg_server.add_member(url, "ben")) as con:
            assert team_server.present(con, "Dyads", "a") == []
    finally:
        ana.close()
        ben.close()
