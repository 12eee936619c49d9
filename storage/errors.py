"""Errors the store layer raises, each with a message a user can act on."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class ThinsliceError(Exception):
    """Base for every error that is shown to a user as a message rather than a traceback."""


class StoreLockedError(ThinsliceError):
    """Another process holds the store's lock; `holder` names it (program and pid) when DuckDB says."""

    def __init__(self, path: Path, holder: str = "", read_only_tried: bool = False) -> None:
        self.path = Path(path)
        self.holder = holder
        who = f"{holder}" if holder else "another process"
        also = " (even for reading)" if read_only_tried else ""
        super().__init__(
            f"The store {self.path} is held by {who}{also}. Close the store in that program (or end it), "
            f"then try again; or work on a copy with --db PATH."
        )


class StoreMissingError(ThinsliceError):
    """--db names a file that does not exist; a store is only created when asked for (--create)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        super().__init__(f"No store at {self.path}: check the path, or add --create to make a new empty store there.")


class StoreWalDamaged(ThinsliceError):
    """The store's write-ahead log cannot be replayed; `thinslice recover` opens what was checkpointed."""

    def __init__(self, path: Path, detail: str) -> None:
        self.path = Path(path)
        super().__init__(
            f"The store {self.path} cannot be opened: its write-ahead log {self.path}.wal is damaged ({detail}). "
            f"Run `thinslice recover --db {self.path}` to open it with everything written before the damage; "
            f"the damaged log is kept beside it."
        )


class StoreCheckFailed(ThinsliceError):
    """A table of the store cannot be read back in full."""

    def __init__(self, path: Path, table: str, detail: str) -> None:
        self.path = Path(path)
        self.table = table
        super().__init__(f"The store {self.path} is damaged: table '{table}' cannot be read ({detail}).")


class FileRefused(ThinsliceError):
    """An input file that is not a regular file, is too large, or cannot be read; said in one line."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = Path(path)
        super().__init__(f"{self.path}: not read: {why}.")


class StoreOpenError(ThinsliceError):
    def __init__(self, path: Path, detail: str) -> None:
        self.path = Path(path)
        super().__init__(f"Cannot open the store {self.path}: {detail}")


class StoreTooNewError(ThinsliceError):
    def __init__(self, path: Path, found: int, supported: int) -> None:
        super().__init__(
            f"The store {path} was written by a newer Thinslice (schema version {found}; "
            f"this one knows up to {supported}). Nothing was changed."
        )


@dataclass(frozen=True)
class RowProblem:
    """One bad record in an input file: where it is, which field, what was found and what was expected."""

    file: str
    line: int | None
    field: str | None
    found: str
    expected: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        field = f" field '{self.field}'" if self.field else ""
        return f"{where}:{field} found {self.found}; expected {self.expected}"


class ImportFailed(ThinsliceError):
    def __init__(self, problems: list[RowProblem] | RowProblem | str) -> None:
        if isinstance(problems, RowProblem):
            problems = [problems]
        if isinstance(problems, str):
            self.problems: list[RowProblem] = []
            super().__init__(problems)
            return
        self.problems = list(problems)
        head = "; ".join(str(p) for p in self.problems[:5])
        more = f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
        super().__init__(f"Import failed, nothing was written: {head}{more}")


class ImportCancelled(ThinsliceError):
    def __init__(self) -> None:
        super().__init__("Import cancelled; the store is unchanged.")


class StoreWriteError(ThinsliceError):
    """The database refused a write (a read-only store or folder, a full disk, a lost file): nothing of it
    was stored. Every DuckDB error of a write is raised as this, so callers catch one error type."""

    def __init__(self, path: Path, what: str, detail: str) -> None:
        self.path = Path(path)
        self.what = what
        super().__init__(f"{what} was not saved: the store {self.path} refused the write ({detail}); "
                         "expected a writable store on a disk with free space. Nothing was changed.")


class StoreEditsMissing(ThinsliceError):
    """The store lacks label edits its edit journal holds: acknowledged edits lost with a damaged log."""

    def __init__(self, path: Path, count: int) -> None:
        self.path = Path(path)
        self.count = count
        edits = "edit is" if count == 1 else "edits are"
        super().__init__(
            f"{count} acknowledged label {edits} missing from the store {self.path} (its write-ahead log was "
            f"damaged); run `thinslice recover --db {self.path}` to put them back from its edit journal.")


class StoreDiskFull(ThinsliceError):
    """DuckDB could not write for want of space: said as a full disk, not as a damaged store."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"The disk is full: {detail}. Free some space and try again "
                         "(`thinslice check` reads the store back in full).")


class StoreReadFailed(ThinsliceError):
    """DuckDB met something it could not read in the store (a damaged block): where to look next."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"the store could not be read ({detail}); `thinslice check` names the damaged table")
