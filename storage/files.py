"""Reading an input file safely: only a regular file, and never more than a size limit.

Every reader of a file a user points at (annotation `.jsonl`/csv files, live configuration, release files)
should read it through :func:`open_regular` or :func:`read_regular_text`. A name that is a link to
`/dev/zero`, a FIFO or a folder is refused in one line instead of being read until memory runs out, and a
file that is (or grows) larger than the limit is refused with its size, so a typo in a path can never hang
or exhaust the machine.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from storage.errors import FileRefused

MB = 1 << 20
# Default for text formats a person writes or a tool exports (annotations, configuration).
DEFAULT_MAX_BYTES = 256 * MB


class _BoundedReader:
    """A binary file whose reads stop with `FileRefused` once more than `max_bytes` came out of it."""

    def __init__(self, raw: BinaryIO, path: Path, max_bytes: int) -> None:
        self._raw = raw
        self._path = path
        self._max = max_bytes
        self._seen = 0

    def _count(self, data: bytes) -> bytes:
        self._seen += len(data)
        if self._seen > self._max:
            raise FileRefused(self._path, f"it grew past the {_size(self._max)} limit while being read")
        return data

    def read(self, size: int = -1) -> bytes:
        # never ask the OS for more than one byte past the limit, even for read()
        budget = self._max + 1 - self._seen
        return self._count(self._raw.read(budget if size is None or size < 0 else min(size, budget)))

    def readline(self, size: int = -1) -> bytes:
        budget = self._max + 1 - self._seen
        return self._count(self._raw.readline(budget if size is None or size < 0 else min(size, budget)))

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


def check_regular(path: Path | str, max_bytes: int = DEFAULT_MAX_BYTES) -> Path:
    """`path` (links followed) when it names a regular file of at most `max_bytes`; else `FileRefused`."""
    path = Path(path)
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
    if info.st_size > max_bytes:
        raise FileRefused(path, f"it is {_size(info.st_size)}; the limit is {_size(max_bytes)}")
    return path


def open_regular(path: Path | str, max_bytes: int = DEFAULT_MAX_BYTES) -> _BoundedReader:
    """Open `path` for binary reading if it is a regular file within `max_bytes`; reads past the limit
    (a file that grows while read) raise `FileRefused` too. Use as a context manager."""
    path = check_regular(path, max_bytes)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the check cannot block us
    fd = os.open(path, flags)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # the name was swapped between the check and the open
        os.close(fd)
        raise FileRefused(path, "it stopped being a regular file while being opened")
    return _BoundedReader(os.fdopen(fd, "rb"), path, max_bytes)


def read_regular_bytes(path: Path | str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The whole content of a regular file of at most `max_bytes`."""
    with open_regular(path, max_bytes) as handle:
        return handle.read()


def utf16_hint(data: bytes) -> str:
    """Words to add to a "not UTF-8" refusal when the bytes start with a UTF-16 byte-order mark (as a table
    saved as "Unicode text" does), else ''."""
    return " (it is UTF-16 text: save it as UTF-8)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""


def read_regular_text(path: Path | str, max_bytes: int = DEFAULT_MAX_BYTES, encoding: str = "utf-8") -> str:
    """The text of a regular file of at most `max_bytes`; text that is not in `encoding` is refused in one
    line naming the byte where decoding failed."""
    data = read_regular_bytes(path, max_bytes)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise FileRefused(Path(path), f"byte {exc.start} is not {encoding} text{utf16_hint(data)}; "
                                      f"expected {encoding}") from None
