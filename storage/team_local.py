"""What a local store keeps of its team project: the address and member, links to server labels, the outbox.

The address is kept without a password (`storage.team_server.public_url`). A label made here or brought
from the server has a link: its server uid and the server revision this copy stands for. An edit is queued
in the outbox (committed) before it is sent, and leaves it only once the server has answered, so an edit
made while the server is away, or by a client killed before it heard back, is sent when it can be, once
(the server recognises a resent edit by its uid) and in the order it was made.

The store also keeps how far its own history has been accounted for (the last local history event a team
edit was queued, sent or brought in for), so a change made without the session (the command line, or a
command that wrote the store while the app was closed) is found at the next session start, and only once.
The outbox and link writes take one lock: the window's team thread marks edits sent while its GUI thread
queues new ones, and both change a label's link.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from storage.annotations import EDITABLE_FIELDS, writing
from storage.store import Store

SEEN_KEY = "local_event"   # team_state: the last local history event accounted for
# keeps SEEN_KEY at the newest local history event, in the transaction of the write that accounts for it
_MARK_SEEN = ("INSERT INTO team_state SELECT ?, CAST(coalesce(max(id), 0) AS VARCHAR) FROM annotation_event"
              " ON CONFLICT (key) DO UPDATE SET value = excluded.value")


@dataclass(frozen=True)
class Queued:
    """One edit waiting in the outbox."""

    seq: int
    edit_uid: str
    annotation_id: int
    body: dict[str, Any]


@dataclass(frozen=True)
class LocalChange:
    """A change of a label the server has, made here without the session: the label's state after it."""

    event_id: int           # the local history event it is
    annotation_id: int
    stimulus_id: int
    annotator: str
    after: dict[str, Any]   # EDITABLE_FIELDS and `deleted`


@dataclass(frozen=True)
class StimulusKey:
    """How a stimulus is named on the team server: its dataset's name and its own id in the release."""

    dataset: str
    stimulus: str


class TeamLocal:
    """The team tables of one local store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()

    # -- the project ------------------------------------------------------------------------------
    def get(self, key: str) -> str | None:
        row = self.store.cursor().execute("SELECT value FROM team_state WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def put(self, values: dict[str, str | None]) -> None:
        with self._lock, writing(self.store, "The team settings") as cur:
            for key, value in values.items():
                cur.execute("DELETE FROM team_state WHERE key = ?", [key])
                if value is not None:
                    cur.execute("INSERT INTO team_state VALUES (?, ?)", [key, value])

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
        """Link a label to the server revision its copy stands for; the history written so far is accounted for
        (this is called once the label's local write is done, for an edit being sent or one brought in)."""
        with self._lock, writing(self.store, "The team link") as cur:
            cur.execute("INSERT INTO team_link VALUES (?, ?, ?) ON CONFLICT (annotation_id) DO UPDATE"
                        " SET uid = excluded.uid, revision = excluded.revision", [annotation_id, uid, revision])
            cur.execute(_MARK_SEEN, [SEEN_KEY])

    def mark_seen(self) -> None:
        """Account for the whole local history as it is now (a store joining a team, or one joined before
        the store kept this mark)."""
        with self._lock, writing(self.store, "The team settings") as cur:
            cur.execute(_MARK_SEEN, [SEEN_KEY])

    # -- the outbox -------------------------------------------------------------------------------
    def queue(self, edits: list[tuple[int, str, int, dict[str, Any]]]) -> None:
        """Queue edits (local id, server uid, revision expected after it, body) and move each label's link
        to that revision, in one transaction: the next edit of the label builds on this one. A label-set
        edit has no label: its local id is -1. The history written so far is accounted for."""
        with self._lock, writing(self.store, "The team outbox") as cur:
            for annotation_id, uid, revision, body in edits:
                cur.execute("INSERT INTO team_outbox (edit_uid, annotation_id, body) VALUES (?, ?, ?)",
                            [body["edit_uid"], annotation_id, json.dumps(body)])
                if annotation_id < 0:
                    continue
                cur.execute("DELETE FROM team_link WHERE annotation_id = ?", [annotation_id])
                cur.execute("INSERT INTO team_link VALUES (?, ?, ?)", [annotation_id, uid, revision])
            cur.execute(_MARK_SEEN, [SEEN_KEY])

    def changed_unseen(self, annotators: Sequence[str]) -> list[LocalChange]:
        """Changes of `annotators`' labels the server already has that no team edit accounts for (made
        while no session ran), oldest first, one per local history event."""
        if not annotators or self.get(SEEN_KEY) is None:
            return []
        rows = self.store.cursor().execute(
            "SELECT e.id, e.annotation_id, a.stimulus_id, a.annotator, e.after FROM annotation_event e"
            " JOIN annotation a ON a.id = e.annotation_id JOIN team_link l ON l.annotation_id = e.annotation_id"
            f" WHERE e.id > ? AND e.after IS NOT NULL AND a.annotator IN ({', '.join('?' * len(annotators))})"
            " ORDER BY e.id", [int(self.get(SEEN_KEY) or 0), *annotators]).fetchall()
        changes = []
        for event_id, annotation_id, stimulus_id, annotator, after in rows:
            state = json.loads(after)
            changes.append(LocalChange(int(event_id), int(annotation_id), int(stimulus_id), annotator,
                                       {**{name: state.get(name) for name in EDITABLE_FIELDS},
                                        "deleted": bool(state.get("deleted"))}))
        return changes

    def unlinked(self, annotators: Sequence[str]) -> list[tuple[int, int]]:
        """(id, first local history event) of the live labels of `annotators` the server has never heard of
        (made before joining, or by a command that ran without the team session), oldest first."""
        if not annotators:
            return []
        rows = self.store.cursor().execute(
            "SELECT a.id, coalesce(min(e.id), 0) FROM annotation a LEFT JOIN team_link l ON l.annotation_id = a.id"
            " LEFT JOIN annotation_event e ON e.annotation_id = a.id WHERE l.uid IS NULL AND a.deleted_at IS NULL"
            f" AND a.annotator IN ({', '.join('?' * len(annotators))}) GROUP BY a.id ORDER BY 2, a.id",
            list(annotators)).fetchall()
        return [(int(r[0]), int(r[1])) for r in rows]

    def waiting(self, limit: int | None = None) -> list[Queued]:
        sql = "SELECT seq, edit_uid, annotation_id, body FROM team_outbox ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [Queued(int(r[0]), r[1], int(r[2]), json.loads(r[3]))
                for r in self.store.cursor().execute(sql).fetchall()]

    def waiting_count(self) -> int:
        return int(self.store.cursor().execute("SELECT count(*) FROM team_outbox").fetchone()[0])

    def waiting_for(self, annotation_id: int) -> bool:
        return bool(self.store.cursor().execute("SELECT count(*) FROM team_outbox WHERE annotation_id = ?",
                                                [annotation_id]).fetchone()[0])

    def sent(self, seq: int, annotation_id: int, uid: str, revision: int | None) -> None:
        """The server has answered edit `seq`: drop it; with `revision`, the label's copy now stands for it
        (unless later edits of it are still waiting, which build on the revision they were queued with)."""
        with self._lock, writing(self.store, "The team outbox") as cur:
            cur.execute("DELETE FROM team_outbox WHERE seq = ?", [seq])
            later = cur.execute("SELECT count(*) FROM team_outbox WHERE annotation_id = ?",
                                [annotation_id]).fetchone()[0]
            if revision is not None and not later:
                cur.execute("DELETE FROM team_link WHERE annotation_id = ?", [annotation_id])
                cur.execute("INSERT INTO team_link VALUES (?, ?, ?)", [annotation_id, uid, revision])

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
