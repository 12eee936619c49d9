"""Opening the one DuckDB file, one cursor per thread, and transactions."""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from storage.errors import StoreLockedError, StoreOpenError, StoreTooNewError
from storage.schema import LATEST_VERSION, current_version, migrate


def data_home() -> Path:
    """The user's data folder for Thinslice (THINSLICE_HOME overrides it, e.g. in tests)."""
    override = os.environ.get("THINSLICE_HOME")
    if override:
        return Path(override)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "thinslice"


def default_store_path() -> Path:
    return data_home() / "thinslice.duckdb"


class Store:
    """One DuckDB file. The GUI thread and each worker thread get their own cursor.

    DuckDB allows one connection per process per file; a connection shared between threads fails
    ("connection is busy"), so every thread asks `cursor()` for its own.
    """

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection) -> None:
        self.path = path
        self._con = con
        self._local = threading.local()
        self._lock = threading.Lock()
        self._cursors: list[duckdb.DuckDBPyConnection] = []

    @classmethod
    def open(cls, path: Path | str, *, migrate_to: int | None = LATEST_VERSION) -> "Store":
        """Open (creating if needed) and upgrade the store. Raises a `ThinsliceError` with a clear message."""
        path = Path(path).expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            con = duckdb.connect(str(path))
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" in text.lower():
                raise StoreLockedError(path) from None
            raise StoreOpenError(path, text.splitlines()[0]) from None
        except duckdb.Error as exc:
            raise StoreOpenError(path, str(exc).splitlines()[0]) from None
        found = current_version(con)
        if found > LATEST_VERSION:
            con.close()
            raise StoreTooNewError(path, found, LATEST_VERSION)
        if migrate_to is not None:
            migrate(con, migrate_to)
        return cls(path, con)

    @property
    def version(self) -> int:
        return current_version(self.cursor())

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's own cursor on the store."""
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            with self._lock:
                cur = self._con.cursor()
                self._cursors.append(cur)
            self._local.cursor = cur
        return cur

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """All or nothing: commits when the block ends, rolls back on any exception."""
        cur = self.cursor()
        cur.execute("BEGIN TRANSACTION")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def checkpoint(self) -> None:
        self.cursor().execute("CHECKPOINT")

    def close(self, wait_s: float = 10.0) -> None:
        """Close every cursor and the file. A query still finishing on a worker is waited for (up to
        `wait_s`), since DuckDB refuses to close a connection that is busy rather than waiting itself."""
        deadline = time.monotonic() + wait_s
        with self._lock:
            for cur in self._cursors:
                try:
                    cur.close()
                except duckdb.Error:
                    pass
            self._cursors.clear()
            while True:
                try:
                    self._con.close()
                    break
                except duckdb.Error:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)
        self._local = threading.local()
