"""What a local store keeps of its team project: the address and member, links to server labels, the outbox.

The address is kept without a password (`storage.team_server.public_url`). A label made here or brought
from the server has a link: its server uid and the server revision this copy stands for. An edit is queued
in the outbox (committed) before it is sent, and leaves it only once the server has answered, so an edit
made while the server is away, or by a client killed before it heard back, is sent when it can be, once
(the server recognises a resent edit by its uid) and in the order it was made. An edit the server refused
for its values stays in the outbox, marked with the reason, until a later edit of the label replaces it.

What is sent is read from the store's own history: every local history event is accounted for once, either
queued (a change of a label this member sends), brought in (written from the server, see `absorbing`) or
not this member's to send. The store keeps how far that has gone (`SEEN_KEY`: every event up to it is
accounted for); events above it accounted for while another write was still under way (whose event ids may
be lower, not yet committed) are kept beside it until no write is under way, so the mark moves only over
ids actually accounted for. A change made without the session (the command line, or a command that wrote
the store while the app was closed) is thus found at the next session start, and only once. The outbox and
link writes take one lock: the window's team thread marks edits sent while other threads queue new ones.
"""
from __future__ import annotations

import json
import threading
import uuid
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb

from storage.annotations import EDITABLE_FIELDS, Annotation, writes_open, writing
from storage.store import Store

SEEN_KEY = "local_event"   # team_state: every local history event up to this one is accounted for
IDENTITY_KEY = "store_uid"  # team_state: this store's own id among the team's clients
SETS_KEY = "label_set_revisions"   # team_state: each label set's server revision as this store has it
_LINK = ("INSERT INTO team_link VALUES (?, ?, ?) ON CONFLICT (annotation_id) DO UPDATE"
         " SET uid = excluded.uid, revision = excluded.revision")
# the accounted-for mark as last committed, by store: read before every send, so kept rather than re-read;
# every write of it goes through `TeamLocal`, which keeps this in step after its commit
_seen_kept: weakref.WeakKeyDictionary[Store, str | None] = weakref.WeakKeyDictionary()
# how many edits wait in the outbox, by store: asked after every edit, known until the outbox is written
_waiting_kept: weakref.WeakKeyDictionary[Store, int] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Queued:
    """One edit waiting in the outbox."""

    seq: int
    edit_uid: str
    annotation_id: int
    body: dict[str, Any]


@dataclass(frozen=True)
class LocalChange:
    """A local history event not yet accounted for: the label's state after it."""

    event_id: int           # the local history event it is
    annotation_id: int
    stimulus_id: int
    annotator: str
    after: dict[str, Any]   # EDITABLE_FIELDS and `deleted`
    link: tuple[str, int] | None = None   # the label's (server uid, revision) when it was read


@dataclass(frozen=True)
class StimulusKey:
    """How a stimulus is named on the team server: its dataset's name and its own id in the release."""

    dataset: str
    stimulus: str


class TeamLocal:
    """The team tables of one local store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.lock = threading.RLock()
        self._absorber: int | None = None     # the thread writing labels from the server now
        self._own = threading.local()          # set while this thread writes the team tables

    def writing_here(self) -> bool:
        """Whether this thread is writing the team tables now (a write no label change comes from)."""
        return getattr(self._own, "on", False)

    @contextmanager
    def _writing(self, what: str, *, outbox: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """`writing`, marked as this class's own while it lasts (its commit is heard by `after_commit`); one
        that writes the `outbox` makes its count be read again."""
        self._own.on = True
        try:
            with writing(self.store, what, history=False) as cur:
                yield cur
        finally:
            self._own.on = False
            if outbox:
                _waiting_kept.pop(self.store, None)

    def absorbing_here(self) -> bool:
        """Whether this thread is writing labels from the server now (their events are not to be sent)."""
        return self._absorber == threading.get_ident()

    @contextmanager
    def absorbing(self) -> Iterator[list[Annotation]]:
        """Write labels from the server within: the caller adds to the list it gets the labels it wrote, and
        their history events are accounted for as brought in, never queued. The lock is held throughout,
        so nothing else accounts for those events first."""
        with self.lock:
            before = self.mark_now()
            written: list[Annotation] = []
            self._absorber = threading.get_ident()
            try:
                yield written
            finally:
                self._absorber = None
                # each write's event is the one that left its label at the revision the write returned (an
                # edit made here meanwhile, on another thread, has a revision of its own)
                wrote = {(a.id, a.revision) for a in written}
                if wrote:
                    ids = sorted({i for i, _ in wrote})
                    rows = self.store.cursor().execute(
                        "SELECT id, annotation_id, CAST(json_extract(after, '$.revision') AS INTEGER)"
                        f" FROM annotation_event WHERE id > ? AND annotation_id IN ({', '.join('?' * len(ids))})",
                        [before, *ids]).fetchall()
                    self.account([int(r[0]) for r in rows if (int(r[1]), r[2]) in wrote])

    # -- the project ------------------------------------------------------------------------------
    def get(self, key: str) -> str | None:
        if key == SEEN_KEY and self.store in _seen_kept:
            return _seen_kept[self.store]
        row = self.store.cursor().execute("SELECT value FROM team_state WHERE key = ?", [key]).fetchone()
        value = row[0] if row else None
        if key == SEEN_KEY:
            _seen_kept[self.store] = value
        return value

    def put(self, values: dict[str, str | None]) -> None:
        with self.lock:
            _seen_kept.pop(self.store, None)   # read again after this write, whatever becomes of it
            with self._writing("The team settings") as cur:
                for key, value in values.items():
                    cur.execute("DELETE FROM team_state WHERE key = ?", [key])
                    if value is not None:
                        cur.execute("INSERT INTO team_state VALUES (?, ?)", [key, value])

    # -- label sets -------------------------------------------------------------------------------
    def set_revisions(self) -> dict[str, int]:
        """The server revision of each label set as this store last had it from or sent to the server."""
        return json.loads(self.get(SETS_KEY) or "{}")

    def keep_set_revisions(self, revisions: dict[str, int]) -> None:
        """Keep the server revisions of these label sets (0: the server has none of that name)."""
        with self.lock:
            self.put({SETS_KEY: json.dumps({**self.set_revisions(), **revisions})})

    # -- links ------------------------------------------------------------------------------------
    def link(self, annotation_id: int) -> tuple[str, int] | None:
        """(server uid, revision) of a local label, or None if the server has never heard of it."""
        row = self.store.cursor().execute("SELECT uid, revision FROM team_link WHERE annotation_id = ?",
                                          [annotation_id]).fetchone()
        return (row[0], int(row[1])) if row else None

    def local_id(self, uid: str) -> tuple[int, int] | None:
        """(local annotation id, revision) of a server label, or None if this store has no copy."""
        row = self.store.cursor().execute("SELECT annotation_id, revision FROM team_link WHERE uid = ?",
                                          [uid]).fetchone()
        return (int(row[0]), int(row[1])) if row else None

    def set_revision(self, annotation_id: int, uid: str, revision: int) -> None:
        """Link a label to the server revision its copy stands for."""
        with self.lock, self._writing("The team link") as cur:
            _keep_link(cur, annotation_id, uid, revision)

    def mark_now(self) -> int:
        """The newest local history event."""
        return int(self.store.cursor().execute("SELECT coalesce(max(id), 0) FROM annotation_event").fetchone()[0])

    def mark_seen(self) -> None:
        """Account for the whole local history as it is now (a store joining a team, or one joined before
        the store kept this mark)."""
        self.put({SEEN_KEY: json.dumps({"mark": self.mark_now(), "above": []})})

    # -- the outbox -------------------------------------------------------------------------------
    def queue(self, edits: list[tuple[int, str, int, dict[str, Any]]], accounted: Sequence[int] = ()) -> None:
        """Queue edits (local id, server uid, revision expected after it, body) and move each label's link
        to that revision, and account for the local history events `accounted`, in one transaction: the
        next edit of the label builds on this one. A label-set edit has no label: its local id is -1."""
        with self.lock:
            seen = self._settle(accounted) if accounted else None
            if not edits and seen is None:
                return
            with self._writing("The team outbox", outbox=bool(edits)) as cur:
                for annotation_id, uid, revision, body in edits:
                    cur.execute("INSERT INTO team_outbox (edit_uid, annotation_id, body) VALUES (?, ?, ?)",
                                [body["edit_uid"], annotation_id, json.dumps(body)])
                    if annotation_id >= 0:
                        _keep_link(cur, annotation_id, uid, revision)
                if seen is not None:
                    self._keep_seen(cur, seen)
            if seen is not None:
                _seen_kept[self.store] = seen

    def identity(self) -> str:
        """This store's own id among the team's clients (made once): with a label's local id or a history
        event's id it names that label or edit on the server the same way however often it is sent."""
        with self.lock:
            kept = self.get(IDENTITY_KEY)
            if kept is None:
                kept = str(uuid.uuid4())
                self.put({IDENTITY_KEY: kept})
            return kept

    def settle_sent(self, links: Sequence[tuple[int, str, int]], accounted: Sequence[int]) -> None:
        """Edits sent straight away have been answered: link each label (local id, uid, server revision) and
        account for the history events they came from, in one transaction."""
        with self.lock:
            seen = self._settle(accounted)
            with self._writing("The team link") as cur:
                for annotation_id, uid, revision in links:
                    _keep_link(cur, annotation_id, uid, revision)
                self._keep_seen(cur, seen)
            _seen_kept[self.store] = seen

    def _keep_seen(self, cur: duckdb.DuckDBPyConnection, seen: str) -> None:
        """Write the accounted-for mark (an update, as it nearly always exists: cheaper than an upsert)."""
        if not cur.execute("UPDATE team_state SET value = ? WHERE key = ?", [seen, SEEN_KEY]).fetchone()[0]:
            cur.execute("INSERT INTO team_state VALUES (?, ?)", [SEEN_KEY, seen])

    def account(self, ids: Sequence[int]) -> None:
        """Account for local history events that need no edit (brought in, or not this member's)."""
        self.queue([], ids)

    def _settle(self, ids: Sequence[int]) -> str:
        """What `SEEN_KEY` holds once `ids` are accounted for: the mark, and the ids above it accounted for
        out of order. The mark moves over accounted ids only while no write is under way (only then is every
        id below the newest committed, or never will be), and only up to the first event not accounted for: a
        local edit that has committed but whose sending waits for the session (while labels from the server
        are written and accounted for) must still be read as unsent."""
        mark, above = self._seen()
        above |= set(ids)
        if above and not writes_open(self.store):
            unread = self.store.cursor().execute(
                "SELECT min(id) FROM annotation_event WHERE id > ? AND NOT list_contains(?::BIGINT[], id)",
                [mark, sorted(above)]).fetchone()[0]
            passed = {i for i in above if unread is None or i < unread}
            if passed:
                mark, above = max(mark, *passed), above - passed
        return json.dumps({"mark": mark, "above": sorted(above)})

    def _seen(self) -> tuple[int, set[int]]:
        """The mark and the ids above it accounted for (a plain number: a store that kept only the mark)."""
        kept = json.loads(self.get(SEEN_KEY) or "0")
        if isinstance(kept, int):
            return kept, set()
        return int(kept["mark"]), set(kept["above"])

    def changed_unseen(self) -> list[LocalChange]:
        """Local history events not yet accounted for, oldest first."""
        mark, above = self._seen()
        rows = self.store.cursor().execute(
            "SELECT e.id, e.annotation_id, a.stimulus_id, a.annotator, e.after, l.uid, l.revision"
            " FROM annotation_event e JOIN annotation a ON a.id = e.annotation_id"
            " LEFT JOIN team_link l ON l.annotation_id = e.annotation_id WHERE e.id > ? ORDER BY e.id",
            [mark]).fetchall()
        changes = []
        for event_id, annotation_id, stimulus_id, annotator, after, uid, revision in rows:
            if int(event_id) in above:
                continue
            state = json.loads(after) if after is not None else {}
            changes.append(LocalChange(int(event_id), int(annotation_id), int(stimulus_id), annotator,
                                       {**{name: state.get(name) for name in EDITABLE_FIELDS},
                                        "deleted": bool(state.get("deleted"))},
                                       (uid, int(revision)) if uid is not None else None))
        return changes

    def unlinked(self, annotators: Sequence[str]) -> list[int]:
        """The live labels of `annotators` the server has never heard of whose history is all accounted for
        (made before joining), oldest first; a label with later events goes with those."""
        if not annotators:
            return []
        rows = self.store.cursor().execute(
            "SELECT a.id FROM annotation a LEFT JOIN team_link l ON l.annotation_id = a.id"
            " LEFT JOIN annotation_event e ON e.annotation_id = a.id WHERE l.uid IS NULL AND a.deleted_at IS NULL"
            f" AND a.annotator IN ({', '.join('?' * len(annotators))}) GROUP BY a.id"
            " HAVING coalesce(max(e.id), 0) <= ? ORDER BY a.id", [*annotators, self._seen()[0]]).fetchall()
        return [int(r[0]) for r in rows]

    def waiting(self, limit: int | None = None, after: int = 0) -> list[Queued]:
        """The outbox in order (from after `after`, at most `limit`)."""
        sql = "SELECT seq, edit_uid, annotation_id, body FROM team_outbox WHERE seq > ? ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [Queued(int(r[0]), r[1], int(r[2]), json.loads(r[3]))
                for r in self.store.cursor().execute(sql, [after]).fetchall()]

    def waiting_count(self) -> int:
        kept = _waiting_kept.get(self.store)
        if kept is None:
            kept = _waiting_kept[self.store] = int(
                self.store.cursor().execute("SELECT count(*) FROM team_outbox").fetchone()[0])
        return kept

    def waiting_for(self, annotation_id: int) -> bool:
        return bool(self.store.cursor().execute("SELECT count(*) FROM team_outbox WHERE annotation_id = ?",
                                                [annotation_id]).fetchone()[0])

    def sent(self, answers: Sequence[tuple[int, int, str, int | None]]) -> None:
        """The server has answered edits (seq, local id, server uid, revision), in one transaction: drop each,
        and the refused edits of its label before it (it carries the label's whole state, so it replaces
        them); with a revision, the label's copy now stands for it (unless later edits of it are still
        waiting, which build on the revision they were queued with)."""
        with self.lock, self._writing("The team outbox", outbox=True) as cur:
            for seq, annotation_id, uid, revision in answers:
                cur.execute("DELETE FROM team_outbox WHERE seq = ? OR (annotation_id = ? AND annotation_id >= 0"
                            " AND seq < ? AND json_extract(body, '$.refused') IS NOT NULL)",
                            [seq, annotation_id, seq])
                if annotation_id >= 0 and revision is not None:
                    cur.execute(_LINK.replace("VALUES (?, ?, ?)", "SELECT ?, ?, ? WHERE NOT EXISTS"
                                              " (SELECT 1 FROM team_outbox WHERE annotation_id = ?)"),
                                [annotation_id, uid, revision, annotation_id])

    def refuse(self, seq: int, reason: str) -> None:
        """The server refused edit `seq` for its values: it stays, marked with `reason` (never taken as sent)."""
        with self.lock, self._writing("The team outbox", outbox=True) as cur:
            cur.execute("UPDATE team_outbox SET body = json_merge_patch(body, ?) WHERE seq = ?",
                        [json.dumps({"refused": reason}), seq])

    def refused(self) -> list[str]:
        """Why the server refused the edits that wait marked, oldest first."""
        rows = self.store.cursor().execute("SELECT json_extract_string(body, '$.refused') FROM team_outbox"
                                           " WHERE json_extract(body, '$.refused') IS NOT NULL ORDER BY seq")
        return [r[0] for r in rows.fetchall()]

    # -- stimuli ----------------------------------------------------------------------------------
    def key_of(self, stimulus_id: int) -> StimulusKey:
        row = self.store.cursor().execute(
            "SELECT d.name, s.external_id FROM stimulus s JOIN dataset d ON d.id = s.dataset_id WHERE s.id = ?",
            [stimulus_id]).fetchone()
        if row is None:
            raise KeyError(stimulus_id)
        return StimulusKey(row[0], row[1])

    def datasets(self) -> set[str]:
        return {r[0] for r in self.store.cursor().execute("SELECT name FROM dataset").fetchall()}

    def stimulus_of(self, key: StimulusKey) -> int | None:
        """The local stimulus a server label belongs to, matched exactly by dataset name and external id."""
        row = self.store.cursor().execute(
            "SELECT s.id FROM stimulus s JOIN dataset d ON d.id = s.dataset_id WHERE d.name = ? AND s.external_id = ?",
            [key.dataset, key.stimulus]).fetchone()
        return int(row[0]) if row else None


def _keep_link(cur: duckdb.DuckDBPyConnection, annotation_id: int, uid: str, revision: int) -> None:
    """Link a label to a server uid and revision: an update when it has a link (the common case, cheaper
    than an upsert), else a new link."""
    if not cur.execute("UPDATE team_link SET uid = ?, revision = ? WHERE annotation_id = ?",
                       [uid, revision, annotation_id]).fetchone()[0]:
        cur.execute("INSERT INTO team_link VALUES (?, ?, ?)", [annotation_id, uid, revision])
