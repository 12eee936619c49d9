"""What a local store keeps of its team project: the address and member, links to server labels, the outbox.

The address is kept without a password (`storage.team_server.public_url`). A label made here or brought
from the server has a link: its server uid and the server revision this copy stands for. An edit is queued
in the outbox (committed) before it is sent, and leaves it only once the server has answered, so an edit
made while the server is away, or by a client killed before it heard back, is sent when it can be, once
(the server recognises a resent edit by its uid) and in the order it was made.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from storage.annotations import writing
from storage.store import Store


@dataclass(frozen=True)
class Queued:
    """One edit waiting in the outbox."""

    seq: int
    edit_uid: str
    annotation_id: int
    body: dict[str, Any]


@dataclass(frozen=True)
class StimulusKey:
    """How a stimulus is named on the team server: its dataset's name and its own id in the release."""

    dataset: str
    stimulus: str


class TeamLocal:
    """The team tables of one local store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- the project ------------------------------------------------------------------------------
    def get(self, key: str) -> str | None:
        row = self.store.cursor().execute("SELECT value FROM team_state WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def put(self, values: dict[str, str | None]) -> None:
        with writing(self.store, "The team settings") as cur:
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
        with writing(self.store, "The team link") as cur:
            cur.execute("INSERT INTO team_link VALUES (?, ?, ?) ON CONFLICT (annotation_id) DO UPDATE"
                        " SET uid = excluded.uid, revision = excluded.revision", [annotation_id, uid, revision])

    # -- the outbox -------------------------------------------------------------------------------
    def queue(self, edits: list[tuple[int, str, int, dict[str, Any]]]) -> None:
        """Queue edits (local id, server uid, revision expected after it, body) and move each label's link
        to that revision, in one transaction: the next edit of the label builds on this one. A label-set
        edit has no label: its local id is -1."""
        with writing(self.store, "The team outbox") as cur:
            for annotation_id, uid, revision, body in edits:
                cur.execute("INSERT INTO team_outbox (edit_uid, annotation_id, body) VALUES (?, ?, ?)",
                            [body["edit_uid"], annotation_id, json.dumps(body)])
                if annotation_id < 0:
                    continue
                cur.execute("DELETE FROM team_link WHERE annotation_id = ?", [annotation_id])
                cur.execute("INSERT INTO team_link VALUES (?, ?, ?)", [annotation_id, uid, revision])

    def unlinked(self, annotators: Sequence[str]) -> list[int]:
        """Live labels of `annotators` the server has never heard of (made before joining, or by a command
        that ran without the team session), oldest first."""
        if not annotators:
            return []
        rows = self.store.cursor().execute(
            "SELECT a.id FROM annotation a LEFT JOIN team_link l ON l.annotation_id = a.id WHERE l.uid IS NULL"
            f" AND a.deleted_at IS NULL AND a.annotator IN ({', '.join('?' * len(annotators))}) ORDER BY a.id",
            list(annotators)).fetchall()
        return [int(r[0]) for r in rows]

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
        with writing(self.store, "The team outbox") as cur:
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
