"""The window's remembered settings as one typed, versioned value. Qt-free: one adapter in widgets stores it.

Version 1 keeps the same keys the window wrote before settings had a version (`annotator`, `last_dataset`,
`geometry`, `window_state`, `recent_stores`), so a settings file written by an older Thinslice opens with nothing lost;
`upgrade` is where a later version renames or converts keys. Keys added since (the race's contenders, the
automatic backup schedule) are read with their defaults from a file that lacks them.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from app.contenders import Contender, contenders_from_stored, contenders_to_stored

SETTINGS_VERSION = 1
BACKUP_KEEP = 7   # scheduled backups kept unless the user says otherwise


@dataclass(frozen=True)
class Settings:
    """What the window remembers between runs. Geometry and dock state are Qt's opaque bytes."""

    annotator: str = ""
    last_dataset: str = ""
    geometry: bytes | None = None
    window_state: bytes | None = None
    recent_stores: tuple[str, ...] = ()  # paths, most recent first
    version: int = SETTINGS_VERSION
    contenders: tuple[Contender, ...] = ()  # the live models a race in presentation mode asks at once
    race_verdicts_at_once: bool = False     # a race shows each verdict as it comes instead of on a reveal key
    backup_every_hours: float = 0.0         # a checked backup of the open store this often; 0: none
    backup_keep: int = BACKUP_KEEP          # the newest scheduled backups kept
    backup_folder: str = ""                 # where they go; empty: NAME-backups beside the store

    def with_(self, **changes: Any) -> "Settings":
        """A copy with `changes` applied (settings are values; the adapter saves the copy)."""
        return replace(self, **changes)


FIELD_NAMES = tuple(f.name for f in fields(Settings) if f.name != "version")


def upgrade(stored: Mapping[str, Any]) -> Settings:
    """Settings from stored key/values of any known version; missing or malformed values take the default."""
    version = _as_int(stored.get("version"), 0)
    if version > SETTINGS_VERSION:
        # written by a newer Thinslice: read the keys this version knows, keep the rest untouched in the file
        version = SETTINGS_VERSION
    # version 0 (no version key) wrote the same keys as version 1
    return Settings(annotator=_as_text(stored.get("annotator")), last_dataset=_as_text(stored.get("last_dataset")),
                    geometry=_as_bytes(stored.get("geometry")), window_state=_as_bytes(stored.get("window_state")),
                    recent_stores=_as_texts(stored.get("recent_stores")),
                    contenders=contenders_from_stored(stored.get("contenders")),
                    race_verdicts_at_once=_as_bool(stored.get("race_verdicts_at_once")),
                    backup_every_hours=max(0.0, _as_float(stored.get("backup_every_hours"), 0.0)),
                    backup_keep=max(1, _as_int(stored.get("backup_keep"), BACKUP_KEEP)),
                    backup_folder=_as_text(stored.get("backup_folder")), version=SETTINGS_VERSION)


def as_stored(settings: Settings) -> dict[str, Any]:
    """The key/values to store for `settings` (None: remove the key)."""
    return {"version": settings.version, **{name: getattr(settings, name) for name in FIELD_NAMES},
            "contenders": contenders_to_stored(settings.contenders)}


def _as_text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _as_texts(value: Any) -> tuple[str, ...]:
    # a settings file holding a list of one item gives back the item alone
    values = [value] if isinstance(value, str) else value if isinstance(value, (list, tuple)) else []
    return tuple(v.strip() for v in values if isinstance(v, str) and v.strip())


def _as_bool(value: Any) -> bool:
    # an INI settings file gives a stored bool back as the text "true"
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _as_bytes(value: Any) -> bytes | None:
    return bytes(value) if isinstance(value, (bytes, bytearray, memoryview)) and len(value) else None


def _as_float(value: Any, default: float) -> float:
    # a settings file gives numbers back as text; a value that is not a finite number takes the default
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


def _as_int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
