"""A throwaway PostgreSQL cluster for the team tests and the team benchmark (needs no pytest).

`PgServer` runs initdb and pg_ctl (Debian's `postgresql` package) in a temporary folder, listening on a free
port on 127.0.0.1 with its unix socket in that folder. PostgreSQL refuses to run as root, so under euid 0
the cluster belongs to an unprivileged user (`thinslice-pg`, created when missing) and its commands run
through `runuser`. Passwords are SCRAM: the superuser's and every member's come from a password file named by
PGPASSFILE (libpq's own mechanism), never from a URL. `member_store` makes a member's local store with the
small release every member imported.
"""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

BIN = Path(os.environ.get("THINSLICE_PG_BIN", "/usr/lib/postgresql/15/bin"))
ADMIN = "thinslice_admin"
PASSWORD = "team-test-secret"   # every role of the throwaway cluster; only ever written to the password file
RUN_AS = "thinslice-pg"


def available() -> bool:
    return (BIN / "initdb").exists() and (BIN / "pg_ctl").exists()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unprivileged_user() -> str:
    try:
        pwd.getpwnam(RUN_AS)
    except KeyError:
        subprocess.run(["useradd", "-r", "-M", "-s", "/usr/sbin/nologin", RUN_AS], check=True,
                       capture_output=True)
    return RUN_AS


class PgServer:
    """One cluster: `start`, `stop` (fast shutdown, as when a server goes away), `url(database, user)`."""

    def __init__(self, root: Path, *, durable: bool = False, max_connections: int = 250) -> None:
        self.root = root
        # the tests' cluster skips fsync (nothing in it must outlive the run) and takes many connections;
        # the benchmark's is a server as a team would run it: durable commits, the default connection limit
        self.durable, self.max_connections = durable, max_connections
        self.data = root / "data"
        self.socket_dir = root / "socket"
        self.port = _free_port()
        self.user = _unprivileged_user() if os.geteuid() == 0 else None
        self._databases = 0
        self.passfile = root / "pgpass"

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        command = [str(BIN / args[0]), *args[1:]]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, check=True, capture_output=True, text=True)

    def init(self) -> None:
        self.socket_dir.mkdir(parents=True)
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.user:
            shutil.chown(self.root, self.user)
            for path in (self.socket_dir, pwfile):
                shutil.chown(path, self.user)
        self._run("initdb", "-D", str(self.data), "-U", ADMIN, "-A", "scram-sha-256", f"--pwfile={pwfile}",
                  "-E", "UTF8", "--no-sync")
        pwfile.unlink()
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.socket_dir}'\nmax_connections = {self.max_connections}\n"
                       + ("" if self.durable else "fsync = off\n"))
        self.passfile.write_text(f"127.0.0.1:{self.port}:*:*:{PASSWORD}\n")
        self.passfile.chmod(0o600)
        os.environ["PGPASSFILE"] = str(self.passfile)

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "30", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def url(self, database: str = "postgres", user: str = ADMIN) -> str:
        return f"postgresql://{user}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh database with the team schema; returns the owner's URL of it."""
        from storage import team_server
        self._databases += 1
        name = f"team{self._databases}"
        with team_server.connect(self.url()) as con:
            con.execute(f"CREATE DATABASE {name}")
        url = self.url(name)
        with team_server.connect(url) as con:
            team_server.migrate(con)
        return url

    def add_member(self, url: str, name: str, *, lead: bool = False) -> str:
        """Make `name` a member (same password as every role here, from the password file); its URL."""
        from storage import team_server
        with team_server.connect(url) as con:
            team_server.add_member(con, name, lead=lead, password=PASSWORD)
        return url.replace(f"{ADMIN}@", f"{name}@")


def start_server(**options: Any) -> tuple[PgServer, Path]:
    """A new cluster in a temporary folder, started (`options` as `PgServer` takes them)."""
    root = Path(tempfile.mkdtemp(prefix="thinslice-pg-"))
    server = PgServer(root, **options)
    server.init()
    server.start()
    return server, root


def shut_down(server: PgServer, root: Path) -> None:
    try:
        server.stop()
    except subprocess.CalledProcessError:
        pass  # already stopped
    shutil.rmtree(root, ignore_errors=True)


# -- members' stores -----------------------------------------------------------------------------------
STIMULI = ("a", "b", "c")


def member_store(path: Path, dataset: str = "Dyads"):
    """A member's local store with the release every member imported: dataset `dataset`, stimuli a, b, c."""
    from storage.importers.plan import DatasetInfo, ImportPlan
    from storage.importers.writer import write_plan
    from storage.store import Store
    store = Store.open(path)
    plan = ImportPlan(DatasetInfo(dataset, "friendbench", path.parent, "test"), "test")
    plan.add("stimuli", [{"external_id": name, "kind": "dyad"} for name in STIMULI])
    write_plan(store, plan)
    return store
