"""Keeping a store safe: a consistent backup, a full read-back check, and recovery from a damaged log.

A backup is written by DuckDB itself (`COPY FROM DATABASE` into a fresh file, inside one read
transaction), so a checkpoint or a write running at the same time can never tear it; it goes to a
temporary name and is renamed into place only once written and checked. The check reads every row of every
table (the annotation history included), because a damaged block is only noticed when it is read.
Recovery sets a damaged write-ahead log aside, keeps the part of it before the damage, opens the store
with that, and puts back from the edit journal (`storage/journal.py`) every acknowledged label edit the
store still lacks.
"""
from __future__ import annotations

import itertools
import os
import re
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from storage.errors import StoreCheckFailed, StoreOpenError, StoreWalDamaged
from storage.journal import journal_path, read_records, replay
from storage.store import Store, wal_path

_DAMAGE_AT = re.compile(r"byte position (\d+)")
_BACKUP_ALIAS = "thinslice_backup"
_BACKUP_NUMBERS = itertools.count(1)   # each backup attaches its copy under a name of its own


@dataclass(frozen=True)
class TableCheck:
    table: str
    rows: int


@dataclass(frozen=True)
class Recovery:
    """What `recover` did: the log kept aside, how much of it was replayed, how much was dropped, and how
    many acknowledged edits the edit journal put back."""

    store: Path
    damaged_log: Path | None
    log_bytes: int
    kept_bytes: int
    edits_replayed: int = 0

    @property
    def dropped_bytes(self) -> int:
        return self.log_bytes - self.kept_bytes

    def describe(self) -> str:
        """One line for the user: what was kept, what was dropped, and what the journal put back."""
        replayed = (f"put back {self.edits_replayed} acknowledged label "
                    f"edit{'' if self.edits_replayed == 1 else 's'} from the edit journal")
        if self.damaged_log is None:
            if self.edits_replayed:
                return f"Recovered {self.store}: {replayed}; nothing acknowledged is missing now."
            return f"{self.store} opened normally; nothing needed recovering."
        if self.kept_bytes == 0:
            kept = "kept everything up to the last checkpoint; dropped the whole log"
        else:
            kept = (f"kept everything up to the last checkpoint and the first {self.kept_bytes} bytes of the log; "
                    f"dropped the rest")
        return (f"Recovered {self.store}: {kept} ({self.dropped_bytes} of {self.log_bytes} bytes: the changes "
                f"written after the damage), and {replayed}. The damaged log is kept at {self.damaged_log}.")


def _main_database(cur: duckdb.DuckDBPyConnection) -> str:
    return str(cur.execute("SELECT current_database()").fetchall()[0][0])


def _tables(cur: duckdb.DuckDBPyConnection, database: str) -> list[str]:
    rows = cur.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND NOT temporary"
                       " ORDER BY table_name", [database]).fetchall()
    return [str(r[0]) for r in rows]


def check_connection(cur: duckdb.DuckDBPyConnection, path: Path, database: str | None = None) -> list[TableCheck]:
    """Read every row of every table of `database` (default: the connection's own); `StoreCheckFailed`
    names the first table that cannot be read."""
    database = database or _main_database(cur)
    found: list[TableCheck] = []
    for table in _tables(cur, database):
        name = f'"{database}"."main"."{table}"'
        try:
            # every column of every row is decoded: a damaged block anywhere in the table shows up here
            reader = cur.sql(f"SELECT * FROM {name}").to_arrow_reader(100_000)
            rows = sum(batch.num_rows for batch in reader)
        except (duckdb.Error, OSError) as exc:  # a damaged block met while streaming rows surfaces as OSError
            raise StoreCheckFailed(path, table, str(exc).splitlines()[0][:200]) from None
        found.append(TableCheck(table, rows))
    if not found:
        raise StoreCheckFailed(path, "schema_version", "the store has no tables")
    return found


def check_store(store: Store) -> list[TableCheck]:
    """Every table of an open store, read back in full (see `check_connection`)."""
    return check_connection(store.cursor(), store.path)


def backup_store(store: Store, out: Path | str) -> list[TableCheck]:
    """Write a consistent copy of `store` to the new file `out` and check it; returns the copy's tables.

    `out` must not exist yet (a backup never overwrites). Nothing is left at `out` when the copy fails."""
    out = Path(out).expanduser().resolve()
    if out.exists() or wal_path(out).exists():
        raise StoreOpenError(out, "a file is already there; a backup never overwrites (choose a new name)")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    for leftover in (partial, wal_path(partial)):
        leftover.unlink(missing_ok=True)
    cur = store.cursor()
    source = _main_database(cur)
    alias = f"{_BACKUP_ALIAS}_{next(_BACKUP_NUMBERS)}"   # attached databases are shared by every cursor
    try:
        cur.execute(f"ATTACH '{_quoted(partial)}' AS {alias} (READ_WRITE)")  # even from a read-only store
        try:
            cur.execute(f'COPY FROM DATABASE "{source}" TO {alias}')
            checks = check_connection(cur, out, alias)
            cur.execute(f"CHECKPOINT {alias}")
        finally:
            cur.execute(f"DETACH {alias}")
    except duckdb.Error as exc:
        for leftover in (partial, wal_path(partial)):
            leftover.unlink(missing_ok=True)
        raise StoreOpenError(out, f"the backup could not be written ({str(exc).splitlines()[0][:200]})") from None
    wal_path(partial).unlink(missing_ok=True)  # checkpointed: the copy is whole without it
    os.replace(partial, out)
    return checks


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")


def _try_open(path: Path) -> str | None:
    """None when the store opens (and replays its log); else DuckDB's reason."""
    try:
        duckdb.connect(str(path)).close()
    except duckdb.Error as exc:
        return str(exc)
    return None


def recover_store(path: Path | str) -> Recovery:
    """Open a store whose write-ahead log is damaged, keeping everything written before the damage, then
    put back every acknowledged label edit its edit journal holds that the store lacks.

    The log is moved aside (kept as `NAME.wal.damaged-TIME`), and the part before the first damaged entry
    is put back for DuckDB to replay; if DuckDB cannot say where the damage starts, the store opens with
    what was checkpointed. A store that opens normally and lacks nothing is left alone."""
    recovery = _recover_log(Path(path).expanduser().resolve())
    replayed = _replay_journal(recovery.store)
    return replace(recovery, edits_replayed=replayed) if replayed else recovery


def _replay_journal(path: Path) -> int:
    """Put back what the store at `path` lacks of its edit journal, then checkpoint and empty the journal;
    the number of acknowledged edits put back."""
    records = read_records(journal_path(path))
    if not records:
        return 0
    store = Store.open(path, create=False, journal=False)
    try:
        with store.transaction() as cur:
            put_back = replay(cur, records)
        store.checkpoint()
    finally:
        store.close()
    journal_path(path).unlink(missing_ok=True)  # the main file now holds every edit it had
    return put_back.edits


def _recover_log(path: Path) -> Recovery:
    """The write-ahead log part of `recover_store`."""
    log = wal_path(path)
    if not path.exists():
        raise StoreOpenError(path, "there is no store file to recover")
    reason = _try_open(path)
    if reason is None or not log.exists():
        return Recovery(path, None, 0, 0)
    if not _is_log_damage(reason):
        Store.open(path, create=False, journal=False).close()  # raises the error that says what is wrong (held, unreadable)
        return Recovery(path, None, 0, 0)
    aside = _aside_name(log)
    os.replace(log, aside)
    total = aside.stat().st_size
    keep = total
    while True:
        shutil.copyfile(aside, log)
        with open(log, "r+b") as handle:
            handle.truncate(keep)
        reason = _try_open(path)
        if reason is None:
            return Recovery(path, aside, total, keep)
        found = _DAMAGE_AT.search(reason)
        position = int(found.group(1)) if found and _is_log_damage(reason) else 0
        if position <= 0 or position >= keep:
            break
        keep = position
    log.unlink(missing_ok=True)
    reason = _try_open(path)
    if reason is not None:
        shutil.copyfile(aside, log)  # leave the store as it was found
        raise StoreWalDamaged(path, f"even without its log the store does not open: {reason.splitlines()[0][:160]}")
    return Recovery(path, aside, total, 0)


def _is_log_damage(reason: str) -> bool:
    """DuckDB's reason names the write-ahead log (not a lock held elsewhere, not the main file)."""
    return "WAL" in reason and "lock" not in reason.lower()


def _aside_name(log: Path) -> Path:
    """A new name beside the log for keeping a damaged copy of it (never one already used)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = log.with_name(f"{log.name}.damaged-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = log.with_name(f"{log.name}.damaged-{stamp}-{number}")
    return candidate
