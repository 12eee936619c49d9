"""The live models a race asks at once ("contenders"), as the window's settings keep them.

A contender names an OpenAI-compatible endpoint, the model to ask there, the modality it is asked in, and the
*name* of the environment variable holding its key: the key itself is never part of a contender, so nothing
that saves, logs or exports settings can leak it. Kept light (no client, no benchmark rules): the settings
read contenders when the window starts. Qt-free.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

MODALITIES = ("text", "audio", "video")


@dataclass(frozen=True)
class Contender:
    """One live model in a race: its name on stage, endpoint (a base URL ending in /v1), model id, the
    modality it is asked in and the environment variable holding its key."""

    name: str
    base_url: str
    model: str
    modality: str = "text"
    api_key_env: str = ""

    def problem(self) -> str | None:
        """Why this contender cannot be asked, in one line, or None."""
        if not self.name.strip():
            return "a contender needs a name"
        if not self.base_url.strip().startswith(("http://", "https://")):
            return f"{self.name}: the base URL must start with http:// or https://, got {self.base_url!r}"
        if not self.model.strip():
            return f"{self.name}: name the model to ask (the endpoint's model id)"
        if self.modality not in MODALITIES:
            return f"{self.name}: modality must be one of {', '.join(MODALITIES)}, got {self.modality!r}"
        return None


def lineup_problem(contenders: Iterable[Contender]) -> str | None:
    """Why these contenders cannot race together, or None: each must be askable, names must differ, and no
    two may ask the same model in the same modality (the store keeps one answer per model and condition)."""
    names: set[str] = set()
    asked: set[tuple[str, str]] = set()
    for contender in contenders:
        problem = contender.problem()
        if problem:
            return problem
        if contender.name in names:
            return f"two contenders are named {contender.name}"
        if (contender.model, contender.modality) in asked:
            return (f"two contenders ask {contender.model} in {contender.modality}: the store keeps one answer "
                    f"per model and condition")
        names.add(contender.name)
        asked.add((contender.model, contender.modality))
    return None


def contenders_from_stored(value: Any) -> tuple[Contender, ...]:
    """Contenders from their stored JSON text (a list of objects); an entry that is not an object with text
    values is left out, a missing modality is text, and malformed text gives none."""
    try:
        items = json.loads(value) if isinstance(value, str) else None
    except ValueError:
        return ()
    if not isinstance(items, list):
        return ()
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        values = {name: item.get(name) for name in Contender.__dataclass_fields__}
        if not all(isinstance(v, str) for k, v in values.items() if v is not None) \
                or not all(isinstance(values[k], str) for k in ("name", "base_url", "model")):
            continue
        found.append(Contender(**{k: v.strip() for k, v in values.items() if v is not None}))
    return tuple(found)


def contenders_to_stored(contenders: Iterable[Contender]) -> str:
    """The JSON text the settings keep for `contenders` (never a key, only its variable's name)."""
    return json.dumps([asdict(c) for c in contenders], ensure_ascii=False)
