"""A team project: this store's annotation model kept in step with the team's PostgreSQL server. Qt-free.

The local store stays the working copy (so agreement, export and the history read it as for a local
project); the server holds the team's labels, label sets and full history and decides who may change what.
`TeamSession` joins the two:

- what is sent comes from the store's one write path: after every committed write (`after_commit`: any
  model, the media and the scene page, the command line, an annotation-file import) the local history
  events not yet accounted for become edits, in order, each named by this store and its event (so one sent
  again after a crash is recognised) and carrying the server revision it builds on. An edit goes straight
  to the server when nothing waits ahead of it; otherwise, or while the server is away, it waits in the
  local outbox (committed), which is sent in order, in batches of one round trip, an edit leaving it once
  the server has answered;
- at the start, what changed here without a session is found the same way (the history events not yet
  accounted for), after this member's labels the server has never heard of (made before joining; for a
  lead, the consensus labels too);
- an edit the server refuses for its values stays in the outbox, marked with the reason, until a later
  edit of the label replaces it; a server row this store cannot hold is skipped and reported;
- a conflicting edit (the label changed on the server since) changes nothing there but is kept in the
  server's history beside the version that won; here the winning version replaces ours (our version stays in
  the local history) and the conflict is reported;
- a refused edit (row-level security: not this member's label, not a lead) is reported, and the label goes
  back to what the server has;
- another member's edit arrives by LISTEN/NOTIFY (never the news of this session's own sends, and one
  catch-up however many notifications a burst brings); the session reads the server's history by commit
  horizon and writes it into the local store through `AnnotationModel.absorb`, which refreshes the views
  over the change channel. A server label whose dataset or stimulus this store does not have is reported,
  never matched by guess.

Where the work runs: without `post` (the command line, tests) everything runs at once under the session's
lock, once the model's command is done, so an edit has reached the server when the command returns. With
`post` (the window, whose GUI thread the model lives on) nothing that talks to the server runs on the
model's thread: connecting, sending, catching up and presence run on the session's own thread, an edit goes
to the outbox at once and that thread sends it, and what must change the model or its store (another
member's edit, a conflict's winner) is handed back through `post`.
"""
from __future__ import annotations

import json
import queue
import re
import threading
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from app.annotation_model import AnnotationModel
from app.team_membership import LAST_EVENT_KEY, LEAD_KEY, MEMBER_KEY, URL_KEY, joined
from app.annotations import EditCommand, EditLabelSet, RenameLabel
from storage import pg_schema, team_server
from storage.annotations import (EDITABLE_FIELDS, Annotation, AnnotationError, AnnotationStore, Label,
                                 LabelSetSnapshot, after_commit)
from storage.errors import ThinsliceError
from storage.store import Store
from storage.validation import CONTROL_CHARACTERS, NAME_COLUMNS
from storage.team_local import SEEN_KEY, LocalChange, Queued, StimulusKey, TeamLocal
from storage.team_server import TeamError, TeamRefused, TeamValueRefused

NETWORK_ERRORS = (TeamError, psycopg.OperationalError, psycopg.InterfaceError)
BATCH = 200   # edits sent in one round trip


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
    connecting: bool = False       # a connection attempt is under way
    refused: tuple[str, ...] = ()  # why the server refused the edits that wait marked in the outbox

    def text(self) -> str:
        state = "online" if self.online else "connecting…" if self.connecting else "offline"
        parts = [f"Team {self.team} as {self.member}{' (lead)' if self.lead else ''}", state]
        if self.waiting:
            parts.append(f"{self.waiting} edit{'s' if self.waiting != 1 else ''} waiting")
        if self.refused:
            parts.append(f"{len(self.refused)} refused by the server")
        if self.present:
            parts.append("also here: " + ", ".join(self.present))
        return " · ".join(parts)


@dataclass
class Report:
    """Conflicts, refusals and unmatched labels since the session started, newest last."""

    conflicts: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)   # server labels this store cannot hold


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
        if version > pg_schema.LATEST_VERSION and team_server.oldest_client(con) > pg_schema.LATEST_VERSION:
            raise TeamError(f"The team project on {team_server.describe(url)} is at version {version} and serves"
                            f" Thinslice from version {team_server.oldest_client(con)}; this Thinslice knows up to"
                            f" {pg_schema.LATEST_VERSION}. Update Thinslice.")
        name, lead = team_server.whoami(con)
    local = TeamLocal(store)
    local.put({URL_KEY: team_server.public_url(url), MEMBER_KEY: name, LEAD_KEY: "1" if lead else None})
    if local.get(SEEN_KEY) is None:
        local.mark_seen()   # labels made before joining are sent as new ones, not as changes
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
        self.written: list[Annotation] = []

    def redo(self) -> list[Annotation]:
        row, fields = self.row, {name: self.row.get(name) for name in EDITABLE_FIELDS}
        written = self.written = []   # what is written so far, also when a later step is refused
        if self.annotation_id is None:
            created = self.store.create_many(self.scope, row["annotator"], [fields])[0]
            written.append(created)
            if row["deleted"]:
                written.append(self.store.delete(created.id, self.member))
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


class _TeamThread:
    """The window's session's own thread: runs, one after another in the order given, the work that talks
    to the server, so the GUI thread never waits for it."""

    def __init__(self, on_error: Callable[[BaseException], None]) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._on_error = on_error
        self._thread = threading.Thread(target=self._run, name="team-session", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        self._jobs.put(job)

    def stop(self, last: Callable[[], None], timeout: float) -> None:
        """Run `last` after what is queued, then end; waits at most `timeout` seconds for that."""
        self._jobs.put(last)
        self._jobs.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout=timeout)

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                job()
            except Exception as exc:   # a bug must not end the thread that sends everyone's edits
                traceback.print_exc()
                self._on_error(exc)


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
        self.lead = self.local.get(LEAD_KEY) == "1"   # as last seen; the server says at each connection
        self.online = False
        self.connecting = False
        self.present: tuple[str, ...] = ()
        self.message = ""
        self.report = Report()
        self.status_listeners: list[Callable[[TeamStatus], None]] = []
        self._post = post or (lambda work: work())
        self._lock = threading.RLock()
        self._stopped = False
        self._thread = (_TeamThread(lambda exc: self._set_message(f"The team connection failed: {exc}"))
                        if post is not None else None)
        self._shown: int | None = None
        self._keys: dict[int, StimulusKey] = {}
        self._own_pid: int | None = None     # the server process of this session's connection
        self._lead_news = False              # the server said this member's lead role changed
        self._identity = self.local.identity()
        self._catch_up_waiting = False
        # the member's one connection: it carries the sends and reads, and listens
        self._link = team_server.MemberConnection(url, self._notified, self._connection_changed,
                                                  self.local.datasets, user=member, on_connect=self._connected,
                                                  on_attempt=self._attempting, on_heartbeat=self._heartbeat)
        # a position kept as an event id (before reading went by commit) is read again from the start
        kept = json.loads(self.local.get(LAST_EVENT_KEY) or '{"datasets": []}')
        self._horizon, self._datasets_read = int(kept.get("horizon", 0)), list(kept["datasets"])
        self._kept = (self._datasets_read, self._horizon)   # the position whose events are written here
        self._position_dirty = False
        self._datasets = set(self._datasets_read)

    # -- where work runs --------------------------------------------------------------------------
    def _net(self, work: Callable[[], None]) -> None:
        """Run work that talks to the server: on the session's thread in the window, else at once."""
        if self._thread is not None:
            self._thread.submit(work)
        else:
            with self._lock:
                work()

    def _here(self, work: Callable[[], None]) -> None:
        """Run work that changes the model or its store where the model lives (dropped once stopped)."""
        def guarded() -> None:
            if not self._stopped:
                work()
        self._post(guarded)

    # -- starting and stopping --------------------------------------------------------------------
    def start(self, *, wait: bool = True) -> None:
        """Begin: send what waits, catch up, and listen. Works offline too: edits then wait in the outbox.
        With `wait` False (the window) nothing here waits for the server: the connection's first opening
        does the rest."""
        reached = False
        if wait and self._thread is None:
            try:   # the server says whether this member leads, which decides what is sent below
                self._connection()
                reached = True
            except TeamError as exc:   # unreachable, or no longer a member: say so, keep labelling locally
                self._set_message(str(exc))
        self._queue_unsent()   # before edits are sent on, so none can be taken for one made without us
        self.model.outbound.append(self._send_on)
        after_commit(self.store, self._committed)
        self.model.subscribe(self._model_changed)
        if self._thread is not None:
            self._thread.start()
        elif reached:
            self._connection_changed(True)
        self._link.start()

    def stop(self) -> None:
        """Stop listening and sending (edits from now on are not queued); the others no longer see this
        member on a stimulus. In the window this waits for the server at most half a second."""
        if self._send_on in self.model.outbound:
            self.model.outbound.remove(self._send_on)
        after_commit(self.store, self._committed, remove=True)
        self.model.unsubscribe(self._model_changed)
        self._stopped = True
        self._shown = None

        def leave() -> None:
            with self._lock:
                if self.online:
                    self._tell_presence()
                self._link.drop()
        if self._thread is not None:
            # the connection's thread may be in a connection attempt: it ends on its own and hands nothing up;
            # the session's thread gets a moment to say this member has gone, only when the server answers
            self._link.stop(timeout=0)
            self._thread.stop(leave, timeout=0.5 if self.online else 0)
        else:
            self._link.stop()
            leave()
        self._keep_position(*self._kept)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until the work handed to the session's thread so far is done (True), or `timeout` seconds;
        without that thread everything is done on return anyway. What was sent by then has been answered."""
        if self._thread is None:
            return True
        done = threading.Event()
        self._thread.submit(done.set)
        return done.wait(timeout)

    def status(self) -> TeamStatus:
        return TeamStatus(team_server.describe(self.url), self.member, self.lead, self.online,
                          self.local.waiting_count(), self.present, self.message, self.connecting,
                          tuple(self.local.refused()))

    def _changed_status(self) -> None:
        if self._stopped or not self.status_listeners:   # the store may be closing; nobody to tell
            return
        status = self.status()
        for listener in list(self.status_listeners):
            listener(status)

    def _set_message(self, text: str) -> None:
        self.message = text
        self._changed_status()

    # -- the connection ---------------------------------------------------------------------------
    def _connection(self) -> psycopg.Connection:
        """The member's one connection (opened when there is none)."""
        with self._lock:
            con = self._link.connection()
            if self._lead_news:   # made (or no longer) a lead since: what is sent at the start changes
                self._lead_news = False
                self._here(self._lead_changed)
            return con

    def _connected(self, con: psycopg.Connection) -> None:
        """A connection has just been opened (on whichever thread asked for it, under the connection's own
        lock, so nothing here takes the session's): whose it is and whether they lead."""
        self._own_pid = con.info.backend_pid
        self.member, lead = team_server.whoami(con)
        if lead != self.lead:
            self.lead, self._lead_news = lead, True

    def _lead_changed(self) -> None:
        self.local.put({LEAD_KEY: "1" if self.lead else None})
        if self.lead:
            self._queue_unsent()
            if self.online:
                self._net(self.flush)

    def _lost(self) -> None:
        with self._lock:
            self._link.drop()
            if self.online or self.connecting:
                self.online = self.connecting = False
                self._changed_status()

    def _attempting(self) -> None:
        """The connection begins an attempt to open: the status says so until it is over."""
        if not self.online and not self.connecting and not self._stopped:
            self.connecting = True
            self._changed_status()

    def _connection_changed(self, up: bool) -> None:
        """The connection's news: (re)connected, so send what waits and catch up; or the server is gone."""
        if self._stopped:
            return
        if not up:
            self._lost()
            return

        def resume() -> None:
            try:
                self._connection()
            except NETWORK_ERRORS as exc:
                self._lost()
                self._set_message(str(exc))
                return
            self.online, self.connecting = True, False
            self.flush()
            self.catch_up()
            self.catch_up_label_sets()
            self._tell_presence()
            self._changed_status()
        self._net(resume)

    # -- sending ----------------------------------------------------------------------------------
    def _committed(self) -> None:
        """A write of the store has committed (any model, page, command or import). In the window: queue
        the label changes it made, and send them on the session's thread. What is being written from the
        server is not sent back. Without the session's thread, the changes are sent once the model's
        command is done (`_send_on`), or by `flush`: sending here, inside the write's caller, could write
        the server's answer (a conflict's winner) under a command that has not finished."""
        if self._thread is None or self._stopped or self.local.absorbing_here() or self.local.writing_here():
            return
        try:
            queued = self._queue_written()
        except ThinsliceError as exc:   # the write itself is done; its changes are queued with the next one
            self._set_message(f"The edit is kept here but could not be queued for the team yet: {exc}")
            return
        if queued:
            self._changed_status()
            if self.online:
                self._net(self.flush)

    def _send_on(self, command: EditCommand, written: Sequence[Annotation]) -> None:
        """The model's hook once a command is applied: queue the documents of the label sets it changed
        (labels are queued from the store's history, see `_committed`), and send what waits; without the
        session's thread, what the store's history holds unsent goes now too."""
        edits = [(-1, "", 0, {"kind": "label_set", "edit_uid": str(uuid.uuid4()), "name": name,
                              "document": self.model.store.label_set_document(name)})
                 for name in _sets_changed(command)] if command.changes_label_sets else []
        if edits:
            self.local.queue(edits)
            self._changed_status()
        if self._thread is not None:
            if edits and self.online:
                self._net(self.flush)
            return
        with self._lock:
            if not self.online:
                self._queue_written()
            elif self.local.waiting_count():
                self.flush()
            else:
                self._send_straight()

    def _send_straight(self) -> None:
        """Send the unsent changes in the store's history at once, nothing waiting ahead of them: one round
        trip, then one local write of their links and the mark. Anything short of every edit taken (a
        refusal, the server gone) puts them all in the outbox and leaves the rest to `flush`; those the
        server took come back from it as already sent, since an edit is named by its history event."""
        with self.local.lock:
            edits, accounted = self._written_edits()
            if not edits:
                if accounted:
                    self.local.account(accounted)
                return
        bodies = [body for _, _, _, body in edits]
        try:
            results = team_server.apply_edits(self._connection(), bodies)
        except TeamValueRefused:
            results = []
        except NETWORK_ERRORS:
            self.local.queue(edits, accounted)
            self._lost()
            return
        if len(results) < len(edits) or any(r["status"] not in ("ok", "duplicate", "conflict") for r in results):
            self.local.queue(edits, accounted)
            self.flush(requeue=False)
            return
        self.local.settle_sent([(annotation_id, uid, int(result["row"]["revision"]))
                                for (annotation_id, uid, _, _), result in zip(edits, results)], accounted)
        for body, result in zip(bodies, results):
            if result["status"] == "conflict":
                self._conflicted(body, result["row"])

    def _key_of(self, stimulus_id: int) -> StimulusKey:
        """How the server names a local stimulus (remembered: a stimulus's dataset and id never change)."""
        key = self._keys.get(stimulus_id)
        if key is None:
            key = self._keys[stimulus_id] = self.local.key_of(stimulus_id)
        return key

    def _annotators(self) -> list[str]:
        """Whose labels this member sends: their own, and a lead also the consensus tier."""
        return [self.member, *([pg_schema.CONSENSUS] if self.lead else [])]

    def _queue_unsent(self) -> None:
        """Queue what changed here without the session: this member's labels the server has never heard of
        (made before joining), then every local history event not yet accounted for, in order."""
        if self.local.get(SEEN_KEY) is None:
            self.local.mark_seen()   # joined before the store kept the mark: from now on
        new = [self._edit_of(self.model.store.get(i)) for i in self.local.unlinked(self._annotators())]
        if new:
            self.local.queue(new)
        self._queue_written()

    def _queue_written(self) -> int:
        """Queue the label changes in the store's history not yet accounted for, in order (a label the server
        has never heard of goes as a new one), and account for every event read. Returns how many were queued."""
        with self.local.lock:
            edits, accounted = self._written_edits()
            if accounted:
                self.local.queue(edits, accounted)
            return len(edits)

    def _written_edits(self) -> tuple[list[tuple[int, str, int, dict[str, Any]]], list[int]]:
        """The edits of the label changes in the store's history not yet accounted for, in order, and the
        history events they account for (all those read). The caller holds the local lock."""
        annotators = set(self._annotators())
        changes = self.local.changed_unseen()
        edits: list[tuple[int, str, int, dict[str, Any]]] = []
        if changes:
            chained: dict[int, tuple[str, int]] = {}
            for change in changes:
                link = chained.get(change.annotation_id) or change.link
                # a label the server has goes whoever's it is (the server refuses, and the copy here
                # goes back to the team's, when it is not this member's); one it has never heard of
                # only when it is this member's (not a release's tiers), and not once it is deleted
                if link is None and (change.annotator not in annotators or change.after["deleted"]):
                    continue
                edit = self._change_edit(change, link, look_up=False)
                chained[change.annotation_id] = (edit[1], edit[2])
                edits.append(edit)
        return edits, [change.event_id for change in changes]

    def _edit_of(self, item: Annotation, link: tuple[str, int] | None = None) -> tuple[int, str, int, dict[str, Any]]:
        """(local id, server uid, revision after it, body) of the edit that makes the server's copy of `item`
        what it is here, built on `link` (uid, revision) or else on the label's stored link."""
        after = {name: getattr(item, name) for name in EDITABLE_FIELDS}
        after["deleted"] = item.deleted
        return self._change_edit(LocalChange(0, item.id, item.stimulus_id, item.annotator, after), link)

    def _change_edit(self, change: LocalChange, link: tuple[str, int] | None = None, *,
                     look_up: bool = True) -> tuple[int, str, int, dict[str, Any]]:
        """The edit (as `_edit_of`) that makes the server's copy of a label what `change` left it, built on
        `link`, or else (with `look_up`) on the label's stored link."""
        key = self._key_of(change.stimulus_id)
        if link is None and look_up:
            link = self.local.link(change.annotation_id)
        # named from this store and the label's or the event's own id: sent again after a crash (before
        # its answer was kept), a label is not made twice and an edit is recognised as sent
        uid, base = link if link is not None else (self._name(f"label:{change.annotation_id}"), 0)
        edit_uid = self._name(f"event:{change.event_id}") if change.event_id else str(uuid.uuid4())
        body = {"kind": "annotation", "edit_uid": edit_uid, "uid": uid, "dataset": key.dataset,
                "stimulus": key.stimulus, "annotator": change.annotator, "base_revision": base,
                "after": dict(change.after)}
        return change.annotation_id, uid, base + 1, body

    def _name(self, what: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"thinslice:{self._identity}:{what}"))

    def flush(self, *, requeue: bool = True) -> int:
        """Send the outbox in order until it is empty or the server is gone; returns how many were answered.

        Label edits go in batches, one round trip each (`team_server.apply_edits`); the server stops a batch
        at the first edit it refuses, and what follows it is sent next. An edit refused for its values stays,
        marked; the later edits of its label are sent built on the revision the refused one was built on
        (each carries the label's whole state), and the first the server takes replaces it."""
        answered = held = 0
        with self._lock:
            if requeue:   # what a write outside `writing` (a release import) left in the history
                self._queue_written()
            after, alone_until = 0, 0   # up to `alone_until` edits go one by one (a batch the server could not read)
            rebased: dict[int, int] = {}   # label: the base its next edit is sent on, after a refusal
            while True:
                batch: list[tuple[Queued, dict[str, Any]]] = []
                bases = dict(rebased)   # as the server would take this batch, edit after edit
                limit = 1 if after < alone_until else BATCH
                entries = self.local.waiting(limit=limit, after=after)
                for entry in entries:
                    if entry.body.get("refused"):
                        if not batch:   # kept back, never sent again as it is
                            after = entry.seq
                            rebased.setdefault(entry.annotation_id, entry.body["base_revision"])
                            bases.setdefault(entry.annotation_id, entry.body["base_revision"])
                            held += 1
                            continue
                        break
                    if entry.body.get("kind") == "label_set" and batch:
                        break
                    body = entry.body
                    if entry.annotation_id in bases:
                        body = {**body, "base_revision": bases[entry.annotation_id]}
                        bases[entry.annotation_id] += 1   # what the server makes it if it takes this one
                    batch.append((entry, body))
                    if body.get("kind") == "label_set":
                        break
                if not batch:
                    break
                try:
                    results = self._send_batch([body for _, body in batch])
                except TeamValueRefused:
                    alone_until = batch[-1][0].seq   # an edit the batch cannot carry: find and mark it
                    continue
                except NETWORK_ERRORS:
                    self._lost()
                    break
                answers = []
                for (entry, body), result in zip(batch, results):
                    after = entry.seq
                    if result is not None and result["status"] == "invalid":
                        self._flush_answers(answers)
                        answers = []
                        text = (f"The team server refused the edit of {body.get('annotator')}'s label"
                                f" '{body['after'].get('label')}': {result['reason']}")
                        self.local.refuse(entry.seq, text)
                        rebased[entry.annotation_id] = body["base_revision"]
                        held += 1
                        self._refusal(TeamRefused(text))
                        continue
                    if result is not None and result["status"] == "refused":
                        self._refusal(TeamRefused(f"The team server refused the edit of {body.get('annotator')}'s"
                                                  f" label: {result['reason']}"))
                        self._take_server_row(body["uid"])
                        result = None
                    revision = int(result["row"]["revision"]) if result is not None else None
                    answers.append((entry.seq, entry.annotation_id, body.get("uid", ""), revision))
                    if entry.annotation_id in rebased and revision is not None:
                        rebased[entry.annotation_id] = revision
                    if result is not None and result["status"] == "conflict":
                        self._conflicted(body, result["row"])
                    answered += 1
                self._flush_answers(answers)
                if len(entries) < limit and len(results) == len(batch) == len(entries):
                    break   # the outbox as read is all answered, and nothing came after it
            if answered or held:
                self._changed_status()
        return answered

    def _flush_answers(self, answers: list[tuple[int, int, str, int | None]]) -> None:
        if answers:
            self.local.sent(answers)

    def _send_batch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """Send edits, label edits as one batch: the server's answer to each, in order (None: a label set's),
        as far as the server went. Connection errors and a batch the server cannot read pass through."""
        if bodies[0].get("kind") == "label_set":
            return [self._deliver(bodies[0])]
        if len(bodies) == 1:   # one edit alone: its value refusal is its own
            try:
                return [self._deliver(bodies[0])]
            except TeamValueRefused as exc:
                return [{"status": "invalid", "reason": str(exc).split(": ", 1)[-1]}]
        return team_server.apply_edits(self._connection(), bodies)

    def _deliver(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """Send one edit; returns the server's answer ({status, row}; None: a label set, or refused for who
        sent it, which is reported and undone here). Connection errors and refusals for the edit's values
        (`TeamValueRefused`) pass through: the edit is not answered."""
        con = self._connection()
        if body.get("kind") == "label_set":
            name = body["name"]
            try:
                result = team_server.apply_label_set(con, name, body["document"],
                                                     self.local.set_revisions().get(name, 0))
            except TeamRefused as exc:
                self._refusal(exc)
                self.catch_up_label_sets([name])   # the set goes back to what the team has
                return None
            self.local.keep_set_revisions({name: int(result["revision"])})
            if result["status"] == "conflict":
                text = (f"Your change of the label set '{name}' conflicted with a newer one on the server; the"
                        " team's is kept here, both are in the history.")
                self.report.conflicts.append(text)
                self._set_message(text)
                self.catch_up_label_sets([name])
            return None
        try:
            return team_server.apply_edit(con, body)
        except TeamValueRefused:
            raise
        except TeamRefused as exc:
            self._refusal(exc)
            self._take_server_row(body["uid"])
            return None

    def _refusal(self, exc: TeamRefused) -> None:
        self.report.refused.append(str(exc))
        self._set_message(str(exc))

    def _conflicted(self, body: dict[str, Any], row: dict[str, Any]) -> None:
        """Our edit lost to a newer version on the server: that one replaces ours here, and it is reported."""
        text = (f"Your change of the {body['after'].get('label') or body['after'].get('label_set')} label on"
                f" {body['stimulus']} conflicted with {row['updated_by']}'s; theirs is shown, both are in"
                " the history.")
        self.report.conflicts.append(text)
        self._set_message(text)
        self._here(lambda: self._absorb(row, row["updated_by"], force=True))

    def _take_server_row(self, uid: str) -> None:
        """After a refusal: the label goes back to what the server has (when it has it)."""
        rows = self._connection().execute(f"SELECT to_jsonb(a) FROM {team_server.S}.annotation a WHERE uid = %s",
                                          [uid]).fetchall()
        if rows:
            row = rows[0][0]
            self._here(lambda: self._absorb(row, row["updated_by"], force=True))

    # -- receiving --------------------------------------------------------------------------------
    def _notified(self, batch: list[dict[str, Any]]) -> None:
        if self._stopped:
            return
        kinds = {payload.get("kind") for payload in batch}
        # not the news of this session's own sends (it knows them), but this member's from another
        # machine; a dataset this store lacks is not news; one catch-up waiting is enough for any burst
        if any(p.get("kind") == "annotation" and p.get("dataset") in self._datasets
               and (p.get("pid") is None or p.get("pid") != self._own_pid) for p in batch):
            if not self._catch_up_waiting:
                self._catch_up_waiting = True
                self._net(self.catch_up)
        names = [p["name"] for p in batch if p.get("kind") == "label_set" and p.get("member") != self.member]
        if names:
            self._net(lambda: self.catch_up_label_sets(names))
        if "presence" in kinds:
            self._net(self._refresh_presence)

    def catch_up(self) -> int:
        """Bring in every server event on this store's datasets not yet read; returns how many were read
        (written here where the model lives). Reading goes by commit, not by id: each catch-up reads the
        events of every transaction from the last commit horizon on (`team_server.commit_horizon`), so an
        edit whose transaction commits after a later-numbered one is still read. An event read twice writes
        nothing twice, as each copy knows its revision. The position is kept in the store once the labels
        are written and at `stop`."""
        read = 0
        with self._lock:
            self._catch_up_waiting = False   # news from now on asks for another
            try:
                con = self._connection()
                datasets = sorted(self.local.datasets())
                if datasets != self._datasets_read:   # a dataset new here: its labels from the beginning
                    self._horizon, self._datasets_read = 0, datasets
                    self._datasets = set(datasets)
                    self._report_unmatched(con)
                    self._link.listen_again()
                horizon, after_id = team_server.commit_horizon(con), 0
                while True:
                    events = team_server.events_since(con, self._horizon, datasets, after_id)
                    if not events:
                        break
                    after_id = int(events[-1]["id"])
                    read += len(events)
                    self._here(lambda events=events: self._absorb_events(events))
                self._horizon = horizon
                position = (self._datasets_read, horizon)
                self._here(lambda: self._reached(*position))
            except NETWORK_ERRORS:
                self._lost()
        return read

    def _absorb_events(self, events: list[dict[str, Any]]) -> None:
        """Write the server events' labels here."""
        if sum(self._absorb(event["row"], event["member"]) for event in events):
            self._position_dirty = True

    def _reached(self, datasets: list[str], horizon: int) -> None:
        """Every event before `horizon` on `datasets` is written here: keep that (in the store when labels
        were written since it was last kept)."""
        self._kept = (datasets, horizon)
        if self._position_dirty:
            self._position_dirty = False
            self._keep_position(datasets, horizon)

    def _keep_position(self, datasets: list[str], horizon: int) -> None:
        self.local.put({LAST_EVENT_KEY: json.dumps({"datasets": datasets, "horizon": horizon})})

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
        # PostgreSQL writes a whole-numbered time in JSON without a point (1e308 as 309 digits): a time is a float
        row = {**row, **{name: float(row[name]) for name in ("start_s", "end_s")
                         if isinstance(row.get(name), int) and not isinstance(row.get(name), bool)}}
        problem = _unstorable(row)
        if problem is None:
            try:
                command = FromServer(self.model.store, self.local, member, row, stimulus_id,
                                     found[0] if found is not None else None)
                with self.local.absorbing() as written:
                    try:
                        self.model.absorb(command)
                    finally:
                        written += command.written
                return 1
            except ThinsliceError as exc:   # this store refuses it as an import would
                problem = str(exc)
        text = (f"{row['annotator']}'s label '{row.get('label')}' on {row['dataset']} / {row['stimulus']} cannot be"
                f" kept here and was skipped: {problem}")
        if text not in self.report.skipped:
            self.report.skipped.append(text)
            self._set_message(text)
        return 0

    def catch_up_label_sets(self, deleted: Sequence[str] = ()) -> None:
        """Make the local label sets what the team has (a lead's edit of them); of `deleted`, the sets a
        lead removed, those the server no longer has go here too (refused, and said, while labels here use
        them)."""
        with self._lock:
            try:
                documents = team_server.label_sets(self._connection())
            except NETWORK_ERRORS:
                self._lost()
                return
        self._here(lambda: self._absorb_label_sets(documents, deleted))

    def _absorb_label_sets(self, documents: dict[str, tuple[dict[str, Any], int]], deleted: Sequence[str]) -> None:
        """Make the local label sets the team's, and keep the revisions they now stand for (a set this
        store keeps its own of is left at the revision it had, so its next change meets the team's)."""
        store = self.model.store
        kept = {name: revision for name, (document, revision) in documents.items()
                if store.label_set_document(name) == document}
        changes = [(name, document, revision) for name, (document, revision) in documents.items() if name not in kept]
        changes += [(name, None, 0) for name in deleted if name not in documents and store.label_set(name)]
        for name, document, revision in changes:
            try:
                self.model.absorb(EditLabelSet(store, name, f"Team label set '{name}'",
                                               lambda n=name, d=document: store.restore_label_set(n, _snapshot(d))))
                kept[name] = revision
            except AnnotationError as exc:   # it would drop a label that labels here still use
                self._set_message(f"The team changed the label set '{name}'; this store keeps its own: {exc}")
        if kept:
            self.local.keep_set_revisions(kept)

    # -- presence ---------------------------------------------------------------------------------
    def _model_changed(self) -> None:
        if self.model.stimulus_id != self._shown:
            self._shown = self.model.stimulus_id
            if self.online:
                self._net(self._tell_presence)

    def _heartbeat(self) -> None:
        """Say again that this member is here (presence expires), and see who else still is."""
        if self.online and not self._stopped:
            self._net(self._tell_presence)

    def _tell_presence(self) -> None:
        with self._lock:
            shown = self._shown
            key = self._key_of(shown) if shown is not None else None
            try:
                team_server.set_presence(self._connection(), key.dataset if key else None,
                                         key.stimulus if key else None)
            except NETWORK_ERRORS:
                self._lost()
                return
            self._refresh_presence()

    def _refresh_presence(self) -> None:
        with self._lock:
            present: tuple[str, ...] = ()
            shown = self._shown
            if shown is not None:
                key = self._key_of(shown)
                try:
                    present = tuple(team_server.present(self._connection(), key.dataset, key.stimulus))
                except NETWORK_ERRORS:
                    self._lost()
                    return
            if present != self.present:
                self.present = present
                self._changed_status()


def _unstorable(row: dict[str, Any]) -> str | None:
    """Why a server label cannot be written here as it is, by the rule every import follows
    (`storage.validation`): times that are not numbers (PostgreSQL hands NaN and the infinities over as
    text), names holding control characters. None when it can; times are judged by the store's own write."""
    for name in ("start_s", "end_s"):
        value = row.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return f"its {name} is {value!r}, not a number"
    for name in (*NAME_COLUMNS["annotations"], "dataset"):
        value = row.get(name)
        if isinstance(value, str) and re.search(CONTROL_CHARACTERS, value):
            return f"its {name} {value!r} holds a control character"
    return None


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
