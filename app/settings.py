"""The window's remembered settings as one typed, versioned value. Qt-free: one adapter in widgets stores it.

Version 1 kept the keys the window wrote before settings had a version (`annotator`, `last_dataset`,
`geometry`, `window_state`, `recent_stores`), so a settings file written by an older Thinslice opens with nothing
lost. Version 2 brings in what the views kept under keys of their own: the live panel's endpoint, answer limit
and edited prompts (`live/...`), the analysis tracks' spectrogram and pitch parameters and which tracks show
(`analysis_tracks/...`), and how label keys mark (`labels/key_mode`). `upgrade` reads those old keys from a
file of version 0 or 1 once; the adapter then writes the version 2 keys and removes the old ones
(`LEGACY_GROUPS`). Keys added within a version are read with their defaults from a file that lacks them, and
any value of the wrong type or outside what it may be takes its default.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from app.contenders import Contender, contenders_from_stored, contenders_to_stored

SETTINGS_VERSION = 2
BACKUP_KEEP = 7   # scheduled backups kept unless the user says otherwise
LEGACY_GROUPS = ("live", "analysis_tracks", "labels")   # where versions 0 and 1 kept the views' own keys
LABEL_KEY_MODES = ("tap", "hold")   # a label key pressed at the start and again at the end, or held throughout
SPECTROGRAM_BANDS = ("wide", "narrow")
DEFAULT_MAX_ANSWER_KB = 256         # the longest live answer kept unless the user says otherwise
# The analysis parameters a settings file may hold, each with its default and the range the views accept.
ANALYSIS_NUMBERS: dict[str, tuple[int, int, int]] = {
    "spectrogram_max_hz": (5000, 1000, 16000), "spectrogram_range_db": (50, 20, 100),
    "pre_emphasis_db": (6, 0, 12), "pitch_floor_hz": (75, 30, 400), "pitch_ceiling_hz": (600, 100, 1200)}
# version 1's key under `analysis_tracks/` for each of them
_OLD_ANALYSIS_KEYS = {"spectrogram_max_hz": "max_frequency", "spectrogram_range_db": "dynamic_range",
                      "pre_emphasis_db": "pre_emphasis", "pitch_floor_hz": "pitch_floor",
                      "pitch_ceiling_hz": "pitch_ceiling"}


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
    # the live panel's endpoint (None: the live client's own default) and answer limit; the key is never kept
    live_base_url: str | None = None
    live_model: str | None = None
    live_api_key_env: str | None = None
    live_max_answer_kb: int = DEFAULT_MAX_ANSWER_KB
    # prompt templates as the user edited them, by template name: {"system": ..., "user": ...}, either may lack
    live_templates: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    label_key_mode: str = LABEL_KEY_MODES[0]
    spectrogram_band: str = SPECTROGRAM_BANDS[0]
    spectrogram_max_hz: int = ANALYSIS_NUMBERS["spectrogram_max_hz"][0]
    spectrogram_range_db: int = ANALYSIS_NUMBERS["spectrogram_range_db"][0]
    pre_emphasis_db: int = ANALYSIS_NUMBERS["pre_emphasis_db"][0]
    pitch_floor_hz: int = ANALYSIS_NUMBERS["pitch_floor_hz"][0]
    pitch_ceiling_hz: int = ANALYSIS_NUMBERS["pitch_ceiling_hz"][0]
    # the analysis tracks shown or hidden by choice, as "LANE/TRACK" or "conversation"; others take their default
    tracks_shown: Mapping[str, bool] = field(default_factory=dict)

    def with_(self, **changes: Any) -> "Settings":
        """A copy with `changes` applied (settings are values; the adapter saves the copy)."""
        return replace(self, **changes)


FIELD_NAMES = tuple(f.name for f in fields(Settings) if f.name != "version")


def upgrade(stored: Mapping[str, Any]) -> Settings:
    """Settings from stored key/values of any known version; missing or malformed values take the default.
    A store of version 0 or 1 gives its views' keys under `LEGACY_GROUPS` (e.g. `live/model`) with the rest."""
    version = _as_int(stored.get("version"), 0)
    # a file written by a newer Thinslice: read the keys this version knows, keep the rest untouched in the file
    values = dict(stored) if version >= 2 else {**stored, **_from_version_1(stored)}
    analysis = {name: _in_range(values.get(name), *limits) for name, limits in ANALYSIS_NUMBERS.items()}
    # version 0 (no version key) wrote the same keys as version 1
    return Settings(annotator=_as_text(values.get("annotator")), last_dataset=_as_text(values.get("last_dataset")),
                    geometry=_as_bytes(values.get("geometry")), window_state=_as_bytes(values.get("window_state")),
                    recent_stores=_as_texts(values.get("recent_stores")),
                    contenders=contenders_from_stored(values.get("contenders")),
                    race_verdicts_at_once=_as_bool(values.get("race_verdicts_at_once")),
                    backup_every_hours=max(0.0, _as_float(values.get("backup_every_hours"), 0.0)),
                    backup_keep=max(1, _as_int(values.get("backup_keep"), BACKUP_KEEP)),
                    backup_folder=_as_text(values.get("backup_folder")),
                    live_base_url=_as_optional_text(values.get("live_base_url")),
                    live_model=_as_optional_text(values.get("live_model")),
                    live_api_key_env=_as_optional_text(values.get("live_api_key_env")),
                    live_max_answer_kb=_in_range(values.get("live_max_answer_kb"), DEFAULT_MAX_ANSWER_KB, 1, None),
                    live_templates=_templates(values.get("live_templates")),
                    label_key_mode=_one_of(values.get("label_key_mode"), LABEL_KEY_MODES),
                    spectrogram_band=_one_of(values.get("spectrogram_band"), SPECTROGRAM_BANDS),
                    tracks_shown=_flags(values.get("tracks_shown")), **analysis, version=SETTINGS_VERSION)


def as_stored(settings: Settings) -> dict[str, Any]:
    """The key/values to store for `settings` (None: remove the key); mappings are kept as JSON text."""
    return {"version": settings.version, **{name: getattr(settings, name) for name in FIELD_NAMES},
            "contenders": contenders_to_stored(settings.contenders),
            "live_templates": json.dumps({k: dict(v) for k, v in settings.live_templates.items()}, ensure_ascii=False),
            "tracks_shown": json.dumps(dict(settings.tracks_shown), ensure_ascii=False)}


def is_current(stored: Mapping[str, Any]) -> bool:
    """Whether stored key/values are of this version (or a newer one), so no old key needs reading."""
    return _as_int(stored.get("version"), 0) >= SETTINGS_VERSION


def legacy_keys(stored_keys: list[str]) -> list[str]:
    """The keys among `stored_keys` that versions 0 and 1 kept outside the settings, which `upgrade` has read."""
    return [key for key in stored_keys if key.split("/", 1)[0] in LEGACY_GROUPS and "/" in key]


def _from_version_1(stored: Mapping[str, Any]) -> dict[str, Any]:
    """Version 2's values from the views' own keys of version 1 (`live/...`, `analysis_tracks/...`, `labels/...`).
    Values are taken as they were written and judged by `upgrade` like any other."""
    moved: dict[str, Any] = {f"live_{name}": stored.get(f"live/{name}")
                             for name in ("base_url", "model", "api_key_env")}
    moved["live_max_answer_kb"] = stored.get("live/max_answer_kb")
    templates: dict[str, dict[str, Any]] = {}
    tracks: dict[str, Any] = {}
    for key, value in stored.items():
        parts = key.split("/")
        if len(parts) == 4 and parts[0] == "live" and parts[1] == "templates" and parts[3] in ("system", "user"):
            templates.setdefault(parts[2], {})[parts[3]] = value
        elif parts[0] == "analysis_tracks" and (len(parts) == 3 or parts[1:] == ["conversation"]):
            tracks["/".join(parts[1:])] = value
    moved["live_templates"] = templates
    moved["tracks_shown"] = tracks
    moved["label_key_mode"] = stored.get("labels/key_mode")
    moved["spectrogram_band"] = stored.get("analysis_tracks/band")
    for name, old in _OLD_ANALYSIS_KEYS.items():
        moved[name] = stored.get(f"analysis_tracks/{old}")
    return moved


def _templates(value: Any) -> dict[str, dict[str, str]]:
    # JSON text as stored, or the mapping `_from_version_1` gathered; a template's text that is not text is dropped
    items = _json_object(value)
    return {name: {part: text for part, text in parts.items() if part in ("system", "user") and isinstance(text, str)}
            for name, parts in items.items() if isinstance(name, str) and isinstance(parts, dict)}


def _flags(value: Any) -> dict[str, bool]:
    items = _json_object(value)
    return {key: _as_bool(on) for key, on in items.items() if isinstance(key, str) and _is_bool(on)}


def _json_object(value: Any) -> dict:
    if isinstance(value, dict):
        return value
    try:
        items = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return {}
    return items if isinstance(items, dict) else {}


def _is_bool(value: Any) -> bool:
    # an INI file gives a stored bool back as the text "true" or "false"
    return isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in ("true", "false"))


def _one_of(value: Any, allowed: tuple[str, ...]) -> str:
    return value if value in allowed else allowed[0]


def _as_optional_text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) else None


def _in_range(value: Any, default: int, low: int, high: int | None) -> int:
    # a settings file gives numbers back as text ("5000" or "5000.0"); one out of range takes the default
    number = _as_float(value, math.nan)
    if not math.isfinite(number) or number < low or (high is not None and number > high):
        return default
    return int(number)


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
