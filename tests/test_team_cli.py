"""`thinslice team ...` on a real server: init through versioned migrations, join as a member, status, sync
and the server's history; no password reaches the store, and libpq's own options (sslmode) are honoured.
A store that never joined a team needs no server."""
from __future__ import annotations

import json

import psycopg
import pytest

from app.cli import dispatch
from storage import team_server
from storage.pg_schema import LATEST_VERSION
from storage.store import Store
from tests.pg_server import PASSWORD, member_store, pg_server  # noqa: F401  (the session's cluster)


def _run(capsys, *argv: str) -> tuple[int, dict, str]:
    code = dispatch(list(argv))
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else {}), out.err


def test_init_join_status_and_sync_from_the_command_line(pg_server, tmp_path, capsys):  # noqa: F811
    with team_server.connect(pg_server.url()) as con:
        con.execute("CREATE DATABASE cli_team")
    owner = pg_server.url("cli_team")
    code, out, _ = _run(capsys, "team", "init", owner)
    assert code == 0 and out["migrations_applied"] == list(range(1, LATEST_VERSION + 1))
    code, out, _ = _run(capsys, "team", "init", owner)          # again: nothing to do
    assert code == 0 and out["migrations_applied"] == []
    code, out, _ = _run(capsys, "team", "add-member", owner, "cleo", "--lead", "--no-password")
    assert code == 0 and out == {"member": "cleo", "lead": True}
    with team_server.connect(owner) as con:
        con.execute("ALTER ROLE cleo PASSWORD %s" % psycopg.sql.quote(PASSWORD))

    path = tmp_path / "cleo.duckdb"
    member_store(path).close()
    # a password typed into the URL is used once, never kept
    with_password = owner.replace("thinslice_admin@", f"cleo:{PASSWORD}@")
    code, out, err = _run(capsys, "team", "join", with_password, "--db", str(path))
    assert code == 0 and out["member"] == "cleo" and out["lead"] is True
    assert "not kept" in err and PASSWORD not in err
    code, out, _ = _run(capsys, "team", "status", "--db", str(path))
    assert code == 0 and out["online"] and out["waiting"] == 0 and out["member"] == "cleo"
    code, out, _ = _run(capsys, "team", "sync", "--db", str(path))
    assert code == 0 and out["online"]
    store = Store.open(path)
    try:
        kept = dict(store.cursor().execute("SELECT key, value FROM team_state").fetchall())
    finally:
        store.close()
    assert "user=cleo" in kept["url"] and "host=127.0.0.1" in kept["url"] and PASSWORD not in kept["url"]
    assert PASSWORD.encode() not in path.read_bytes()

    # a label made through the model reaches the server; the server's history of the stimulus lists it
    from tests.pg_server import Client
    cleo = Client(path, owner.replace("thinslice_admin@", "cleo@"), "cleo", fresh=False)
    try:
        cleo.show("b")
        cleo.model.add_label("vocal", "laugh", 0.5, 1.0)
    finally:
        cleo.close()
    assert dispatch(["team", "history", "b", "--db", str(path)]) == 0
    [event] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (event["member"], event["action"], event["after"]["label"]) == ("cleo", "create", "laugh")

    code, out, _ = _run(capsys, "team", "leave", "--db", str(path))
    assert code == 0
    code, out, _ = _run(capsys, "team", "status", "--db", str(path))
    assert code == 0 and out == {"team": None}


def test_sslmode_in_the_url_is_honoured(pg_server, tmp_path, capsys):  # noqa: F811
    path = tmp_path / "s.duckdb"
    member_store(path).close()
    # the throwaway server has no TLS, so a URL that requires it is refused before anything is sent
    code, _, err = _run(capsys, "team", "join", pg_server.url() + "?sslmode=require", "--db", str(path))
    assert code == 1 and "cannot be reached" in err and "SSL" in err


def test_a_store_that_never_joined_a_team_needs_no_server(tmp_path, capsys):
    path = tmp_path / "alone.duckdb"
    member_store(path).close()
    code, out, _ = _run(capsys, "team", "status", "--db", str(path))
    assert code == 0 and out == {"team": None}


def test_a_newer_server_takes_an_older_client_only_while_it_says_it_serves_it(pg_server, tmp_path):  # noqa: F811
    from app.team import join_team
    from storage.errors import ThinsliceError
    url = pg_server.new_database()
    member_url = pg_server.add_member(url, "ana")
    with team_server.connect(url) as con:   # the project moves on past this client's version
        con.execute("INSERT INTO thinslice.schema_version (version) VALUES (%s)", [LATEST_VERSION + 1])
    store = member_store(tmp_path / "ana.duckdb")
    try:
        assert join_team(store, member_url, "ana") == ("ana", False)   # still served
        with team_server.connect(url) as con:   # a change older clients cannot follow
            con.execute("UPDATE thinslice.serves SET oldest_client = %s", [LATEST_VERSION + 1])
        with pytest.raises(ThinsliceError, match=f"serves Thinslice from version {LATEST_VERSION + 1}.*Update"):
            join_team(store, member_url, "ana")
    finally:
        store.close()
