"""What an import or export did, per file and tier: how many labels were read, written and left out, and why.

Every reader and writer of annotation files fills one `TransferReport`, so that no label is ever lost
without a line saying so. `Origin` names where a label came from (file, tier or line, item) in the words a
user of the other tool would use; `Reading` is what a reader hands back.
"""
from __future__ import annotations

import gc
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from storage.errors import ImportFailed

if TYPE_CHECKING:
    import polars as pl

SHOWN_ITEMS = 20  # items listed one by one; the rest are counted
SHOWN_PROBLEMS = 5  # problems a refusal names


def refused(problems: list[str], fixes: Iterable[str] = ()) -> ImportFailed:
    """The one-line refusal of an import: the first problems (each 'where: what'), how many more, and then
    each way of lifting it once, however many labels it would lift (say '12 labels lie outside their
    stimulus: add --clip to cut them to it'), never once per label."""
    more = f" (and {len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS else ""
    advice = "".join(f". {fix}" for fix in dict.fromkeys(fixes))
    return ImportFailed(f"Import failed, nothing was written: {'; '.join(problems[:SHOWN_PROBLEMS])}{more}{advice}")


def bad_item(origin: Origin, found: str, expected: str) -> ImportFailed:
    """A refusal for one item of a file: where it is, what was found and what was expected."""
    return refused([f"{origin}: found {found}; expected {expected}"])


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Hold Python's cycle collector while a corpus is read or written: the 100,000 rows and parsed
    elements alive at once hold no cycles, yet each collection walks all of them, which tripled the time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Origin(NamedTuple):
    """Where a label came from: `tier` for tiered formats, `line` for line formats, `item` counts from 1.
    (A tuple: a reader makes one per label, 100,000 of them for a corpus.)"""

    file: str
    tier: str | None = None
    item: int | None = None
    line: int | None = None

    def __str__(self) -> str:
        parts = [self.file if self.line is None else f"{self.file}:{self.line}"]
        if self.tier is not None:
            parts.append(f"tier '{self.tier}'")
        if self.item is not None:
            parts.append(f"item {self.item}")
        return ", ".join(parts)


def describe(row: dict[str, Any]) -> str:
    """A label as a user would recognise it: its text and times."""
    text = repr(row.get("label") or "")
    if row.get("start_s") is None:
        return f"{text} (whole stimulus)"
    if row["start_s"] == row["end_s"]:
        return f"{text} at {row['start_s']:.3f} s"
    return f"{text} {row['start_s']:.3f}-{row['end_s']:.3f} s"


@dataclass
class TierTally:
    read: int = 0
    written: int = 0
    left_out: Counter = field(default_factory=Counter)   # reason -> labels left out for it
    fields_dropped: Counter = field(default_factory=Counter)  # field name -> labels written without it
    changed: Counter = field(default_factory=Counter)   # how -> labels written changed that way (cut to a clip)
    gaps: int = 0   # empty intervals of a Praat tier: stretches left unlabelled, not labels


@dataclass
class TransferReport:
    """Per (file, tier) counts and the items left out, for one import or export."""

    tallies: dict[tuple[str, str], TierTally] = field(default_factory=dict)
    left_out_items: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def tally(self, file: str, tier: str | None) -> TierTally:
        key = (file, tier or "")
        found = self.tallies.get(key)
        if found is None:
            found = self.tallies[key] = TierTally()
        return found

    def count_read(self, file: str, tier: str | None, n: int = 1) -> None:
        self.tally(file, tier).read += n

    def count_written(self, file: str, tier: str | None, n: int = 1) -> None:
        self.tally(file, tier).written += n

    def leave_out(self, origin: Origin, reason: str, what: str = "", n: int = 1) -> None:
        """Record `n` labels at `origin` left out for `reason` (`what` describes the label)."""
        self.tally(origin.file, origin.tier).left_out[reason] += n
        if len(self.left_out_items) < SHOWN_ITEMS:
            self.left_out_items.append(f"{origin}{': ' + what if what else ''}: {reason}")

    def change(self, origin: Origin, how: str) -> None:
        """Record a label written changed (`how` says in what way)."""
        self.tally(origin.file, origin.tier).changed[how] += 1

    def drop_fields(self, file: str, tier: str | None, fields: Iterable[str]) -> None:
        counter = self.tally(file, tier).fields_dropped
        for name in fields:
            counter[name] += 1

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def merge(self, other: TransferReport) -> None:
        for key, theirs in other.tallies.items():
            mine = self.tallies.setdefault(key, TierTally())
            mine.read += theirs.read
            mine.written += theirs.written
            mine.left_out.update(theirs.left_out)
            mine.fields_dropped.update(theirs.fields_dropped)
            mine.changed.update(theirs.changed)
            mine.gaps += theirs.gaps
        room = SHOWN_ITEMS - len(self.left_out_items)
        self.left_out_items += other.left_out_items[:max(room, 0)]
        for text in other.notes:
            self.note(text)

    @property
    def read(self) -> int:
        return sum(t.read for t in self.tallies.values())

    @property
    def written(self) -> int:
        return sum(t.written for t in self.tallies.values())

    @property
    def left_out(self) -> int:
        return sum(sum(t.left_out.values()) for t in self.tallies.values())

    def lines(self) -> list[str]:
        """The report as text: one line per file and tier, the items left out, notes, and the totals."""
        out = []
        reading = self.read > 0 or self.written == 0  # an export reads no file: it says only what it wrote
        for (file, tier), t in sorted(self.tallies.items()):
            where = f"{file}, tier '{tier}'" if tier else file
            text = f"{where}: read {t.read}, wrote {t.written}" if reading else f"{where}: wrote {t.written}"
            if t.gaps:
                text += f" (and {t.gaps} empty intervals, Praat's gaps between labels)"
            if t.left_out:
                reasons = "; ".join(f"{n} {reason}" for reason, n in sorted(t.left_out.items()))
                text += f", left out {sum(t.left_out.values())} ({reasons})"
            if t.changed:
                text += ", " + "; ".join(f"{n} {how}" for how, n in sorted(t.changed.items()))
            if t.fields_dropped:
                text += ", written without " + ", ".join(f"{name} ({n})" for name, n in sorted(t.fields_dropped.items()))
            out.append(text)
        out += [f"left out: {item}" for item in self.left_out_items]
        if self.left_out > len(self.left_out_items):
            out.append(f"left out: ... {self.left_out - len(self.left_out_items)} more, counted above")
        out += [f"note: {text}" for text in self.notes]
        total = f"read {self.read}, wrote {self.written}" if reading else f"wrote {self.written}"
        out.append(f"total: {total}, left out {self.left_out}")
        return out


# Where each label was read (the fields of its `Origin`), as the columns of a reading given as a table
ORIGIN_COLUMNS = {"file": "origin_file", "tier": "origin_tier", "item": "origin_item", "line": "origin_line"}


class Reading:
    """What a reader found: its labels, the report so far, controlled vocabularies (label set -> [(label,
    description)]) the file defines, and the names of the media files it links. The labels are either rows
    (one dict each, with an `origin`) or, from a reader of tables, `labels`: a frame of the row fields, `meta`
    as the JSON text the store keeps, and `ORIGIN_COLUMNS`; `rows` then makes the dicts only when asked."""

    def __init__(self, rows: list[dict[str, Any]] | None = None, report: TransferReport | None = None,
                 vocabularies: dict[str, list[tuple[str, str | None]]] | None = None,
                 media: list[str] | None = None, *, labels: pl.DataFrame | None = None) -> None:
        self._rows = rows if rows is not None or labels is not None else []
        self.labels = labels
        self.report = report if report is not None else TransferReport()
        self.vocabularies = vocabularies if vocabularies is not None else {}
        self.media = media if media is not None else []

    @property
    def rows(self) -> list[dict[str, Any]]:
        if self._rows is None:
            self._rows = []
            names = [c for c in self.labels.columns if c not in ORIGIN_COLUMNS.values()]
            where = list(ORIGIN_COLUMNS.values())
            for values, origin in zip(self.labels.select(names).iter_rows(),
                                      self.labels.select(where).iter_rows()):
                row = dict(zip(names, values))
                if row.get("meta") is not None:
                    row["meta"] = json.loads(row["meta"])
                row["origin"] = Origin(*origin)
                self._rows.append(row)
        return self._rows

    @rows.setter
    def rows(self, rows: list[dict[str, Any]]) -> None:
        self._rows, self.labels = rows, None


def merged(readings: list[Reading]) -> Reading:
    """The readings of several files as one: their labels one after the other (as a table when every reading
    has one, else as rows), reports merged, vocabularies and media files in file order."""
    import polars as pl

    if all(found.labels is not None for found in readings) and readings:
        reading = Reading(labels=pl.concat([found.labels for found in readings], how="vertical_relaxed"))
    else:
        reading = Reading([row for found in readings for row in found.rows])
    for found in readings:
        reading.report.merge(found.report)
        reading.media += found.media
        for name, entries in found.vocabularies.items():
            reading.vocabularies.setdefault(name, []).extend(entries)
    return reading
