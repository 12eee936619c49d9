"""Backups of the open store, asked for or on a schedule, each checked after writing.

`back_up` writes one checked copy (`storage.backup.backup_store`: DuckDB's own consistent copy, every row
read back before it is renamed into place) and says what it wrote in one line. A scheduled backup goes to
the schedule's folder (by default `NAME-backups` beside the store) under a name holding its time; once it
is written and checked, only the newest `keep` of that store's scheduled backups are kept.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from storage.backup import TableCheck, backup_store, check_store
from storage.errors import ThinsliceError
from storage.store import Store

_STAMP = "%Y%m%d-%H%M%S"


@dataclass(frozen=True)
class BackupReport:
    """A backup written and checked: where, how many tables and rows."""

    path: Path
    tables: int
    rows: int
    removed: tuple[Path, ...] = ()   # older scheduled backups let go to keep the last N

    def describe(self) -> str:
        """One line for the status bar."""
        older = f"; {len(self.removed)} older removed" if self.removed else ""
        return f"Backed up to {self.path} and checked it ({self.tables} tables, {self.rows:,} rows){older}."

    def as_json(self) -> dict[str, object]:
        """What `thinslice backup` prints."""
        return {"backup": str(self.path), "tables": self.tables, "rows": self.rows}


def back_up(store: Store, out: Path | str) -> BackupReport:
    """Write a checked copy of `store` to the new file `out` (never overwriting)."""
    out = Path(out).expanduser().resolve()
    tables = backup_store(store, out)
    return BackupReport(out, len(tables), sum(t.rows for t in tables))


def default_folder(store_path: Path) -> Path:
    """Where scheduled backups go unless the user chose a folder: `NAME-backups` beside the store."""
    return store_path.with_name(f"{store_path.stem}-backups")


def _pattern(store_path: Path) -> re.Pattern[str]:
    return re.compile(re.escape(store_path.stem) + r"-(\d{8}-\d{6})(?:-(\d+))?\.duckdb")


def scheduled_backups(store_path: Path, folder: Path) -> list[tuple[datetime, Path]]:
    """The store's scheduled backups in `folder`, oldest first, with the time in their names."""
    found: list[tuple[datetime, int, Path]] = []
    if folder.is_dir():
        pattern = _pattern(store_path)
        for path in folder.iterdir():
            matched = pattern.fullmatch(path.name)
            if matched and path.is_file():
                found.append((datetime.strptime(matched.group(1), _STAMP), int(matched.group(2) or 1), path))
    return [(when, path) for when, _, path in sorted(found)]


def backup_due(store_path: Path, folder: Path, every_hours: float, now: datetime) -> bool:
    """True when a schedule of one backup every `every_hours` wants one now (none yet, or the newest is
    that old); never when the schedule is off (`every_hours` <= 0)."""
    if every_hours <= 0:
        return False
    made = scheduled_backups(store_path, folder)
    return not made or now - made[-1][0] >= timedelta(hours=every_hours)


def scheduled_backup(store: Store, folder: Path, keep: int, now: datetime) -> BackupReport:
    """Write the scheduled backup of `now` into `folder`, then keep only the newest `keep` (at least one)."""
    folder = Path(folder).expanduser()
    name = f"{store.path.stem}-{now.strftime(_STAMP)}"
    out, number = folder / f"{name}.duckdb", 1
    while out.exists():
        number += 1
        out = folder / f"{name}-{number}.duckdb"
    report = back_up(store, out)
    made = scheduled_backups(store.path, folder)
    old = [path for _, path in made[:-max(1, keep)]] if len(made) > max(1, keep) else []
    for path in old:
        path.unlink(missing_ok=True)
    return BackupReport(report.path, report.tables, report.rows, tuple(old))


def check_summary(path: Path, tables: list[TableCheck]) -> dict[str, Any]:
    """What `thinslice check` prints for a store whose every table was read back."""
    return {"store": str(path), "ok": True, "tables": {t.table: t.rows for t in tables}}


def channel_handlers(store: Store, told: Callable[[str], None]) -> dict[str, Callable[[Mapping[str, Any]], dict]]:
    """What the window does for `thinslice backup` and `thinslice check` while it holds `store` (see
    `app.store_channel`); `told` hears one line after each, for the status bar."""

    def backup(args: Mapping[str, Any]) -> dict[str, Any]:
        out = Path(str(args.get("out") or ""))
        if not out.is_absolute():
            raise ThinsliceError(f"The backup must be named by its absolute path, not {out}.")
        report = back_up(store, out)
        told(report.describe().replace("Backed up", "Backed up (asked from the command line)", 1))
        return report.as_json()

    def check(_args: Mapping[str, Any]) -> dict[str, Any]:
        tables = check_store(store)
        told(f"Checked {store.path} (asked from the command line): every row of {len(tables)} tables reads back.")
        return check_summary(store.path, tables)

    return {"backup": backup, "check": check}
