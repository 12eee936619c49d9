"""The one adapter between the typed `app.settings.Settings` and QSettings."""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

from app.settings import FIELD_NAMES, Settings, as_stored, is_current, legacy_keys, upgrade


class SettingsStore:
    """Reads and writes the window's `Settings` in a QSettings file (the user's, or a test's own)."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        self.qsettings = qsettings if qsettings is not None else QSettings("Thinslice", "Thinslice")

    def load(self) -> Settings:
        """The settings as stored; a file of an older version is upgraded and written back in the new shape once,
        its old keys removed."""
        stored = {name: self._value(name) for name in ("version", *FIELD_NAMES)}
        old = []
        if upgrade_needed := not is_current(stored):
            old = legacy_keys(self.qsettings.allKeys())
            stored.update({key: self._value(key) for key in old})
        settings = upgrade(stored)
        if upgrade_needed and old:
            self.save(settings)
            for key in old:
                self.qsettings.remove(key)
            self.qsettings.sync()
        return settings

    def save(self, settings: Settings) -> None:
        for name, value in as_stored(settings).items():
            if value is None:
                self.qsettings.remove(name)
            else:
                self.qsettings.setValue(name, QByteArray(value) if isinstance(value, bytes)
                                        else list(value) if isinstance(value, tuple) else value)
        self.qsettings.sync()

    def update(self, **changes) -> Settings:
        """Load, change, save; returns what was saved."""
        settings = self.load().with_(**changes)
        self.save(settings)
        return settings

    def _value(self, key: str):
        value = self.qsettings.value(key)
        return value.data() if isinstance(value, QByteArray) else value

