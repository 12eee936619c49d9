"""Reading an input file safely: only a regular file, and for a file a person writes, never more than a limit.

Every reader of a file a user points at (annotation `.jsonl`/csv files, live configuration, release files)
should read it through :func:`check_regular`, :func:`open_regular` or :func:`read_regular_text`. A name that
is a link to `/dev/zero`, a FIFO or a folder is refused in one line instead of being read until memory runs
out, whatever the kind of file.

The size limit depends on who writes the file. What a person writes or edits (annotation files, label sets,
configuration) is refused past `hand_written_limit()`: 256 MB unless the environment variable
`THINSLICE_MAX_FILE_MB` says otherwise, since such a file that large is a wrong path, not a bigger job. A table
a program wrote (a results table of predictions, judgments or ratings, a release's results file) has no fixed
cap: its readers stream it, so its size decides how long it takes, not whether it can be read; they pass
`max_bytes=None`.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from storage.errors import FileRefused

MB = 1 << 20
# The limit for files a person writes (annotations, configuration) when the environment does not set one.
DEFAULT_MAX_BYTES = 256 * MB
LIMIT_VARIABLE = "THINSLICE_MAX_FILE_MB"


class _HandWritten:
    """The default `max_bytes`: the limit for a file a person writes, read from the environment when used."""

    def __repr__(self) -> str:
        return "HAND_WRITTEN"


HAND_WRITTEN = _HandWritten()
Limit = int | None | _HandWritten


def hand_written_limit() -> int:
    """The size limit in bytes for files a person writes: `THINSLICE_MAX_FILE_MB` megabytes when set to a
    positive number, else 256 MB."""
    raw = os.environ.get(LIMIT_VARIABLE, "").strip()
    try:
        megabytes = float(raw) if raw else 0.0
    except ValueError:
        megabytes = 0.0
    return int(megabytes * MB) if megabytes > 0 else DEFAULT_MAX_BYTES


def _bytes(limit: Limit) -> int | None:
    return hand_written_limit() if isinstance(limit, _HandWritten) else limit


class _BoundedReader:
    """A binary file whose reads stop with `FileRefused` once more than `max_bytes` came out of it."""

    def __init__(self, raw: BinaryIO, path: Path, max_bytes: int | None) -> None:
        self._raw = raw
        self._path = path
        self._max = max_bytes
        self._seen = 0

    def _count(self, data: bytes) -> bytes:
        self._seen += len(data)
        if self._max is not None and self._seen > self._max:
            raise FileRefused(self._path, f"it grew past the {_size(self._max)} limit while being read")
        return data

    def _ask(self, size: int | None) -> int:
        """How many bytes to ask the OS for: never more than one byte past the limit, even for read()."""
        if self._max is None:
            return -1 if size is None else size
        budget = self._max + 1 - self._seen
        return budget if size is None or size < 0 else min(size, budget)

    def read(self, size: int = -1) -> bytes:
        return self._count(self._raw.read(self._ask(size)))

    def readline(self, size: int = -1) -> bytes:
        return self._count(self._raw.readline(self._ask(size)))

    def __iter__(self):
        while True:
            line = self.readline()
            if not line:
                return
            yield line

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> _BoundedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _size(n: int) -> str:
    return f"{n / MB:.1f} MB" if n >= MB else f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


def check_regular(path: Path | str, max_bytes: Limit = HAND_WRITTEN) -> Path:
    """`path` (links followed) when it names a regular file of at most `max_bytes` (by default the limit for
    files a person writes; None: any size); else `FileRefused`."""
    path = Path(path)
    max_bytes = _bytes(max_bytes)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FileRefused(path, "it does not exist") from None
    except OSError as exc:
        raise FileRefused(path, f"it cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = ("a folder" if stat.S_ISDIR(info.st_mode) else "a device" if stat.S_ISCHR(info.st_mode)
                or stat.S_ISBLK(info.st_mode) else "a pipe" if stat.S_ISFIFO(info.st_mode) else "not a regular file")
        target = f" (a link to {os.path.realpath(path)})" if path.is_symlink() else ""
        raise FileRefused(path, f"it is {kind}{target}; expected a regular file")
    if max_bytes is not None and info.st_size > max_bytes:
        hint = f" (set {LIMIT_VARIABLE} to raise it)" if max_bytes == hand_written_limit() else ""
        raise FileRefused(path, f"it is {_size(info.st_size)}; the limit is {_size(max_bytes)}{hint}")
    return path


def open_regular(path: Path | str, max_bytes: Limit = HAND_WRITTEN) -> _BoundedReader:
    """Open `path` for binary reading if it is a regular file within `max_bytes` (see `check_regular`); reads
    past the limit (a file that grows while read) raise `FileRefused` too. Use as a context manager."""
    max_bytes = _bytes(max_bytes)
    path = check_regular(path, max_bytes)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the check cannot block us
    fd = os.open(path, flags)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # the name was swapped between the check and the open
        os.close(fd)
        raise FileRefused(path, "it stopped being a regular file while being opened")
    return _BoundedReader(os.fdopen(fd, "rb"), path, max_bytes)


def read_regular_bytes(path: Path | str, max_bytes: Limit = HAND_WRITTEN) -> bytes:
    """The whole content of a regular file of at most `max_bytes`."""
    with open_regular(path, max_bytes) as handle:
        return handle.read()


def utf16_hint(data: bytes) -> str:
    """Words to add to a "not UTF-8" refusal when the bytes start with a UTF-16 byte-order mark (as a table
    saved as "Unicode text" does), else ''."""
    return " (it is UTF-16 text: save it as UTF-8)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""


def read_regular_text(path: Path | str, max_bytes: Limit = HAND_WRITTEN, encoding: str = "utf-8") -> str:
    """The text of a regular file of at most `max_bytes`; text that is not in `encoding` is refused in one
    line naming the byte where decoding failed."""
    data = read_regular_bytes(path, max_bytes)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise FileRefused(Path(path), f"byte {exc.start} is not {encoding} text{utf16_hint(data)}; "
                                      f"expected {encoding}") from None
