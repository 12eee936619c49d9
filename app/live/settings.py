"""Where a live model lives, and how its API key is found.

The key itself is never part of the settings: the settings name an environment variable, and
the key is read from it (or from the system keyring, when the ``keyring`` package is
installed) only at the moment a client is made. So nothing that saves settings, logs or
exports can leak it.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

KEYRING_SERVICE = "thinslice"
# Local OpenAI-compatible servers usually want no key, but the client insists on one.
NO_KEY_PLACEHOLDER = "no-key"


@dataclass(frozen=True)
class LiveSettings:
    """A live endpoint: base URL (ending in /v1), model name and the key's variable name."""

    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"

    def to_dict(self) -> dict[str, Any]:
        """Plain values safe to store (no key)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> LiveSettings:
        """Settings from stored values; unknown keys are ignored."""
        known = {k: str(v) for k, v in values.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def _keyring_password(settings: LiveSettings) -> str | None:
    try:
        import keyring
    except ImportError:
        return None
    try:
        return keyring.get_password(KEYRING_SERVICE, settings.api_key_env)
    except Exception:  # any backend failure (no keyring daemon, locked store) means "no key here"
        return None


def resolve_api_key(settings: LiveSettings) -> tuple[str | None, str]:
    """(key, where it came from): the environment variable first, then the system keyring.

    The second value is a user-facing description such as "environment variable OPENAI_API_KEY"
    or "none found"; it never contains the key.
    """
    from_env = os.environ.get(settings.api_key_env) if settings.api_key_env else None
    if from_env:
        return from_env, f"environment variable {settings.api_key_env}"
    from_keyring = _keyring_password(settings) if settings.api_key_env else None
    if from_keyring:
        return from_keyring, f"system keyring ({KEYRING_SERVICE} / {settings.api_key_env})"
    return None, "none found"
