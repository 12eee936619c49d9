"""The team tests' cluster and members: the session's PostgreSQL cluster as a pytest fixture (the cluster
itself is `benchmarks.pg_cluster`, which the team benchmark shares without pytest), and `Client`, one member
at work through the command line's kind of session."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.pg_cluster import (ADMIN, BIN, PASSWORD, STIMULI, PgServer, available, member_store,  # noqa: F401
                                   shut_down, start_server)

_shared: dict[str, object] = {"server": None, "root": None, "users": 0}


@pytest.fixture(scope="session")
def pg_server():
    """The session's cluster; skipped, saying why, when the PostgreSQL binaries are not installed.

    Every test module imports this fixture, which gives each module a session fixture of its own; they
    share one cluster, started by the first and stopped when the last is torn down."""
    if not available():
        pytest.skip(f"PostgreSQL server binaries not found in {BIN} (install Debian's postgresql package)")
    if _shared["server"] is None:
        _shared["server"], _shared["root"] = start_server()
    _shared["users"] += 1
    try:
        yield _shared["server"]
    finally:
        _shared["users"] -= 1
        if not _shared["users"]:
            shut_down(_shared["server"], _shared["root"])
            _shared["server"] = _shared["root"] = None


class Client:
    """One member at work: a local store joined to the team, its annotation model and team session."""

    def __init__(self, path: Path, url: str, member: str, *, annotator: str | None = None,
                 fresh: bool = True) -> None:
        from app.annotation_model import AnnotationModel
        from app.changes import ChangeChannel
        from app.team import TeamSession, join_team
        from storage.annotations import AnnotationStore
        from storage.store import Store
        self.store = member_store(path) if fresh else Store.open(path)
        if fresh:
            join_team(self.store, url, member)
        self.changes = ChangeChannel()
        self.model = AnnotationModel(AnnotationStore(self.store), self.changes, annotator=annotator or member)
        self.session = TeamSession(self.store, self.model)
        self.session.start()

    def stimulus(self, name: str) -> int:
        return self.store.cursor().execute("SELECT id FROM stimulus WHERE external_id = ?", [name]).fetchone()[0]

    def show(self, name: str) -> None:
        self.model.load(self.stimulus(name))

    def close(self) -> None:
        self.session.stop()
        self.store.close()


def until(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Whether `condition` holds within `timeout_s` (asked every 20 ms; once more at the end)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()
