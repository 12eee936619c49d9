"""A team project: this store's annotation model kept in step with the team's PostgreSQL server. Qt-free.

The local store stays the working copy (so agreement, export and the history read it as for a local
project); the server holds the team's labels, label sets and full history and decides who may change what.
`TeamSession` joins the two:

- every command the model applies, undoes or redoes is sent at once while the server is reachable and
  nothing waits ahead of it, each edit with the server revision it was made on; otherwise it is queued in
  the local outbox (committed), which is sent in order, an edit leaving it once the server has answered.
  While the server is away edits only queue; the listener's reconnection sends them, in order, once (the
  server recognises a resent edit);
- a conflicting edit (the label changed on the server since) changes nothing there but is kept in the
  server's history beside the version that won; here the winning version replaces ours (our version stays in
  the local history) and the conflict is reported;
- a refused edit (row-level security: not this member's label, not a lead) is reported, and the label goes
  back to what the server has;
- another member's edit arrives by LISTEN/NOTIFY; the session reads the new history events and writes them
  into the local store through `AnnotationModel.absorb`, which refreshes the views over the change channel.
  A server label whose dataset or stimulus this store does not have is reported, never matched by guess.

Work that starts on the listener thread (a notification, a reconnection) is handed to `post`, which runs it
where the model lives: the window passes its GUI thread's queue; the default runs it at once under the
session's lock (the command line and tests).
"""
from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from app.annotation_model import AnnotationModel
from app.annotations import EditCommand, EditLabelSet, RenameLabel
from storage import pg_schema, team_server
from storage.annotations import (EDITABLE_FIELDS, Annotation, AnnotationError, AnnotationStore, Label,
                                 LabelSetSnapshot)
from storage.store import Store
from storage.team_local import Queued, StimulusKey, TeamLocal
from storage.team_server import TeamError, TeamRefused

URL_KEY, MEMBER_KEY, LAST_EVENT_KEY = "url", "member", "last_event"


@dataclass(frozen=True)
class TeamStatus:
    """What the status bar says about the team."""

    team: str                      # host:port/dbname
    member: str
    lead: bool
    online: bool
    waiting: int                   # edits in the outbox
    present: tuple[str, ...] = ()  # other members on the stimulus shown
    message: str = ""              # the last conflict, refusal or mismatch

    def text(self) -> str:
        parts = [f"Team {self.team} as {self.member}{' (lead)' if self.lead else ''}",
                 "online" if self.online else "offline"]
        if self.waiting:
            parts.append(f"{self.waiting} edit{'s' if self.waiting != 1 else ''} waiting")
        if self.present:
            parts.append("also here: " + ", ".join(self.present))
        return " · ".join(parts)


@dataclass
class Report:
    """Conflicts, refusals and unmatched labels since the session started, newest last."""

    conflicts: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)


def joined(store: Store) -> tuple[str, str] | None:
    """(url without password, member) of the team this store has joined, or None for a local project."""
    local = TeamLocal(store)
    url, member = local.get(URL_KEY), local.get(MEMBER_KEY)
    return (url, member) if url and member else None


def init_team(url: str) -> list[int]:
    """Create or upgrade the team schema on the server (run by the database's owner); the versions applied."""
    with team_server.connect(url) as con:
        return team_server.migrate(con)


def join_team(store: Store, url: str, member: str | None = None) -> tuple[str, bool]:
    """Connect this store to the team at `url` as `member` (default: the URL's user): checks the server has
    the schema and that the role is a member, then keeps the URL, without any password, in the store.
    Returns (member, lead). A password in the URL is used for this check but never kept."""
    with team_server.connect(url, user=member) as con:
        version = team_server.server_version(con)
        if version == 0:
            raise TeamError(f"The team server {team_server.describe(url)} has no Thinslice project yet;"
                            " its owner runs: thinslice team init URL")
        if version > pg_schema.LATEST_VERSION:
            raise TeamError(f"The team project on {team_server.describe(url)} is at version {version}; this"
                            f" Thinslice knows up to {pg_schema.LATEST_VERSION}. Update Thinslice.")
        name, lead = team_server.whoami(con)
    TeamLocal(store).put({URL_KEY: team_server.public_url(url), MEMBER_KEY: name})
    return name, lead


def leave_team(store: Store) -> None:
    """Make this store a local project again (its labels stay; edits still waiting are kept in the outbox)."""
    TeamLocal(store).put({URL_KEY: None, MEMBER_KEY: None})


class FromServer(EditCommand):
    """A server label's state written into the local store (created, changed, deleted or restored)."""

    text = "Team edit"

    def __init__(self, store: AnnotationStore, local: TeamLocal, member: str, row: dict[str, Any],
                 stimulus_id: int, annotation_id: int | None) -> None:
        self.store, self.local, self.member, self.row = store, local, member, row
        self.scope, self.annotation_id = stimulus_id, annotation_id

    def redo(self) -> list[Annotation]:
        row, fields = self.row, {name: self.row.get(name) for name in EDITABLE_FIELDS}
        written: list[Annotation] = []
        if self.annotation_id is None:
            created = self.store.create_many(self.scope, row["annotator"], [fields])[0]
            written.append(self.store.delete(created.id, self.member) if row["deleted"] else created)
        else:
            current = self.store.get(self.annotation_id)
            if current.deleted and not row["deleted"]:
                written.append(self.store.restore(current.id, self.member))
            changes = {k: v for k, v in fields.items() if getattr(current, k) != v}
            if changes:
                written.append(self.store.update(current.id, self.member, **changes))
            if row["deleted"] and not current.deleted:
                written.append(self.store.delete(current.id, self.member))
        self.local.set_revision(written[-1].id if written else self.annotation_id, str(row["uid"]),
                                int(row["revision"]))
        return written

    def undo(self) -> list[Annotation]:
        raise TeamError("Another member's edit cannot be undone here.")


class TeamSession:
    """Keeps `model` (over `store`) in step with the team this store has joined."""

    def __init__(self, store: Store, model: AnnotationModel, *, url: str | None = None,
                 member: str | None = None, post: Callable[[Callable[[], None]], None] | None = None) -> None:
        found = joined(store)
        if url is None or member is None:
            if found is None:
                raise TeamError("This store has not joined a team; run: thinslice team join URL")
            url, member = url or found[0], member or found[1]
        self.store, self.model, self.url, self.member = store, model, url, member
        self.local = TeamLocal(store)
        self.lead = False
        self.online = False
        self.present: tuple[str, ...] = ()
        self.message = ""
        self.report = Report()
        self.status_listeners: list[Callable[[TeamStatus], None]] = []
        self._post = post or (lambda work: work())
        self._lock = threading.RLock()
        self._con: psycopg.Connection | None = None
        self._shown: int | None = None
        self._keys: dict[int, StimulusKey] = {}
        self._listener = team_server.Listener(url, self._notified, self._connection_changed, self.local.datasets,
                                              user=member)
        kept = json.loads(self.local.get(LAST_EVENT_KEY) or '{"datasets": [], "id": 0}')
        self._last_event, self._datasets_read = int(kept["id"]), list(kept["datasets"])
        self._datasets = set(self._datasets_read)

    # -- starting and stopping --------------------------------------------------------------------
    def start(self, *, wait: bool = True) -> None:
        """Begin: send what waits, catch up, and listen. Works offline too: edits then wait in the outbox.
        With `wait` False (the window) nothing here waits for the server: the listener's first connection
        does the rest."""
        self._queue_unlinked()   # before edits are sent on, so none can be taken for one made without us
        self.model.outbound.append(self._send_on)
        self.model.subscribe(self._model_changed)
        if wait:
            try:
                self._connection()
                self._connection_changed(True)
            except TeamError as exc:   # unreachable, or no longer a member: say so, keep labelling locally
                self._set_message(str(exc))
        self._listener.start()

    def stop(self) -> None:
        """Stop listening and sending (edits from now on are not queued); the others no longer see this
        member on a stimulus."""
        if self.online:
            self._shown = None
            self._tell_presence()
        if self._send_on in self.model.outbound:
            self.model.outbound.remove(self._send_on)
        self.model.unsubscribe(self._model_changed)
        self._listener.stop()
        with self._lock:
            self._keep_position()
            if self._con is not None:
                self._con.close()
                self._con = None

    def status(self) -> TeamStatus:
        return TeamStatus(team_server.describe(self.url), self.member, self.lead, self.online,
                          self.local.waiting_count(), self.present, self.message)

    def _changed_status(self) -> None:
        status = self.status()
        for listener in list(self.status_listeners):
            listener(status)

    def _set_message(self, text: str) -> None:
        self.message = text
        self._changed_status()

    # -- the connection ---------------------------------------------------------------------------
    def _connection(self) -> psycopg.Connection:
        with self._lock:
            if self._con is None or self._con.closed:
                self._con = team_server.connect(self.url, user=self.member)
                self.member, self.lead = team_server.whoami(self._con)
            return self._con

    def _lost(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None
            if self.online:
                self.online = False
                self._changed_status()

    def _connection_changed(self, up: bool) -> None:
        """The listener's news: (re)connected, so send what waits and catch up; or the server is gone."""
        if not up:
            self._lost()
            return

        def resume() -> None:
            with self._lock:
                self.online = True
                self.flush()
                self.catch_up()
                self.catch_up_label_sets()
                self._tell_presence()
                self._changed_status()
        self._post(resume)

    # -- sending ----------------------------------------------------------------------------------
    def _send_on(self, command: EditCommand, written: Sequence[Annotation]) -> None:
        """The model's outbound hook: queue what `command` wrote, then send it if the server is there."""
        with self._lock:
            edits: list[tuple[int, str, int, dict[str, Any]]] = []
            if command.changes_label_sets:
                for name in _sets_changed(command):
                    body = {"kind": "label_set", "edit_uid": str(uuid.uuid4()), "name": name,
                            "document": self.model.store.label_set_document(name)}
                    edits.append((-1, "", 0, body))
            # a label one command wrote twice (restored, then changed): the second edit builds on the first
            chained: dict[int, tuple[str, int]] = {}
            for item in written:
                if isinstance(command, RenameLabel) and item.annotator not in (self.member, pg_schema.CONSENSUS):
                    continue  # another member's label followed the rename here; the server keeps it theirs
                edit = self._edit_of(item, chained.get(item.id))
                chained[item.id] = (edit[1], edit[2])
                edits.append(edit)
            if not edits:
                return
            if self.online and not self.local.waiting_count():
                # nothing waits ahead of these: send them straight away, queueing only what the server
                # does not answer (the edit stays out of the outbox's two extra writes when all goes well).
                # The link is written first, so a label whose creation the server took is never taken for
                # someone else's new label should this client die before hearing back.
                for index, (annotation_id, uid, expected, body) in enumerate(edits):
                    if annotation_id >= 0:
                        self.local.set_revision(annotation_id, uid, expected)

                    def done(revision: int | None, annotation_id: int = annotation_id, uid: str = uid,
                             expected: int = expected) -> None:
                        if revision is not None and revision != expected and annotation_id >= 0:
                            self.local.set_revision(annotation_id, uid, revision)
                    try:
                        self._deliver(body, done)
                    except (TeamError, psycopg.OperationalError, psycopg.InterfaceError):
                        self.local.queue(edits[index:])
                        self._lost()
                        return
                return
            self.local.queue(edits)
            if self.online:
                self.flush()
            else:
                self._changed_status()

    def _key_of(self, stimulus_id: int) -> StimulusKey:
        """How the server names a local stimulus (remembered: a stimulus's dataset and id never change)."""
        key = self._keys.get(stimulus_id)
        if key is None:
            key = self._keys[stimulus_id] = self.local.key_of(stimulus_id)
        return key

    def _queue_unlinked(self) -> None:
        """Queue this member's labels the server has never heard of: made before joining, or by a command
        that wrote the store without the team session (a consensus label is only ever made in a session)."""
        ids = self.local.unlinked([self.member])
        if ids:
            self.local.queue([self._edit_of(self.model.store.get(i)) for i in ids])

    def _edit_of(self, item: Annotation, link: tuple[str, int] | None = None) -> tuple[int, str, int, dict[str, Any]]:
        """(local id, server uid, revision after it, body) of the edit that makes the server's copy of `item`
        what it is here, built on `link` (uid, revision) or else on the label's stored link."""
        key = self._key_of(item.stimulus_id)
        link = link or self.local.link(item.id)
        uid, base = link if link is not None else (str(uuid.uuid4()), 0)
        after = {name: getattr(item, name) for name in EDITABLE_FIELDS}
        after["deleted"] = item.deleted
        body = {"kind": "annotation", "edit_uid": str(uuid.uuid4()), "uid": uid, "dataset": key.dataset,
                "stimulus": key.stimulus, "annotator": item.annotator, "base_revision": base, "after": after}
        return item.id, uid, base + 1, body

    def flush(self) -> int:
        """Send the outbox in order until it is empty or the server is gone; returns how many were answered."""
        answered = 0
        with self._lock:
            while True:
                batch = self.local.waiting(limit=200)
                if not batch:
                    break
                for entry in batch:
                    def done(revision: int | None, entry: Queued = entry) -> None:
                        self.local.sent(entry.seq, entry.annotation_id, entry.body.get("uid", ""), revision)
                    try:
                        self._deliver(entry.body, done)
                    except (TeamError, psycopg.OperationalError, psycopg.InterfaceError):
                        self._lost()
                        return answered
                    answered += 1
            if answered:
                self._changed_status()
        return answered

    def _deliver(self, body: dict[str, Any], done: Callable[[int | None], None]) -> None:
        """Send one edit. `done` hears, as soon as the server has answered, the server revision the label's
        copy now stands for (None: no label, or refused); then a conflict or refusal is dealt with.
        Connection errors pass through: the edit is not answered."""
        con = self._connection()
        if body.get("kind") == "label_set":
            try:
                team_server.save_label_set(con, body["name"], body["document"])
            except TeamRefused as exc:
                done(None)
                self.report.refused.append(str(exc))
                self._set_message(str(exc))
                self.catch_up_label_sets([body["name"]])   # the set goes back to what the team has
                return
            done(None)
            return
        try:
            result = team_server.apply_edit(con, body)
        except TeamRefused as exc:
            done(None)
            self.report.refused.append(str(exc))
            self._set_message(str(exc))
            self._take_server_row(body["uid"])
            return
        row = result["row"]
        done(int(row["revision"]))
        if result["status"] == "conflict":
            text = (f"Your change of the {body['after'].get('label') or body['after'].get('label_set')} label on"
                    f" {body['stimulus']} conflicted with {row['updated_by']}'s; theirs is shown, both are in"
                    " the history.")
            self.report.conflicts.append(text)
            self._set_message(text)
            self._absorb(row, row["updated_by"], force=True)

    def _take_server_row(self, uid: str) -> None:
        """After a refusal: the label goes back to what the server has (when it has it)."""
        rows = self._connection().execute(f"SELECT to_jsonb(a) FROM {team_server.S}.annotation a WHERE uid = %s",
                                          [uid]).fetchall()
        if rows:
            self._absorb(rows[0][0], rows[0][0]["updated_by"], force=True)

    # -- receiving --------------------------------------------------------------------------------
    def _notified(self, batch: list[dict[str, Any]]) -> None:
        kinds = {payload.get("kind") for payload in batch}
        # ours too (the same member may work on another machine); a dataset this store lacks is not news
        if any(p.get("kind") == "annotation" and p.get("dataset") in self._datasets for p in batch):
            self._post(self.catch_up)
        names = [p["name"] for p in batch if p.get("kind") == "label_set" and p.get("member") != self.member]
        if names:
            self._post(lambda: self.catch_up_label_sets(names))
        if "presence" in kinds:
            self._post(self._refresh_presence)

    def catch_up(self) -> int:
        """Bring in every server event on this store's datasets since the last one seen; returns how many
        labels changed here. The position is kept in the store when something was written and at `stop`:
        reading an event twice (after a crash) writes nothing twice, as each copy knows its revision."""
        changed = 0
        with self._lock:
            try:
                con = self._connection()
                datasets = sorted(self.local.datasets())
                if datasets != self._datasets_read:   # a dataset new here: its labels from the beginning
                    self._last_event, self._datasets_read = 0, datasets
                    self._datasets = set(datasets)
                    self._report_unmatched(con)
                    self._listener.listen_again()
                while True:
                    events = team_server.events_since(con, self._last_event, datasets)
                    if not events:
                        break
                    for event in events:
                        changed += self._absorb(event["row"], event["member"])
                    self._last_event = int(events[-1]["id"])
                if changed:
                    self._keep_position()
            except (TeamError, psycopg.OperationalError, psycopg.InterfaceError):
                self._lost()
        return changed

    def _keep_position(self) -> None:
        self.local.put({LAST_EVENT_KEY: json.dumps({"datasets": self._datasets_read, "id": self._last_event})})

    def _report_unmatched(self, con: psycopg.Connection) -> None:
        """Say which datasets the team labels that this store does not have (never matched by guess)."""
        for name in team_server.datasets(con):
            if name not in self._datasets:
                text = (f"The team labels the dataset '{name}', which this store does not have (import the same"
                        " release under the same name to see those labels).")
                if text not in self.report.unmatched:
                    self.report.unmatched.append(text)
                    self._set_message(text)

    def _absorb(self, row: dict[str, Any], member: str, *, force: bool = False) -> int:
        """Write a server label's current state here, unless this copy already stands for it or edits of it
        still wait to be sent (they will meet it on the server); `force` writes it whatever this copy is
        (after a conflict or a refusal). Returns 1 if something was written."""
        found = self.local.local_id(str(row["uid"]))
        if found is not None and not force and (found[1] >= int(row["revision"]) or self.local.waiting_for(found[0])):
            return 0
        stimulus_id = self.local.stimulus_of(StimulusKey(row["dataset"], row["stimulus"]))
        if stimulus_id is None:
            text = (f"The team has labels on {row['dataset']} / {row['stimulus']}, which this store does not have"
                    " (import the same release, with the same dataset name).")
            if text not in self.report.unmatched:
                self.report.unmatched.append(text)
                self._set_message(text)
            return 0
        self.model.absorb(FromServer(self.model.store, self.local, member, row, stimulus_id,
                                     found[0] if found is not None else None))
        return 1

    def catch_up_label_sets(self, deleted: Sequence[str] = ()) -> None:
        """Make the local label sets what the team has (a lead's edit of them); of `deleted`, the sets a
        lead removed, those the server no longer has go here too (refused, and said, while labels here use
        them)."""
        with self._lock:
            try:
                documents = team_server.label_sets(self._connection())
            except (TeamError, psycopg.OperationalError, psycopg.InterfaceError):
                self._lost()
                return
            store = self.model.store
            changes = [(name, document) for name, document in documents.items()
                       if store.label_set_document(name) != document]
            changes += [(name, None) for name in deleted if name not in documents and store.label_set(name)]
            for name, document in changes:
                try:
                    self.model.absorb(EditLabelSet(store, name, f"Team label set '{name}'",
                                                   lambda n=name, d=document: store.restore_label_set(n, _snapshot(d))))
                except AnnotationError as exc:   # it would drop a label that labels here still use
                    self._set_message(f"The team changed the label set '{name}'; this store keeps its own: {exc}")

    # -- presence ---------------------------------------------------------------------------------
    def _model_changed(self) -> None:
        if self.model.stimulus_id != self._shown:
            self._shown = self.model.stimulus_id
            if self.online:
                self._tell_presence()

    def _tell_presence(self) -> None:
        with self._lock:
            key = self._key_of(self._shown) if self._shown is not None else None
            try:
                team_server.set_presence(self._connection(), key.dataset if key else None,
                                         key.stimulus if key else None)
            except (TeamError, psycopg.OperationalError, psycopg.InterfaceError):
                self._lost()
                return
            self._refresh_presence()

    def _refresh_presence(self) -> None:
        with self._lock:
            present: tuple[str, ...] = ()
            if self._shown is not None:
                key = self._key_of(self._shown)
                try:
                    present = tuple(team_server.present(self._connection(), key.dataset, key.stimulus))
                except (TeamError, psycopg.OperationalError, psycopg.InterfaceError):
                    self._lost()
                    return
            if present != self.present:
                self.present = present
                self._changed_status()


def _snapshot(document: dict[str, Any] | None) -> LabelSetSnapshot | None:
    """A label set as the team's document has it, in the form `AnnotationStore.restore_label_set` takes."""
    if document is None:
        return None
    name = document["name"]
    return LabelSetSnapshot(name, document.get("scope") or "both", document.get("description"), document.get("source"),
                            tuple(Label(0, name, label["name"], label.get("parent"), label.get("colour"),
                                        label.get("shortcut"), label.get("description"), index, 0,
                                        tuple(label.get("aliases") or ()))
                                  for index, label in enumerate(document["labels"])))


def _sets_changed(command: EditCommand) -> list[str]:
    """The label sets a label-set command changed (a renamed set: its old and new names)."""
    if isinstance(command, EditLabelSet):
        return [command.name]
    if isinstance(command, RenameLabel):
        return [command.old, command.new] if command.whole_set else [command.label_set]
    return []
