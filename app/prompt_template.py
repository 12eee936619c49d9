"""A prompt template: a system and a user format string a user may edit.

A template is a pair of format strings (system and user) with named fields such as
``{transcript}``. ``render`` fills them and says which fields are missing; ``edited`` gives a
changed copy (the settings layer stores edited templates by name). Literal braces are
written doubled (``{{`` and ``}}``), as in ``str.format``.
"""
from __future__ import annotations

import string
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    benchmark: str
    description: str
    system: str
    user: str

    @property
    def fields(self) -> tuple[str, ...]:
        """The named fields the template needs, in order of first use."""
        seen: list[str] = []
        for text in (self.system, self.user):
            for _, name, _, _ in string.Formatter().parse(text):
                if name and name not in seen:
                    seen.append(name)
        return tuple(seen)

    def render(self, **values: Any) -> tuple[str, str]:
        """(system, user) with the fields filled; KeyError naming every missing field."""
        missing = [f for f in self.fields if f not in values]
        if missing:
            raise KeyError(f"prompt {self.name!r} needs: {', '.join(missing)}")
        return self.system.format(**values), self.user.format(**values)

    def edited(self, system: str | None = None, user: str | None = None) -> PromptTemplate:
        """A copy with new text; raises ValueError when a format string is broken."""
        changed = replace(
            self, system=self.system if system is None else system, user=self.user if user is None else user
        )
        for text in (changed.system, changed.user):
            try:
                list(string.Formatter().parse(text))
            except ValueError as error:
                raise ValueError(f"prompt {self.name!r}: {error} (write literal braces as {{{{ and }}}})") from error
        return changed
