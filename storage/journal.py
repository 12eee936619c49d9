"""The edit journal: every acknowledged label edit, kept a second time beside the store until DuckDB has it
in its main file.

DuckDB makes a commit durable in its write-ahead log, but a log damaged on disk may be replayed only up to
the damage, as if it ended there: the store opens and reads back whole, and the edits after the damage are
gone without a word. So each committed annotation write (`Store.transaction(journaled=True)`, which
`storage.annotations.writing` uses) appends the history events it wrote and the labels as they then stood
to `NAME.journal`, fsynced before the edit is reported saved. Opening the store compares the journal with
the store (`gap`): a journaled event the store lacks is an acknowledged edit lost, and `thinslice recover`
puts it back (`replay`). A checkpoint puts everything into the main file, and the journal is emptied then.

A record is `length (4 bytes) | crc32 (4 bytes) | JSON`, after a header line naming the format. The
record holds its rows with their column names, so it replays into the tables as they are. A record cut
short at the end (a crash while it was written) was never acknowledged and is ignored.
"""
from __future__ import annotations

import json
import os
import struct
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

HEADER = b"thinslice edit journal 1\n"
_RECORD = struct.Struct("<II")
# A journal larger than this is emptied by a checkpoint after the next edit, so it stays small.
TRIM_BYTES = 8 * 1024 * 1024
# A write of more history events than this (an annotation file's thousands of labels) is put in the main file
# by a checkpoint instead of being journaled: one checkpoint costs less than writing every row a second time.
CHECKPOINT_EVENTS = 5000
_EVENTS, _LABELS = "annotation_event", "annotation"


def journal_path(store_path: Path) -> Path:
    """The journal kept beside a store file."""
    return store_path.with_name(store_path.name + ".journal")


@dataclass(frozen=True)
class Gap:
    """What the store lacks of its journal: acknowledged history events and labels older than journaled."""

    events: int
    labels: int

    @property
    def edits(self) -> int:
        return max(self.events, self.labels)


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every whole record of the journal at `path`, in order (none when there is no journal). Reading stops
    at the first record that is cut short or fails its checksum."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    if not data.startswith(HEADER):
        return []
    records, at = [], len(HEADER)
    while at + _RECORD.size <= len(data):
        length, crc = _RECORD.unpack_from(data, at)
        body = data[at + _RECORD.size: at + _RECORD.size + length]
        if len(body) < length or zlib.crc32(body) != crc:
            break
        records.append(json.loads(body))
        at += _RECORD.size + length
    return records


def _ids(records: list[dict[str, Any]], table: str) -> dict[int, dict[str, Any]]:
    """The latest journaled row of `table` by id (for labels: the highest revision)."""
    found: dict[int, dict[str, Any]] = {}
    for record in records:
        part = record.get(table)
        if not part:
            continue
        columns = part["columns"]
        for values in part["rows"]:
            row = dict(zip(columns, values))
            held = found.get(row["id"])
            if held is None or int(row.get("revision") or 0) >= int(held.get("revision") or 0):
                found[row["id"]] = row
    return found


def gap(cur: duckdb.DuckDBPyConnection, records: list[dict[str, Any]]) -> Gap:
    """How much of the journal `records` the store behind `cur` lacks."""
    events = _ids(records, _EVENTS)
    labels = _ids(records, _LABELS)
    missing_events = missing_labels = 0
    if events:
        present = {r[0] for r in cur.execute(
            f"SELECT id FROM {_EVENTS} WHERE id BETWEEN ? AND ?", [min(events), max(events)]).fetchall()}
        missing_events = len(set(events) - present)
    if labels:
        stored = dict(cur.execute(f"SELECT id, revision FROM {_LABELS} WHERE id IN (SELECT unnest(?))",
                                  [list(labels)]).fetchall())
        missing_labels = sum(1 for i, row in labels.items()
                             if i not in stored or int(stored[i]) < int(row.get("revision") or 0))
    return Gap(missing_events, missing_labels)


def replay(cur: duckdb.DuckDBPyConnection, records: list[dict[str, Any]]) -> Gap:
    """Put back what the store lacks of `records` (inside the caller's transaction): each missing event
    with its own id, each label whose stored revision is older than journaled; the id sequences are moved
    past the ids put back. Returns what was put back."""
    lacking = gap(cur, records)
    events = _ids(records, _EVENTS)
    if events:
        present = {r[0] for r in cur.execute(
            f"SELECT id FROM {_EVENTS} WHERE id BETWEEN ? AND ?", [min(events), max(events)]).fetchall()}
        for event_id in sorted(set(events) - present):
            _insert(cur, _EVENTS, events[event_id])
    labels = _ids(records, _LABELS)
    if labels:
        stored = dict(cur.execute(f"SELECT id, revision FROM {_LABELS} WHERE id IN (SELECT unnest(?))",
                                  [list(labels)]).fetchall())
        for label_id, row in sorted(labels.items()):
            if label_id not in stored:
                _insert(cur, _LABELS, row)
            elif int(stored[label_id]) < int(row.get("revision") or 0):
                columns = [c for c in row if c != "id"]
                cur.execute(f"UPDATE {_LABELS} SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ?",
                            [*(row[c] for c in columns), label_id])
    for table, rows in ((_EVENTS, events), (_LABELS, labels)):
        if rows:
            _advance_sequence(cur, f"seq_{table}", max(rows))
    return lacking


def _insert(cur: duckdb.DuckDBPyConnection, table: str, row: dict[str, Any]) -> None:
    columns = list(row)
    cur.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                [row[c] for c in columns])


def sequence_value(cur: duckdb.DuckDBPyConnection, name: str) -> int:
    """The last value a sequence gave (0 before its first)."""
    rows = cur.execute("SELECT last_value FROM duckdb_sequences() WHERE sequence_name = ?", [name]).fetchall()
    return int(rows[0][0] or 0) if rows else 0


def _advance_sequence(cur: duckdb.DuckDBPyConnection, name: str, past: int) -> None:
    """Move sequence `name` on until its next value is after `past` (a log replayed only in part leaves it
    behind the ids the journal put back)."""
    behind = past - sequence_value(cur, name)
    if behind > 0:
        cur.execute(f"SELECT max(nextval('{name}')) FROM range(?)", [behind]).fetchall()


class EditJournal:
    """The journal of one open, writable store. `mark` before a journaled transaction, `record` after its
    commit (under `lock`, so no edit is reported saved before its record is on disk), `trim` after a
    checkpoint."""

    def __init__(self, path: Path, high: int) -> None:
        self.path = path
        self.lock = threading.Lock()
        self._high = high   # the highest history id journaled, or known to be in the main file
        self._fd: int | None = None

    def mark(self) -> int:
        """Where the next journaled transaction's events begin: every event id it writes is above this."""
        return self._high

    def note_unjournaled(self, cur: duckdb.DuckDBPyConnection) -> None:
        """A transaction that is not an edit (an import, a cue run) committed: its history events, if any,
        are not journaled, so the next edit need not read them."""
        with self.lock:
            self._high = max(self._high, sequence_value(cur, f"seq_{_EVENTS}"))

    def record(self, cur: duckdb.DuckDBPyConnection, mark: int) -> bool:
        """Append the events committed above `mark`, and their labels as they now stand, fsynced. Called
        with `lock` held, right after the commit. False when there was nothing to record. A write of more
        than CHECKPOINT_EVENTS events is checkpointed into the main file instead, and the journal emptied."""
        # one read for the common case, an edit of a few events; a large write is read whole only when it
        # cannot be checkpointed instead
        events = cur.execute(f"SELECT * FROM {_EVENTS} WHERE id > ? ORDER BY id LIMIT ?", [mark, CHECKPOINT_EVENTS + 1])
        event_columns = [d[0] for d in events.description]
        event_rows = events.fetchall()
        if len(event_rows) > CHECKPOINT_EVENTS:
            try:
                cur.execute("CHECKPOINT")
            except duckdb.Error:   # another transaction is open: the events are journaled as any edit's
                event_rows = cur.execute(f"SELECT * FROM {_EVENTS} WHERE id > ? ORDER BY id", [mark]).fetchall()
            else:
                self.trim()
                self._high = max(self._high, sequence_value(cur, f"seq_{_EVENTS}"))
                return True
        if not event_rows:
            return False
        label_ids = sorted({row[event_columns.index("annotation_id")] for row in event_rows})
        labels = cur.execute(f"SELECT * FROM {_LABELS} WHERE id IN (SELECT unnest(?))", [label_ids])
        label_columns = [d[0] for d in labels.description]
        body = json.dumps({_EVENTS: {"columns": event_columns, "rows": event_rows},
                           _LABELS: {"columns": label_columns, "rows": labels.fetchall()}},
                          default=str, separators=(",", ":")).encode()
        fd = self._open()
        os.write(fd, _RECORD.pack(len(body), zlib.crc32(body)) + body)
        os.fsync(fd)
        self._high = max(self._high, event_rows[-1][event_columns.index("id")])
        return True

    def size(self) -> int:
        """Bytes of the journal on disk."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def trim(self) -> None:
        """Empty the journal (called with `lock` held, once a checkpoint has put its edits in the main file)."""
        if self._fd is None and not self.path.exists():
            return
        fd = self._open()
        os.ftruncate(fd, len(HEADER))
        os.fsync(fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _open(self) -> int:
        """The journal's file, opened for appending once; a new file gets its header and is made durable
        in its folder."""
        if self._fd is None:
            fresh = not self.path.exists() or self.path.stat().st_size < len(HEADER)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
            if fresh:
                os.ftruncate(fd, 0)
                os.write(fd, HEADER)
                os.fsync(fd)
                folder = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(folder)
                finally:
                    os.close(folder)
            self._fd = fd
        return self._fd
