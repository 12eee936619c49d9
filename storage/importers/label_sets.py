"""Label sets as data: read and write the label-set JSON format, and move it into and out of plan frames.

The format (one file per label set):

    {"name": "...", "scope": "interval" | "whole" | "both", "description": "...", "source": "...",
     "labels": [{"name": "...", "parent": null | "<another label's name>", "colour": "#rrggbb" | null,
                 "shortcut": "<key>" | null, "description": "...", "aliases": ["...", ...]}, ...]}

`parent` builds a hierarchy (a forest: any depth, no cycles). `aliases` is optional: other spellings a
release uses for the same label (matched case-insensitively by `LabelSet.find`), kept with the label in the
store. Label order in the file is kept as `ord`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.importers.common import read_json
from storage.importers.plan import ImportPlan
from storage.resources import LABEL_SETS_DIR

SCOPES = ("interval", "whole", "both")
SET_KEYS = ("name", "scope", "description", "source", "labels")
LABEL_KEYS = ("name", "parent", "colour", "shortcut", "description", "aliases")
_COLOUR = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


def _key(text: str) -> str:
    """How names and aliases are compared: case-insensitive, spacing-insensitive."""
    return " ".join(text.strip().lower().split())


@dataclass(frozen=True)
class Label:
    name: str
    parent: str | None = None
    colour: str | None = None
    shortcut: str | None = None
    description: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelSet:
    name: str
    scope: str = "both"
    description: str | None = None
    source: str | None = None
    labels: tuple[Label, ...] = ()
    _index: dict[str, Label] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for label in self.labels:
            for text in (label.name, *label.aliases):
                self._index.setdefault(_key(text), label)

    def get(self, name: str) -> Label | None:
        """The label with exactly this name."""
        return next((label for label in self.labels if label.name == name), None)

    def find(self, text: str) -> Label | None:
        """The label whose name or alias matches `text` (case and spacing ignored), or None."""
        return self._index.get(_key(text)) if isinstance(text, str) else None

    def lineage(self, name: str) -> list[Label]:
        """The label and its ancestors, root first."""
        chain: list[Label] = []
        label = self.get(name)
        while label is not None:
            chain.append(label)
            label = self.get(label.parent) if label.parent else None
        return chain[::-1]

    def children(self, name: str | None) -> list[Label]:
        """Labels directly under `name` (None: the roots), in file order."""
        return [label for label in self.labels if label.parent == name]


def _text_or_none(value: Any, file: str, record: int | None, fld: str, problems: list[RowProblem]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    problems.append(RowProblem(file, record, fld, repr(value), "a string or null"))
    return None


def parse_label_set(data: Any, file: str) -> LabelSet:
    """Check a decoded label-set document and build a `LabelSet`.

    Raises `ImportFailed` naming `file`, the label's record number (1-based position in "labels") and the
    field for every problem: wrong types, unknown keys, duplicate names/aliases/shortcuts, unknown
    parents, cycles and malformed colours.
    """
    problems: list[RowProblem] = []
    if not isinstance(data, dict):
        raise ImportFailed(RowProblem(file, None, None, f"<{type(data).__name__}>",
                                      "a JSON object with " + ", ".join(SET_KEYS)))
    unknown = sorted(set(data) - set(SET_KEYS))
    if unknown:
        problems.append(RowProblem(file, None, unknown[0], "<unknown key>", "one of " + ", ".join(SET_KEYS)))
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(RowProblem(file, None, "name", repr(name), "a non-empty label set name"))
    scope = data.get("scope", "both")
    if scope not in SCOPES:
        problems.append(RowProblem(file, None, "scope", repr(scope), "one of " + ", ".join(SCOPES)))
    description = _text_or_none(data.get("description"), file, None, "description", problems)
    source = _text_or_none(data.get("source"), file, None, "source", problems)
    raw_labels = data.get("labels")
    if not isinstance(raw_labels, list) or not raw_labels:
        problems.append(RowProblem(file, None, "labels", repr(raw_labels) if not isinstance(raw_labels, list)
                                   else "<empty list>", "a non-empty list of labels"))
        raise ImportFailed(problems)

    labels: list[Label] = []
    seen: dict[str, str] = {}       # key of a name or alias -> the label that owns it
    shortcuts: dict[str, str] = {}
    for number, raw in enumerate(raw_labels, start=1):
        where = f"labels[{number}]"
        if not isinstance(raw, dict):
            problems.append(RowProblem(file, number, where, f"<{type(raw).__name__}>", "a JSON object"))
            continue
        extra = sorted(set(raw) - set(LABEL_KEYS))
        if extra:
            problems.append(RowProblem(file, number, f"{where}.{extra[0]}", "<unknown key>",
                                       "one of " + ", ".join(LABEL_KEYS)))
        label_name = raw.get("name")
        if not isinstance(label_name, str) or not label_name.strip():
            problems.append(RowProblem(file, number, f"{where}.name", repr(label_name), "a non-empty name"))
            continue
        parent = _text_or_none(raw.get("parent"), file, number, f"{where}.parent", problems)
        colour = _text_or_none(raw.get("colour"), file, number, f"{where}.colour", problems)
        if colour is not None and not _COLOUR.match(colour):
            problems.append(RowProblem(file, number, f"{where}.colour", repr(colour), "a colour like #1f77b4"))
            colour = None
        shortcut = _text_or_none(raw.get("shortcut"), file, number, f"{where}.shortcut", problems)
        if shortcut is not None:
            if not shortcut.strip() or len(shortcut) > 16:
                problems.append(RowProblem(file, number, f"{where}.shortcut", repr(shortcut),
                                           "a key such as 'c' or 'Ctrl+1'"))
            elif _key(shortcut) in shortcuts:
                problems.append(RowProblem(file, number, f"{where}.shortcut", repr(shortcut),
                                           f"a key not already used by '{shortcuts[_key(shortcut)]}'"))
            else:
                shortcuts[_key(shortcut)] = label_name
        label_description = _text_or_none(raw.get("description"), file, number, f"{where}.description", problems)
        aliases = raw.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
            problems.append(RowProblem(file, number, f"{where}.aliases", repr(aliases),
                                       "a list of non-empty strings"))
            aliases = []
        for text in (label_name, *aliases):
            owner = seen.get(_key(text))
            if owner is not None:
                what = "name" if text == label_name else "alias"
                problems.append(RowProblem(file, number, f"{where}.{'name' if what == 'name' else 'aliases'}",
                                           repr(text), f"a {what} not already used by label '{owner}'"))
            else:
                seen[_key(text)] = label_name
        labels.append(Label(label_name, parent, colour, shortcut, label_description, tuple(aliases)))

    by_name = {label.name: (number, label) for number, label in enumerate(labels, start=1)}
    for number, label in by_name.values():
        if label.parent is not None and label.parent not in by_name:
            problems.append(RowProblem(file, number, f"labels[{number}].parent", repr(label.parent),
                                       "the name of another label in this set, or null"))
    for number, label in by_name.values():
        visited = {label.name}
        parent = label.parent
        while parent is not None and parent in by_name:
            if parent in visited:
                problems.append(RowProblem(file, number, f"labels[{number}].parent", repr(label.parent),
                                           "a parent chain that does not loop back to this label"))
                break
            visited.add(parent)
            parent = by_name[parent][1].parent
    if problems:
        raise ImportFailed(problems)
    return LabelSet(name.strip(), scope, description, source, tuple(labels))


def read_label_set(path: Path) -> LabelSet:
    """Read and check a label-set JSON file (errors name the file, the label and the field)."""
    return parse_label_set(read_json(Path(path)), Path(path).name)


def bundled_label_set(file_name: str) -> LabelSet:
    """A label set shipped in resources/label_sets/."""
    return read_label_set(LABEL_SETS_DIR / file_name)


def label_set_to_json(label_set: LabelSet) -> dict[str, Any]:
    """The document `parse_label_set` reads back to an equal `LabelSet`."""
    labels = []
    for label in label_set.labels:
        entry: dict[str, Any] = {"name": label.name, "parent": label.parent, "colour": label.colour,
                                 "shortcut": label.shortcut, "description": label.description}
        if label.aliases:
            entry["aliases"] = list(label.aliases)
        labels.append(entry)
    return {"name": label_set.name, "scope": label_set.scope, "description": label_set.description,
            "source": label_set.source, "labels": labels}


def write_label_set(label_set: LabelSet, path: Path) -> None:
    """Write `label_set` as UTF-8 JSON."""
    Path(path).write_text(json.dumps(label_set_to_json(label_set), indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")


def add_label_set(plan: ImportPlan, label_set: LabelSet) -> None:
    """Put the set and its labels into the plan's `label_sets` and `labels` frames (file order as `ord`)."""
    plan.add("label_sets", [{"name": label_set.name, "scope": label_set.scope,
                             "description": label_set.description, "source": label_set.source}])
    plan.add("labels", [{"label_set": label_set.name, "name": label.name, "parent": label.parent,
                         "colour": label.colour, "shortcut": label.shortcut, "description": label.description,
                         "ord": ord_, "aliases": list(label.aliases) or None}
                        for ord_, label in enumerate(label_set.labels)])


def label_set_from_frames(label_sets: pl.DataFrame, labels: pl.DataFrame, name: str) -> LabelSet:
    """Rebuild the set called `name` from frames shaped like the plan's `label_sets` and `labels`
    (e.g. rows read back from the store), ordered by `ord`. Raises `ImportFailed` if it is not there."""
    rows = label_sets.filter(pl.col("name") == name)
    if rows.height == 0:
        known = ", ".join(sorted(label_sets["name"].to_list())) or "none"
        raise ImportFailed(f"No label set named '{name}' (known: {known})")
    head = rows.row(0, named=True)
    members = labels.filter(pl.col("label_set") == name)
    if "ord" in members.columns:
        members = members.sort("ord", nulls_last=True, maintain_order=True)
    document = {"name": name, "scope": head.get("scope") or "both", "description": head.get("description"),
                "source": head.get("source"),
                "labels": [{**{k: row.get(k) for k in ("name", "parent", "colour", "shortcut", "description")},
                            **({"aliases": list(row["aliases"])} if row.get("aliases") else {})}
                           for row in members.iter_rows(named=True)]}
    return parse_label_set(document, f"label set '{name}'")
