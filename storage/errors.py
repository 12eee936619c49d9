"""Errors the store layer raises, each with a message a user can act on."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class ThinsliceError(Exception):
    """Base for every error that is shown to a user as a message rather than a traceback."""


class StoreLockedError(ThinsliceError):
    def __init__(self, path: Path, detail: str = "") -> None:
        self.path = Path(path)
        super().__init__(
            f"The store {self.path} is in use by another process: another Thinslice may have it open. "
            f"Close it there, or open a different store with --db PATH."
            + (f" ({detail})" if detail else "")
        )


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
