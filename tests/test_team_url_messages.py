"""A team address libpq cannot use as written is refused in one line naming what is wrong, by every team verb,
before anything is connected to or changed."""
from __future__ import annotations

import pytest

from app.cli import dispatch

BAD = [("postgresql://ana@127.0.0.1:1/team?connect_timeout=abc", "bad value for connect_timeout: 'abc'"),
       ("host=127.0.0.1 port=1 dbname=team connect_timeout=1.5e", "bad value for connect_timeout: '1.5e'"),
       ("postgresql://ana:secret@127.0.0.1:1/team?connect_timeout=-x", "bad value for connect_timeout: '-x'"),
       ("postgresql://ana@127.0.0.1:1/team?nonsense=1", 'invalid URI query parameter: "nonsense"')]


@pytest.mark.parametrize("url,why", BAD)
def test_a_team_url_with_a_bad_option_gets_one_line_not_a_traceback(url, why, tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    for verb in (["team", "init", url], ["team", "add-member", url, "bo", "--no-password"],
                 ["team", "join", url, "--db", str(db), "--create"]):
        assert dispatch(verb) == 1, verb
        err = [line for line in capsys.readouterr().err.splitlines() if "used for this command only" not in line]
        assert len(err) == 1 and err[0].startswith("thinslice: The team address ") and why in err[0], err
        assert "secret" not in err[0] and "Traceback" not in err[0]
