"""A member's password never reaches the server in clear: `team add-member` sends a SCRAM verifier made by
libpq on the client, and joining authenticates by SCRAM, so a server that logs every statement holds no
password after either."""
from __future__ import annotations

import json
import time

import psycopg

from app.cli import dispatch
from storage import team_server
from tests.pg_server import member_store, pg_server  # noqa: F401  (the session's cluster)

SECRET = "Corr3ct-h0rse-battery-staple"


def _logging_every_statement(url: str, on: bool) -> None:
    with team_server.connect(url) as con:
        con.execute("ALTER SYSTEM SET log_statement = 'all'" if on else "ALTER SYSTEM RESET log_statement")
        con.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:   # the reload reaches new sessions within moments
        with team_server.connect(url) as con:
            if (con.execute("SHOW log_statement").fetchone()[0] == "all") == on:
                return
        time.sleep(0.05)
    raise AssertionError("the server did not take the new log_statement")


def test_add_member_and_join_leave_no_password_in_the_servers_statement_log(pg_server, tmp_path, capsys,  # noqa: F811
                                                                          monkeypatch):
    url = pg_server.new_database()
    log = pg_server.root / "log"
    _logging_every_statement(url, True)
    try:
        start = log.stat().st_size
        monkeypatch.setattr("getpass.getpass", lambda prompt="": SECRET)   # the lead types it at the prompt
        assert dispatch(["team", "add-member", url, "rosa"]) == 0
        assert json.loads(capsys.readouterr().out) == {"member": "rosa", "lead": False}
        path = tmp_path / "rosa.duckdb"
        member_store(path).close()
        with_password = url.replace(f"{pg_server.url().split('@')[0].split('//')[1]}@", f"rosa:{SECRET}@")
        assert dispatch(["team", "join", with_password, "--db", str(path)]) == 0
        assert json.loads(capsys.readouterr().out)["member"] == "rosa"
        with psycopg.connect(with_password) as con:   # the password works: the verifier is rosa's
            assert con.execute("SELECT current_user").fetchone()[0] == "rosa"
    finally:
        _logging_every_statement(url, False)
    written = log.read_bytes()[start:].decode("utf-8", "replace")
    assert 'ALTER ROLE "rosa" PASSWORD' in written and "SCRAM-SHA-256$" in written   # the log did record it
    assert SECRET not in written
