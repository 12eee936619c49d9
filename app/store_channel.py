"""The window's door for the command line: a verb run while the window holds the store is handed to it.

DuckDB lets one process at a time hold a store, so `thinslice backup` cannot open a store the window has
open. Instead the window listens on a Unix socket named after the store, in a folder only its user can
enter (mode 0700, checked to be the user's own), and serves each connection only when the peer runs as
the same user (SO_PEERCRED). A request is one JSON line, `{"verb": "backup", "args": {...}}`; the answer
is one JSON line, `{"ok": true, "result": {...}}` or `{"ok": false, "error": "one line"}`. The window's
handlers run on the channel's own thread, with their own cursor on the store, so the window keeps working
while a backup is written or a listing read. The window takes `backup` and `check`
(app/store_backups.py) and the verbs that only read, `info`, `list`, `metrics` and `export`, each run by
its own code, whose output and exit code are the result (app/cli.py `reader_handlers`).
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import socketserver
import struct
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from app.store_backups import back_up
from storage.errors import StoreLockedError, ThinsliceError
from storage.store import Store

Handler = Callable[[Mapping[str, Any]], dict[str, Any]]
_LINE_LIMIT = 64 * 1024


class ChannelRefused(ThinsliceError):
    """The window holding the store answered, and refused or failed the request (its one-line reason)."""


def channel_folder() -> Path:
    """The user's own folder for the channels' sockets: `$XDG_RUNTIME_DIR/thinslice`, else a folder of the
    user's in the temporary folder. Made with mode 0700; refused when it belongs to someone else or others
    may enter it."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) / "thinslice" if runtime else Path(tempfile.gettempdir()) / f"thinslice-{os.getuid()}"
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = base.lstat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not base.is_dir() or base.is_symlink():
        raise ThinsliceError(f"{base} is not a folder of your own that only you can open; "
                             "the window cannot take requests there.")
    return base


def channel_path(store_path: Path) -> Path:
    """The socket of the window holding the store at `store_path` (short, as a socket path must be)."""
    key = hashlib.sha256(str(Path(store_path).expanduser().resolve()).encode()).hexdigest()[:24]
    return channel_folder() / f"{key}.sock"


def ask_holder(store_path: Path, verb: str, args: Mapping[str, Any], timeout_s: float = 600.0
               ) -> dict[str, Any] | None:
    """Hand `verb` to the window holding the store at `store_path`; its result, or None when no window
    takes requests for that store. Raises `ChannelRefused` with the window's reason when it fails."""
    path = channel_path(store_path)
    if not path.exists():
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        try:
            sock.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            return None   # a socket left by a window that ended without closing it
        sock.sendall(json.dumps({"verb": verb, "args": dict(args)}).encode() + b"\n")
        with sock.makefile("rb") as answer:
            line = answer.readline()   # a listing or the figures may be long; the answer is the user's own window's
    if not line:
        raise ChannelRefused(f"The window holding {store_path} closed the request without an answer.")
    reply = json.loads(line)
    if not reply.get("ok"):
        raise ChannelRefused(str(reply.get("error") or "the window gave no reason"))
    return dict(reply.get("result") or {})


def _peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end of a Unix socket."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


class StoreChannel:
    """Serves `handlers` (verb -> handler) for the store at `store_path` until `close`."""

    def __init__(self, store_path: Path, handlers: Mapping[str, Handler]) -> None:
        self.path = channel_path(store_path)
        self.handlers = dict(handlers)
        channel = self

        class _Request(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                if _peer_uid(self.connection) != os.getuid():
                    return   # another user's process: no answer at all
                reply = channel.answer(self.rfile.readline(_LINE_LIMIT))
                self.wfile.write(json.dumps(reply).encode() + b"\n")

        if self.path.exists():
            self._take_over_stale()
        old_mask = os.umask(0o177)   # the socket is created 0600
        try:
            self._server = socketserver.ThreadingUnixStreamServer(str(self.path), _Request)
        finally:
            os.umask(old_mask)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="store-channel", daemon=True)
        self._thread.start()

    def answer(self, line: bytes) -> dict[str, Any]:
        """The answer to one request line."""
        try:
            request = json.loads(line)
            verb, args = request["verb"], request.get("args") or {}
        except (ValueError, KeyError, TypeError):
            return {"ok": False, "error": "the request was not understood"}
        handler = self.handlers.get(verb)
        if handler is None:
            return {"ok": False, "error": f"the window does not take '{verb}' requests"}
        try:
            return {"ok": True, "result": handler(args)}
        except ThinsliceError as exc:
            return {"ok": False, "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - the asking process gets one line, the window keeps running
            return {"ok": False, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}

    def _take_over_stale(self) -> None:
        """Remove a socket no window answers on (one that ended without closing); a live one is kept."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(self.path))
            except (ConnectionRefusedError, FileNotFoundError):
                self.path.unlink(missing_ok=True)
                return
        raise ThinsliceError(f"Another window already takes requests for this store at {self.path}.")

    def close(self) -> None:
        """Stop serving and remove the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self.path.unlink(missing_ok=True)


def copy_held_store(store_path: Path, out: Path) -> Path:
    """A consistent, checked copy of the store at `store_path`, which another process holds, written to the
    new file `out`: read here when the holder only reads it, else written by the Thinslice window that holds
    it. The holder's `StoreLockedError` when neither can be done (another program writes it)."""
    try:
        store = Store.open(store_path, read_only=True, create=False)
    except StoreLockedError as held:
        answer = ask_holder(store_path, "backup", {"out": str(Path(out).expanduser().resolve())})
        if answer is None:
            raise held from None
        return Path(answer["backup"])
    try:
        return back_up(store, out).path
    finally:
        store.close()
