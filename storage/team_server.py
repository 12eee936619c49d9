"""The team server: connecting to PostgreSQL, its migrations, members, edits, history and the listener.

Connection strings never carry a password into the program's keeping: `public_url` drops one from what is
stored or shown, and the password comes from libpq's own places (a service file, `PGPASSFILE`/~/.pgpass,
`PGPASSWORD`), which psycopg reads as libpq does; `sslmode` and every other libpq option in the URL are
passed on as they are. A server that cannot be reached raises `TeamUnreachable`; a write the server refuses
(row-level security, the history trigger) raises `TeamRefused`.
"""
from __future__ import annotations

import hashlib
import json
import random
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from storage import pg_schema
from storage.errors import ThinsliceError

S = pg_schema.SCHEMA
CONNECT_TIMEOUT_S = 3
TCP_USER_TIMEOUT_MS = 5000
HEARTBEAT_S = 30.0        # how often a listening client says again that it is there
PRESENCE_TTL_S = 90.0     # a member not heard of for this long is no longer shown as present
RETRY_MAX_S = 2.0         # the longest pause between reconnection attempts


class TeamError(ThinsliceError):
    """A team project problem the user can act on."""


class TeamUnreachable(TeamError):
    """The team server cannot be reached (down, network gone, wrong address)."""


class TeamRefused(TeamError):
    """The team server refused a write (not this member's label, not a lead, history is read-only)."""


class TeamValueRefused(TeamRefused):
    """The team server refused an edit for what it holds (a value no store may hold, text PostgreSQL
    cannot keep): sending it again changes nothing, so it waits in the outbox until a later edit of the
    label replaces it."""


def public_url(url: str) -> str:
    """`url` without its password (the form kept in the store and shown to the user)."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise TeamError(f"The team address {url.split('@')[-1]!r} is not a PostgreSQL URL: "
                        f"{str(exc).strip()}") from None
    parts.pop("password", None)
    return make_conninfo(**parts)


def has_password(url: str) -> bool:
    return "password" in conninfo_to_dict(url)


def describe(url: str) -> str:
    """A short name of the server for messages: host:port/dbname (no user or password)."""
    parts = conninfo_to_dict(url)
    return f"{parts.get('host', 'localhost')}:{parts.get('port', '5432')}/{parts.get('dbname', '')}"


def connect(url: str, *, user: str | None = None, autocommit: bool = True) -> psycopg.Connection:
    """A connection to the team server (as `user` when given), or `TeamUnreachable` naming the server; an
    address libpq cannot use as written (`connect_timeout=abc`) is a `TeamError` naming what is wrong."""
    public_url(url)   # an address that does not parse is refused in one line
    parts = conninfo_to_dict(url)
    if user:
        parts["user"] = user
    parts.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
    parts.setdefault("application_name", "thinslice")
    # a network that vanishes without a word (a laptop leaving the wifi) is noticed in seconds, not after
    # the system's TCP timeout, so an edit waits in the outbox instead of freezing the window
    parts.setdefault("keepalives_idle", "5")
    parts.setdefault("keepalives_interval", "2")
    parts.setdefault("keepalives_count", "2")
    parts.setdefault("tcp_user_timeout", str(TCP_USER_TIMEOUT_MS))
    try:
        return psycopg.connect(make_conninfo(**parts), autocommit=autocommit)
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TeamUnreachable(f"The team server {describe(url)} cannot be reached: {first}") from None
    except psycopg.ProgrammingError as exc:
        raise TeamError(f"The team address {describe(url)} has an option libpq cannot use: {exc}") from None


def _refused(exc: psycopg.Error, what: str) -> TeamRefused:
    first = (exc.diag.message_primary or str(exc)).strip().splitlines()[0]
    return TeamRefused(f"The team server refused {what}: {first}")


# -- the schema and the members ------------------------------------------------------------------
def server_version(con: psycopg.Connection) -> int:
    """The team schema's version on the server (0: none yet)."""
    exists = con.execute("SELECT to_regclass(%s)", [f"{S}.schema_version"]).fetchone()[0]
    if exists is None:
        return 0
    return int(con.execute(f"SELECT coalesce(max(version), 0) FROM {S}.schema_version").fetchone()[0])


def oldest_client(con: psycopg.Connection) -> int:
    """The oldest client schema version the server says it serves (1 before it said so)."""
    if con.execute("SELECT to_regclass(%s)", [f"{S}.serves"]).fetchone()[0] is None:
        return 1
    return int(con.execute(f"SELECT max(oldest_client) FROM {S}.serves").fetchone()[0])


def migrate(con: psycopg.Connection, target: int = pg_schema.LATEST_VERSION) -> list[int]:
    """Create or upgrade the team schema, each migration in its own transaction; returns the versions applied."""
    with con.transaction():
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {S}")
        con.execute(f"CREATE TABLE IF NOT EXISTS {S}.schema_version (version INTEGER NOT NULL,"
                    " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
    applied = []
    for number in range(server_version(con) + 1, target + 1):
        with con.transaction():
            con.execute(pg_schema.migration_sql(number))
            con.execute(f"INSERT INTO {S}.schema_version (version) VALUES (%s)", [number])
        applied.append(number)
    with con.transaction():  # anyone may see which version the project is at, so a client can say so
        con.execute(f"GRANT USAGE ON SCHEMA {S} TO PUBLIC")
        con.execute(f"GRANT SELECT ON {S}.schema_version TO PUBLIC")
    return applied


def add_member(con: psycopg.Connection, name: str, *, lead: bool = False, password: str | None = None) -> None:
    """Make `name` a member (a login role in `thinslice_member`; with `lead`, also `thinslice_lead`). The
    password, if given, is turned into a SCRAM verifier here, by libpq, and only that is sent: no statement
    the server logs can reveal the password. Without one the administrator sets it."""
    if not name or name == pg_schema.CONSENSUS:
        raise TeamError(f"A member needs a name other than '{pg_schema.CONSENSUS}'.")
    role = sql.Identifier(name)
    with con.transaction():
        if con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name]).fetchone() is None:
            con.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role))
        if password:
            verifier = con.pgconn.encrypt_password(password.encode(), name.encode(), b"scram-sha-256")
            con.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(role, sql.Literal(verifier.decode())))
        con.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(pg_schema.MEMBER_ROLE), role))
        if lead:
            con.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(pg_schema.LEAD_ROLE), role))


def whoami(con: psycopg.Connection) -> tuple[str, bool]:
    """This connection's member name and whether it is a lead; `TeamError` when it is not a member."""
    row = con.execute("SELECT current_user, pg_has_role(current_user, %s, 'MEMBER'),"
                      " pg_has_role(current_user, %s, 'MEMBER')",
                      [pg_schema.MEMBER_ROLE, pg_schema.LEAD_ROLE]).fetchone()
    if not row[1]:
        raise TeamError(f"{row[0]} is not a member of this team; ask the team's lead to add them"
                        " (thinslice team add-member NAME).")
    return row[0], bool(row[2])


# -- edits and history ----------------------------------------------------------------------------
def apply_edit(con: psycopg.Connection, edit: dict[str, Any]) -> dict[str, Any]:
    """Send one edit (see `apply_edit` in `storage.pg_schema`); returns {status, row}. Connection errors
    pass through as psycopg errors (the caller queues the edit); refusals raise `TeamRefused`, and those
    for the edit's values `TeamValueRefused`."""
    whose = f"the edit of {edit.get('annotator')}'s label '{edit.get('after', {}).get('label')}'"
    try:   # one statement, so one transaction of its own on the autocommit connection: one round trip
        result = con.execute(f"SELECT {S}.apply_edit(%s::jsonb)", [json.dumps(edit)]).fetchone()[0]
    except (psycopg.errors.CheckViolation, psycopg.errors.DataError) as exc:
        raise TeamValueRefused(str(_refused(exc, whose))) from None
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.RaiseException) as exc:
        raise _refused(exc, whose) from None
    return result


def apply_edits(con: psycopg.Connection, edits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Send edits in one round trip (see `apply_edits` in `storage.pg_schema`): one answer per edit in order
    ({status, row}, or status `invalid` or `refused` with the reason), ending at the first refused. Raises
    `TeamValueRefused` when the batch as a whole cannot be read (an edit holding text PostgreSQL cannot
    keep): the caller sends those one by one to find which."""
    try:   # one statement: one transaction, one round trip
        return con.execute(f"SELECT {S}.apply_edits(%s::jsonb)", [json.dumps(edits)]).fetchone()[0]
    except psycopg.errors.DataError as exc:
        raise TeamValueRefused(str(_refused(exc, f"a batch of {len(edits)} edits"))) from None


EVENT_COLUMNS = ("e.id, e.edit_uid::text, e.annotation_uid::text, e.dataset, e.stimulus, e.member, e.happened_at,"
                 " e.action, e.before, e.after, to_jsonb(a)")
EVENT_NAMES = ("id", "edit_uid", "annotation_uid", "dataset", "stimulus", "member", "happened_at", "action",
               "before", "after", "row")


def commit_horizon(con: psycopg.Connection) -> int:
    """The oldest transaction that may still be running: every event of an older one is committed (or never
    will be) and visible from now on. A reader that has read everything visible re-reads from here next time,
    so an event whose id was taken before one it has read but committed after is not missed."""
    return int(con.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").fetchone()[0])


def events_since(con: psycopg.Connection, horizon: int, datasets: list[str], after_id: int = 0,
                 limit: int = 5000) -> list[dict[str, Any]]:
    """Annotation events on `datasets` of transactions from `horizon` on (see `commit_horizon`) with an id
    above `after_id` (paging), oldest id first, each with the annotation as it is now."""
    rows = con.execute(f"SELECT {EVENT_COLUMNS} FROM {S}.annotation_event e JOIN {S}.annotation a"
                       " ON a.uid = e.annotation_uid WHERE e.xact >= %s::text::xid8 AND e.id > %s"
                       " AND e.dataset = ANY(%s) ORDER BY e.id LIMIT %s",
                       [str(horizon), after_id, datasets, limit]).fetchall()
    return [dict(zip(EVENT_NAMES, r)) for r in rows]


def history(con: psycopg.Connection, dataset: str, stimulus: str) -> list[dict[str, Any]]:
    """A stimulus's events on the server, newest first (conflicts included)."""
    rows = con.execute(f"SELECT {EVENT_COLUMNS} FROM {S}.annotation_event e JOIN {S}.annotation a"
                       " ON a.uid = e.annotation_uid WHERE e.dataset = %s AND e.stimulus = %s ORDER BY e.id DESC",
                       [dataset, stimulus]).fetchall()
    return [dict(zip(EVENT_NAMES, r)) for r in rows]


def annotations(con: psycopg.Connection) -> list[dict[str, Any]]:
    """Every annotation on the server (deleted ones too), as rows."""
    return [r[0] for r in con.execute(f"SELECT to_jsonb(a) FROM {S}.annotation a ORDER BY a.id").fetchall()]


def datasets(con: psycopg.Connection) -> list[str]:
    """The datasets the team has labels on."""
    return [r[0] for r in con.execute(f"SELECT DISTINCT dataset FROM {S}.annotation ORDER BY dataset").fetchall()]


# -- label sets and presence ---------------------------------------------------------------------
def label_sets(con: psycopg.Connection) -> dict[str, tuple[dict[str, Any], int]]:
    """The team's label sets as documents (the label-set file format) with their revisions, by name."""
    return {r[0]: (r[1], int(r[2])) for r in
            con.execute(f"SELECT name, document, revision FROM {S}.label_set ORDER BY name").fetchall()}


def apply_label_set(con: psycopg.Connection, name: str, document: dict[str, Any] | None,
                    base_revision: int) -> dict[str, Any]:
    """Store (None: delete) a label set built on `base_revision` of it (0: new to the server); returns
    {status: ok | conflict, revision, document} (see `apply_label_set` in `storage.pg_schema`). Only a lead
    may (`TeamRefused`)."""
    change = {"name": name, "document": document, "base_revision": base_revision}
    try:   # one statement: one transaction, one round trip
        return con.execute(f"SELECT {S}.apply_label_set(%s::jsonb)", [json.dumps(change)]).fetchone()[0]
    except psycopg.errors.InsufficientPrivilege as exc:
        raise _refused(exc, f"the change of the label set '{name}' (only a lead edits label sets)") from None


def set_presence(con: psycopg.Connection, dataset: str | None, stimulus: str | None) -> None:
    """Say which stimulus this member has open (None: none)."""
    con.execute(f"INSERT INTO {S}.presence (dataset, stimulus) VALUES (%s, %s) ON CONFLICT (member) DO UPDATE"
                " SET dataset = excluded.dataset, stimulus = excluded.stimulus, seen_at = now()",
                [dataset, stimulus])


def present(con: psycopg.Connection, dataset: str, stimulus: str) -> list[str]:
    """The other members who have this stimulus open, as said within `PRESENCE_TTL_S` (a client that died
    without saying it left drops out then; a live one says so again every `HEARTBEAT_S`)."""
    rows = con.execute(f"SELECT member FROM {S}.presence WHERE dataset = %s AND stimulus = %s"
                       " AND member <> current_user AND seen_at > now() - make_interval(secs => %s)"
                       " ORDER BY member", [dataset, stimulus, PRESENCE_TTL_S]).fetchall()
    return [r[0] for r in rows]


# -- the listener ---------------------------------------------------------------------------------
def dataset_channel(dataset: str) -> str:
    """The channel a dataset's news is announced on (see `announce` in `storage.pg_schema`)."""
    return f"{pg_schema.CHANNEL}_{hashlib.md5(dataset.encode('utf-8')).hexdigest()[:16]}"


def _close_when_free(con: psycopg.Connection) -> None:
    """Close `con` now, or as soon as another thread's query on it is over. psycopg's `close` does not wait
    for the connection's lock: closing under a query frees the libpq connection the query is still reading
    from, and the query ends with no result at all instead of its own answer or error."""
    if con.lock.acquire(blocking=False):
        try:
            con.close()
        finally:
            con.lock.release()
        return

    def close_after_query() -> None:
        with con.lock:
            con.close()
    threading.Thread(target=close_after_query, name="team-connection-close", daemon=True).start()


class MemberConnection:
    """A member's one connection to the team server: what the session sends and reads goes over it, and it
    LISTENs on the team's channel and those of `datasets()`, handing the notifications' payloads to
    `on_notify` from a thread of its own.

    That thread waits on the connection's socket without holding it (no polling of tables, and no lock kept
    while nothing arrives), so the session's queries run whenever they come; a notification that arrives
    while one of them runs is kept by psycopg and wakes the thread through a pipe, so it is handed up at
    once too. `connection()` gives the open connection, opening it (and LISTENing, then `on_connect(con)`)
    when there is none; `drop()` closes it after an error. When the connection drops the thread calls
    `on_state(False)` and opens it again with a growing pause; `on_state(True)` follows every (re)connection,
    after LISTEN, so whatever arrived while it was away can be caught up from the history; `on_attempt()`,
    when given, hears that a connection attempt begins, and `on_heartbeat()` is called every `HEARTBEAT_S`
    while connected. The pauses between attempts grow and are jittered, so clients that lost the server
    together do not all come back in the same instant. `listen_again` makes it listen to what `datasets()`
    says now (a dataset imported meanwhile). `stop` waits at most `timeout` seconds: a connection attempt
    still under way ends on its own, and after `stop` nothing is handed up.
    """

    def __init__(self, url: str, on_notify: Callable[[list[dict[str, Any]]], None],
                 on_state: Callable[[bool], None], datasets: Callable[[], Iterable[str]], *,
                 user: str | None = None, on_connect: Callable[[psycopg.Connection], None] | None = None,
                 on_attempt: Callable[[], None] | None = None,
                 on_heartbeat: Callable[[], None] | None = None) -> None:
        self.url, self.user = url, user
        self.on_notify, self.on_state, self.datasets = on_notify, on_state, datasets
        self.on_connect, self.on_attempt, self.on_heartbeat = on_connect, on_attempt, on_heartbeat
        self._lock = threading.RLock()   # opening and closing the connection, and the channels listened to
        self._con: psycopg.Connection | None = None
        self._heard: set[str] = set()
        self._again = threading.Event()
        self._stop = threading.Event()
        # a socket pair, not a pipe: once closed, a late wake fails instead of writing to a reused descriptor
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        self._thread = threading.Thread(target=self._run, name="team-connection", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop listening (the connection stays open for what the session still sends; `drop` closes it)."""
        self._stop.set()
        self._wake()
        if self._thread.is_alive():
            self._thread.join(timeout=timeout)
        elif self._thread.ident is None:   # never started: nothing else closes the wake-up pair
            self._wake_read.close()
            self._wake_write.close()

    def listen_again(self) -> None:
        self._again.set()
        self._wake()

    def connection(self) -> psycopg.Connection:
        """The open connection, opened (and listening) when there is none; `TeamUnreachable` when the
        server cannot be reached."""
        with self._lock:
            con = self._con
            if con is not None and not con.closed and not con.broken:
                return con
            self.drop()
            con = connect(self.url, user=self.user)
            try:
                self._heard = set()
                self._listen(con)
                heard = con.pgconn.notify_handler

                def woken(notice: Any, heard: Callable[[Any], None] | None = heard) -> None:
                    if heard is not None:
                        heard(notice)   # psycopg keeps it for `notifies()`
                    self._wake()
                con.pgconn.notify_handler = woken
                if self.on_connect is not None:
                    self.on_connect(con)
            except BaseException:
                con.close()
                raise
            self._con = con
            return con

    def drop(self) -> None:
        """Close the connection (after an error on it): the next `connection()` opens a new one."""
        with self._lock:
            if self._con is not None:
                _close_when_free(self._con)
                self._con = None

    def _listen(self, con: psycopg.Connection) -> None:
        with self._lock:
            for channel in {pg_schema.CHANNEL, *map(dataset_channel, self.datasets())} - self._heard:
                con.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                self._heard.add(channel)

    def _wake(self) -> None:
        try:
            self._wake_write.send(b"\0")
        except OSError:   # already woken (full), or closed on the way out
            pass

    def _run(self) -> None:
        pause = 0.1
        try:
            while not self._stop.is_set():
                con = None
                try:
                    if self.on_attempt is not None:
                        self.on_attempt()
                    con = self.connection()
                    if self._stop.is_set():   # stopped while connecting: the store may be closed by now
                        break
                    pause = 0.1
                    self.on_state(True)
                    self._serve(con)
                except Exception as exc:
                    if self._stop.is_set():   # what it hands up may be closed by now (the store): nothing to say
                        break
                    # OSError: the socket was closed under the wait for it (the session dropped the connection)
                    if not isinstance(exc, (TeamUnreachable, psycopg.OperationalError, psycopg.InterfaceError,
                                            OSError)):
                        raise
                    if con is not None and self._con is not None and self._con is not con:
                        continue   # the session dropped it after an error of its own and opened another: serve that
                    self.drop()
                    self.on_state(False)
                    self._stop.wait(pause * random.uniform(0.5, 1.5))
                    pause = min(pause * 2, RETRY_MAX_S)
        finally:
            self._wake_read.close()
            self._wake_write.close()

    def _serve(self, con: psycopg.Connection) -> None:
        """Hand up notifications until the connection drops or is replaced, or `stop`."""
        beat = time.monotonic()
        while not self._stop.is_set():
            if self._con is not con:   # the session opened a new one after an error: catch up over it
                return
            if self.on_heartbeat is not None and time.monotonic() - beat >= HEARTBEAT_S:
                beat = time.monotonic()
                self.on_heartbeat()
            if self._again.is_set():
                self._again.clear()
                self._listen(con)
            # the socket is watched without the connection's lock, so the session's queries never wait for
            # this; woken by data on it, by a notification kept during a query, or to stop
            select.select([con.fileno(), self._wake_read], [], [], 0.5)
            try:
                while self._wake_read.recv(512):
                    pass
            except BlockingIOError:
                pass
            # what arrived meanwhile is handed up as one batch, so a burst costs one catch-up, not one each
            batch = [json.loads(n.payload) for n in con.notifies(timeout=0)]
            if batch and not self._stop.is_set():
                self.on_notify(batch)
