"""Opening the one DuckDB file, one cursor per thread, and transactions."""
from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from storage.attached import open_attached
from storage.errors import (StoreDiskFull, StoreEditsMissing, StoreLockedError, StoreMissingError, StoreOpenError,
                            StoreReadFailed, StoreTooNewError, StoreWalDamaged, ThinsliceError)
from storage.journal import TRIM_BYTES, EditJournal, gap, journal_path, read_records, sequence_value
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


_LOCK_HOLDER = re.compile(r"lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


def lock_holder(message: str) -> str:
    """'program (pid N)' for the process DuckDB names in a lock error; its command line when it can be read."""
    found = _LOCK_HOLDER.search(message)
    if found is None:
        return ""
    pid = found.group("pid")
    program = found.group("program")
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        command = " ".join(w.decode(errors="replace") for w in words if w)
        program = " ".join(command.split())[:120] or program  # one line, however the program was started
    except OSError:
        pass  # another system or the process just ended: DuckDB's program name will do
    return f"{program} (pid {pid})"


_NO_SPACE = ("No space left on device", "Disk quota exceeded")
_UNWRITTEN = re.compile(r'Could not write (?:to )?file "(?P<file>[^"]+)"')


def database_error(exc: duckdb.Error) -> ThinsliceError:
    """The one reading of a DuckDB error met in the middle of work: a write refused for want of space is a
    full disk (`StoreDiskFull`, naming the file it could not write); anything else is something in the store
    that could not be read (`StoreReadFailed`)."""
    text = str(exc)
    first = (text.splitlines() or [type(exc).__name__])[0][:200]
    for words in _NO_SPACE:
        if words in text:
            unwritten = _UNWRITTEN.search(text)
            what = f"{unwritten.group('file')} could not be written" if unwritten else "the store could not be written"
            return StoreDiskFull(f"{what} ({words})")
    return StoreReadFailed(first)


def wal_path(path: Path) -> Path:
    """The write-ahead log DuckDB keeps beside a store file."""
    return path.with_name(path.name + ".wal")


def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """A connection to `path`, or the `ThinsliceError` that says why there is none."""
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        text = str(exc)
        first = text.splitlines()[0] if text else type(exc).__name__
        if "lock" in text.lower():
            raise StoreLockedError(path, lock_holder(text), read_only_tried=read_only) from None
        if "WAL" in text and wal_path(path).exists():
            detail = first.split(": ", 1)[-1] if "replaying WAL" in first else first
            raise StoreWalDamaged(path, detail[:200]) from None
        raise StoreOpenError(path, first) from None


class Store:
    """One DuckDB file. The GUI thread and each worker thread get their own cursor.

    DuckDB allows one connection per process per file; a connection shared between threads fails
    ("connection is busy"), so every thread asks `cursor()` for its own.
    """

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, read_only: bool = False,
                 journal: EditJournal | None = None) -> None:
        self.path = path
        self.read_only = read_only
        self.journal = journal
        self._con = con
        self._local = threading.local()
        self._lock = threading.Lock()
        # one import writes at a time: a dataset's ids are kept unique by the writer adding only those it lacks,
        # which holds only if no other import's uncommitted stimuli are out of its sight (see schema V15)
        self.import_lock = threading.Lock()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        # what opening found to say (attached Parquet files moved or changed), one line each, and what each new
        # cursor runs first (`storage.attached.Opening`)
        self.notes: list[str] = []
        self._cursor_sql: list[str] = []

    @classmethod
    def open(cls, path: Path | str, *, migrate_to: int | None = LATEST_VERSION, read_only: bool = False,
             create: bool = True, journal: bool = True) -> "Store":
        """Open and upgrade the store. Raises a `ThinsliceError` with a clear message.

        `create=False` refuses a path with no store (`StoreMissingError`) instead of making an empty one.
        `read_only` opens without taking the write lock, so a store another program holds for reading can
        still be read; a store that needs upgrading is then opened for writing once, to upgrade it.
        The store is compared with its edit journal (`storage/journal.py`): acknowledged edits it lacks
        raise `StoreEditsMissing`. `journal=False` neither checks nor keeps the journal (`recover` itself,
        and the benchmark's bare edit)."""
        path = Path(path).expanduser().resolve()
        if not path.exists():
            if not create or read_only:
                raise StoreMissingError(path)
            path.parent.mkdir(parents=True, exist_ok=True)
        con = _connect(path, read_only)
        found = current_version(con)
        if found > LATEST_VERSION:
            con.close()
            raise StoreTooNewError(path, found, LATEST_VERSION)
        if migrate_to is not None and found < migrate_to:
            if read_only:
                con.close()
                con = _connect(path, False)
            migrate(con, migrate_to)
        read_only = read_only and found >= (migrate_to or 0)
        store = cls(path, con, read_only=read_only, journal=_journal_for(path, con, read_only) if journal else None)
        opening = open_attached(con, writable=not read_only)
        store.notes, store._cursor_sql = opening.notes, opening.cursor_sql
        return store

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
            for statement in self._cursor_sql:
                cur.execute(statement)
            self._local.cursor = cur
        return cur

    @contextmanager
    def transaction(self, *, journaled: bool = False, history: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
        """All or nothing: commits when the block ends, rolls back on any exception. A `journaled`
        transaction (a label edit) returns only once its history events are in the edit journal too; one
        without `history` writes no history events, so the journal has nothing to read after it."""
        cur = self.cursor()
        mark = self.journal.mark() if self.journal is not None else 0
        cur.execute("BEGIN TRANSACTION")
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")
        if self.journal is None or not history:
            return
        if not journaled:
            self.journal.note_unjournaled(cur)
            return
        with self.journal.lock:
            try:
                self.journal.record(cur, mark)
            except OSError:
                # the journal cannot be written (a full disk): the edit is kept by putting it in the main file
                cur.execute("CHECKPOINT")
                return
        if self.journal.size() > TRIM_BYTES:
            try:
                self.checkpoint()
            except duckdb.Error:
                pass  # another transaction is open: a later edit tries again

    def checkpoint(self) -> None:
        """Put everything committed into the main file; the edit journal is emptied then."""
        if self.journal is None:
            self.cursor().execute("CHECKPOINT")
            return
        with self.journal.lock:
            self.cursor().execute("CHECKPOINT")
            self.journal.trim()

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
        if self.journal is not None:
            with self.journal.lock:
                if not wal_path(self.path).exists():  # closing checkpointed: the main file has every edit
                    self.journal.trim()
                self.journal.close()


def _journal_for(path: Path, con: duckdb.DuckDBPyConnection, read_only: bool) -> EditJournal | None:
    """The edit journal of a store just opened, once the store is found to hold all of it; None for a
    read-only store (which writes no edits). Raises `StoreEditsMissing` (the connection closed) when
    acknowledged edits are not in the store."""
    records = read_records(journal_path(path))
    if records:
        lacking = gap(con, records)
        if lacking.edits:
            con.close()
            raise StoreEditsMissing(path, lacking.edits)
    if read_only:
        return None
    journal = EditJournal(journal_path(path), sequence_value(con, "seq_annotation_event"))
    if records:
        with journal.lock:  # the store has them all: once in the main file, the journal can let them go
            con.execute("CHECKPOINT")
            journal.trim()
    return journal
