"""Annotations, their history, and label sets: every edit is written with its event in one transaction.

Each public edit commits before it returns, so an edit a caller has seen succeed survives a crash (DuckDB
makes a commit durable in its write-ahead log); a write the database refuses raises `StoreWriteError`.
An annotation is never removed: delete sets `deleted_at` and restore clears it, so undo and history always
have the row to point at. `insert_annotations`, `write_events` and `upsert_label_sets` are the one write
path of labels, history and label sets, shared by these edits and by release imports.
"""
from __future__ import annotations

import json
import re
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from functools import cache
from typing import TYPE_CHECKING

import duckdb

from storage import lookups
from storage.errors import ImportFailed, StoreWriteError, ThinsliceError
from storage.store import Store

if TYPE_CHECKING:  # polars is loaded by the first write, not by the window reading labels before it shows
    import polars as pl

# Fields an edit may change; the event's before/after JSON holds these plus `revision` and `deleted`.
EDITABLE_FIELDS = ("label_set", "label", "start_s", "end_s", "value", "note", "media_role")
_COLUMNS = ("id, stimulus_id, annotator, label_set, label, start_s, end_s, value, note, media_role, revision,"
            " created_at, updated_at, deleted_at")
SCOPES = ("interval", "whole", "both")
_REMEMBERED_ROWS = 1024
# Two labels with the same natural key are the same label: an import never adds one twice. The media role is
# part of it (two speakers laughing at once are two labels), and so is the value, which holds what an AgentViSS
# scene label is attached to (a role's name or `turn:N`, see app/page_labels.py).
NATURAL_KEY = ("stimulus_id", "annotator", "label_set", "label", "start_s", "end_s", "value", "media_role")
NEW_ROW_COLUMNS = ("stimulus_id", "annotator", "label_set", "label", "start_s", "end_s", "value", "note",
                   "media_role", "meta")  # meta: JSON of what another tool said
SET_ROW_COLUMNS = ("name", "scope", "description", "source")
LABEL_ROW_COLUMNS = ("label_set", "name", "parent", "colour", "shortcut", "description", "ord", "aliases")


@cache
def new_row_schema() -> dict[str, Any]:
    """The polars schema of new labels (`NEW_ROW_COLUMNS`), as `insert_annotations` takes them."""
    import polars as pl

    return dict(zip(NEW_ROW_COLUMNS, (pl.Int64, pl.String, pl.String, pl.String, pl.Float64, pl.Float64,
                                      pl.String, pl.String, pl.String, pl.String)))


@cache
def _set_row_schema() -> dict[str, Any]:
    import polars as pl

    return dict(zip(SET_ROW_COLUMNS, (pl.String,) * 4))


@cache
def _label_row_schema() -> dict[str, Any]:
    import polars as pl

    return dict(zip(LABEL_ROW_COLUMNS, (pl.String,) * 6 + (pl.Int32, pl.List(pl.String))))


class AnnotationError(ThinsliceError):
    """An edit that cannot be made as asked (unknown row, bad times, someone else's label)."""


class _RowChanged(Exception):
    """A row is no longer as this store last wrote it."""


@dataclass(frozen=True)
class Annotation:
    """One label on a stimulus: a time range [start_s, end_s] or, with both None, the whole stimulus."""

    id: int
    stimulus_id: int
    annotator: str
    label_set: str
    label: str | None
    start_s: float | None
    end_s: float | None
    value: str | None = None
    note: str | None = None
    media_role: str | None = None
    revision: int = 1
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None

    @property
    def is_whole(self) -> bool:
        return self.start_s is None

    @property
    def is_point(self) -> bool:
        """A moment rather than a span (a Praat point, an ELAN zero-length annotation, an Audacity point)."""
        return self.start_s is not None and self.start_s == self.end_s

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    def state(self) -> dict[str, Any]:
        """The editable state as stored in an event's before/after JSON."""
        state: dict[str, Any] = {name: getattr(self, name) for name in EDITABLE_FIELDS}
        state["revision"] = self.revision
        state["deleted"] = self.deleted
        return state


@dataclass(frozen=True)
class AnnotationEvent:
    """One entry of the history: who did what to which annotation, and its state before and after."""

    id: int
    annotation_id: int
    stimulus_id: int
    annotator: str
    happened_at: datetime
    action: str  # create, update, delete, restore (whatever made it: an edit, a rename, an import)
    before: dict[str, Any] | None
    after: dict[str, Any] | None


@dataclass(frozen=True)
class DatasetRef:
    """What export and import need to know about a dataset."""

    id: int
    name: str
    benchmark: str
    root: str
    source: str | None


@dataclass(frozen=True)
class LabelSet:
    id: int
    name: str
    scope: str
    description: str | None
    source: str | None


@dataclass(frozen=True)
class Label:
    """A label of a set; `depth` is its level in the set's hierarchy (0 for a top-level label)."""

    id: int
    label_set: str
    name: str
    parent: str | None
    colour: str | None
    shortcut: str | None
    description: str | None
    ord: int
    depth: int = 0
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelSetSnapshot:
    """A label set and all its labels as they were, so an edit of the set can be undone exactly."""

    name: str
    scope: str
    description: str | None
    source: str | None
    labels: tuple[Label, ...]


class WrittenLabels(Sequence[Annotation]):
    """Labels as a write handed them back, in id order: one Arrow table of `_COLUMNS`. An `Annotation` is made
    only for a label looked at (all of them once iterated), so a 100,000-label import builds none that nothing
    reads; `ids` and `by_stimulus` answer from the table."""

    def __init__(self, table: Any) -> None:
        self._table = table
        self._items: list[Annotation] | None = None

    def __len__(self) -> int:
        return self._table.num_rows

    def __getitem__(self, index: Any) -> Any:
        if self._items is not None:
            return self._items[index]
        if isinstance(index, slice):
            import pyarrow as pa

            return WrittenLabels(self._table.take(pa.array(range(len(self))[index], pa.int64())))
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return _annotations(self._table.slice(index % len(self), 1))[0]

    def __iter__(self) -> Iterator[Annotation]:
        if self._items is None:
            self._items = _annotations(self._table)
        return iter(self._items)

    def ids(self) -> list[int]:
        return self._table.column("id").to_pylist()

    def by_stimulus(self) -> dict[int, WrittenLabels]:
        """The labels of each stimulus, in the order each stimulus is first met."""
        import polars as pl

        groups = pl.DataFrame({"stimulus": pl.from_arrow(self._table.column("stimulus_id"))}).with_row_index() \
            .group_by("stimulus", maintain_order=True).agg("index")
        # the rows put in stimulus order by one take (none when they are in that order already, as a file's
        # labels usually are), each stimulus's share then a slice of them
        order = groups["index"].explode()
        table = self._table if order.equals(pl.Series(range(len(order)), dtype=order.dtype)) \
            else self._table.take(order.to_arrow())
        starts = [0, *groups["index"].list.len().cum_sum().to_list()]
        return {int(stimulus): WrittenLabels(table.slice(start, end - start))
                for stimulus, start, end in zip(groups["stimulus"].to_list(), starts, starts[1:])}


def _annotations(table: Any) -> list[Annotation]:
    """An Arrow table of `_COLUMNS` rows as `Annotation`s."""
    return list(map(Annotation, *(_python_values(table.column(i)) for i in range(table.num_columns))))


def _row_to_annotation(row: Sequence[Any]) -> Annotation:
    return Annotation(int(row[0]), int(row[1]), row[2], row[3], row[4], row[5], row[6], row[7], row[8],
                      row[9], int(row[10]), row[11], row[12], row[13])


def _as_updated(before: Annotation, changes: Mapping[str, Any], now: datetime) -> Annotation | None:
    """The row as `UPDATE ... SET changes, revision + 1, updated_at = current_timestamp` leaves it, without
    reading it back; None when a new value's stored form is not certain (anything but text for text
    columns and numbers for times), so the caller reads the row instead."""
    values = dict(changes)
    for name, value in changes.items():
        if value is None or (isinstance(value, str) and name not in ("start_s", "end_s")):
            continue
        if name in ("start_s", "end_s") and isinstance(value, (int, float)) and not isinstance(value, bool):
            values[name] = float(value)   # a DOUBLE column hands back a float
            continue
        return None
    return replace(before, **values, revision=before.revision + 1, updated_at=now)


def meta_texts(metas: Sequence[Mapping[str, Any] | None]) -> list[str | None]:
    """Each label's `meta` as JSON (None for none), `json.dumps` called once per distinct meta: the labels of
    one tier of a file carry equal ones, often the very same object."""
    texts: dict[tuple[tuple[str, type, str], ...], str] = {}
    seen: dict[int, str] = {}   # by the object itself: `metas` holds it, so its id is its own while this runs
    out: list[str | None] = []
    for meta in metas:
        if not meta:
            out.append(None)
            continue
        text = seen.get(id(meta))
        if text is None:
            # by type and repr, not by equality: 1 and True, 0.0 and -0.0 are equal, and JSON writes them differently
            key = tuple((name, type(value), repr(value)) for name, value in meta.items())
            text = texts.get(key)
            if text is None:
                text = texts[key] = json.dumps(meta)
            seen[id(meta)] = text
        out.append(text)
    return out


def _check_names(changes: Mapping[str, Any]) -> None:
    """Refuse an edit that would give a label a name the importers' rule refuses (a control character in a
    label or media role: `storage.validation.NAME_COLUMNS` and `CONTROL_CHARACTERS`, the one statement)."""
    # imported here: storage.validation loads polars, which the window must not load before its first paint
    from storage.validation import CONTROL_CHARACTERS, NAME_COLUMNS

    for name in NAME_COLUMNS["annotations"]:
        value = changes.get(name)
        if isinstance(value, str) and re.search(CONTROL_CHARACTERS, value):
            raise AnnotationError(f"A label's {name} must be text without control characters, not {value!r}.")


def check_label_times(start_s: float | None, end_s: float | None) -> None:
    """Refuse a label's times that break `storage.validation`'s rule for a span, in its wording."""
    from storage.validation import times_problem

    problem = times_problem(start_s, end_s, optional=True)
    if problem is not None:
        shown = "..".join("none" if t is None else f"{t:.3f}" for t in (start_s, end_s))
        raise AnnotationError(f"A label needs {problem}; found {shown}.")


class AnnotationStore:
    """Typed reads and durable writes of annotations, their events, and label sets on one `Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        # Rows as this store last wrote them: the next edit of one of them can skip reading it back first
        # (see `_update_as_known`; a row changed elsewhere since is noticed and read as usual).
        self._written: dict[int, Annotation] = {}

    # -- reading ---------------------------------------------------------------------------------
    def get(self, annotation_id: int) -> Annotation:
        row = self.store.cursor().execute(f"SELECT {_COLUMNS} FROM annotation WHERE id = ?",
                                          [annotation_id]).fetchone()
        if row is None:
            raise AnnotationError(f"There is no annotation {annotation_id}.")
        return _row_to_annotation(row)

    def for_stimulus(self, stimulus_id: int, *, annotator: str | None = None, label_set: str | None = None,
             include_deleted: bool = False) -> list[Annotation]:
        """A stimulus's annotations ordered by start (whole-stimulus labels first), optionally filtered."""
        where, params = ["stimulus_id = ?"], [stimulus_id]
        if annotator is not None:
            where.append("annotator = ?")
            params.append(annotator)
        if label_set is not None:
            where.append("label_set = ?")
            params.append(label_set)
        if not include_deleted:
            where.append("deleted_at IS NULL")
        rows = self.store.cursor().execute(
            f"SELECT {_COLUMNS} FROM annotation WHERE {' AND '.join(where)}"
            " ORDER BY start_s NULLS FIRST, end_s, id", params).fetchall()
        return [_row_to_annotation(r) for r in rows]

    def for_stimuli(self, stimulus_ids: Iterable[int] | None = None, *, dataset_id: int | None = None,
                  annotator: str | None = None, label_set: str | None = None,
                  label: str | None = None, media_role: str | None = None) -> list[Annotation]:
        """Live annotations of several stimuli (or of a whole dataset), ordered by stimulus and start."""
        where, params = ["a.deleted_at IS NULL"], []
        if stimulus_ids is not None:
            ids = [int(i) for i in stimulus_ids]
            if not ids:
                return []
            where.append(f"a.stimulus_id IN ({', '.join('?' * len(ids))})")
            params += ids
        for column, value in (("s.dataset_id", dataset_id), ("a.annotator", annotator),
                              ("a.label_set", label_set), ("a.label", label), ("a.media_role", media_role)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        cols = ", ".join(f"a.{c.strip()}" for c in _COLUMNS.split(","))
        rows = self.store.cursor().execute(
            f"SELECT {cols} FROM annotation a JOIN stimulus s ON s.id = a.stimulus_id"
            f" WHERE {' AND '.join(where)} ORDER BY a.stimulus_id, a.start_s NULLS FIRST, a.end_s, a.id",
            params).fetchall()
        return [_row_to_annotation(r) for r in rows]

    def export_rows(self, stimulus_ids: Iterable[int], *, annotator: str | None = None,
                    label_set: str | None = None, label: str | None = None,
                    media_role: str | None = None) -> list[dict[str, Any]]:
        """Live labels of the stimuli as plain rows keyed by the dataset's own stimulus id (the sidecar shape),
        ordered by stimulus, start and id. Fetched as one frame: exporting 100,000 labels stays quick."""
        ids = [int(i) for i in stimulus_ids]
        if not ids:
            return []
        where, params = ["a.deleted_at IS NULL", f"a.stimulus_id IN ({', '.join('?' * len(ids))})"], list(ids)
        for column, value in (("a.annotator", annotator), ("a.label_set", label_set), ("a.label", label),
                              ("a.media_role", media_role)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        frame = self.store.cursor().sql(
            "SELECT s.external_id AS stimulus, a.annotator, a.label_set, a.label, a.start_s, a.end_s, a.value,"
            " a.note, a.media_role, a.meta FROM annotation a JOIN stimulus s ON s.id = a.stimulus_id"
            f" WHERE {' AND '.join(where)} ORDER BY s.external_id, a.start_s NULLS FIRST, a.end_s, a.id",
            params=params).pl()
        rows = frame.to_dicts()
        for row in rows:
            row["meta"] = json.loads(row["meta"]) if row["meta"] else None
        return rows

    def annotators(self, stimulus_id: int | None = None) -> list[str]:
        """Everyone who has a live annotation (on this stimulus, if given), sorted."""
        sql = "SELECT DISTINCT annotator FROM annotation WHERE deleted_at IS NULL"
        params: list[Any] = []
        if stimulus_id is not None:
            sql += " AND stimulus_id = ?"
            params.append(stimulus_id)
        return sorted(r[0] for r in self.store.cursor().execute(sql, params).fetchall())

    def history(self, *, stimulus_id: int | None = None, annotation_id: int | None = None,
                limit: int | None = None) -> list[AnnotationEvent]:
        """Events of one annotation or of every annotation on a stimulus, newest first."""
        if (stimulus_id is None) == (annotation_id is None):
            raise ValueError("give exactly one of stimulus_id or annotation_id")
        where = "e.annotation_id = ?" if annotation_id is not None else "a.stimulus_id = ?"
        sql = ("SELECT e.id, e.annotation_id, a.stimulus_id, e.annotator, e.happened_at, e.action, e.before,"
               " e.after FROM annotation_event e JOIN annotation a ON a.id = e.annotation_id"
               f" WHERE {where} ORDER BY e.id DESC")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self.store.cursor().execute(sql, [annotation_id if annotation_id is not None else stimulus_id])
        return [AnnotationEvent(int(r[0]), int(r[1]), int(r[2]), r[3], r[4], r[5],
                                json.loads(r[6]) if r[6] is not None else None,
                                json.loads(r[7]) if r[7] is not None else None) for r in rows.fetchall()]

    def stimulus_durations(self, stimulus_ids: Iterable[int]) -> dict[int, float]:
        """The longest known media duration of each stimulus (stimuli without one are left out)."""
        ids = [int(i) for i in stimulus_ids]
        if not ids:
            return {}
        rows = self.store.cursor().execute(
            f"SELECT stimulus_id, max(duration_s) FROM media WHERE stimulus_id IN ({', '.join('?' * len(ids))})"
            " AND duration_s IS NOT NULL GROUP BY stimulus_id", ids).fetchall()
        return {int(r[0]): float(r[1]) for r in rows}

    def dataset(self, name: str | None) -> DatasetRef:
        """The dataset called `name`, or the only one when `name` is None; a clear error otherwise."""
        try:
            found = lookups.dataset_named(self.store.cursor(), name)
        except lookups.DatasetNotFound as exc:
            raise AnnotationError(str(exc)) from None
        return DatasetRef(found.id, found.name, found.benchmark, found.root, found.source)

    def stimulus_ids(self, dataset_id: int, *, external_id: str | None = None, split: str | None = None,
                     kind: str | None = None) -> dict[int, str]:
        """Store id -> the dataset's own id of the dataset's stimuli (optionally filtered), in external-id order."""
        return lookups.dataset_stimuli(self.store.cursor(), dataset_id, external_id=external_id, split=split,
                                       kind=kind)

    def media_paths(self, dataset_id: int) -> list[str]:
        """Media paths of a dataset as stored (relative to its root unless absolute)."""
        rows = self.store.cursor().execute(
            "SELECT DISTINCT m.path FROM media m JOIN stimulus s ON s.id = m.stimulus_id WHERE s.dataset_id = ?",
            [dataset_id]).fetchall()
        return [r[0] for r in rows]

    # -- writing ---------------------------------------------------------------------------------
    def know(self, rows: Iterable[Annotation]) -> None:
        """Take `rows` as read from the store just now (say, a stimulus shown in the window), so the next
        edit of one of them is written without reading it back first (see `_update_as_known`)."""
        self._remember(list(rows))

    def create(self, stimulus_id: int, annotator: str, label_set: str, label: str | None,
               start_s: float | None = None, end_s: float | None = None, *, value: str | None = None,
               note: str | None = None, media_role: str | None = None) -> Annotation:
        """Add a label (time range, or whole stimulus when start and end are None); durable on return."""
        fields = {"label_set": label_set, "label": label, "start_s": start_s, "end_s": end_s,
                  "value": value, "note": note, "media_role": media_role}
        return self.create_many(stimulus_id, annotator, [fields])[0]

    def create_many(self, stimulus_id: int | None, annotator: str, rows: Sequence[Mapping[str, Any]] | pl.DataFrame,
                    *, skip_existing: bool = False) -> list[Annotation]:
        """Add several labels in one transaction (see `insert_many`) and return each as an `Annotation`."""
        return list(self.insert_many(stimulus_id, annotator, rows, skip_existing=skip_existing))

    def insert_many(self, stimulus_id: int | None, annotator: str, rows: Sequence[Mapping[str, Any]] | pl.DataFrame,
                    *, skip_existing: bool = False) -> WrittenLabels:
        """Add several labels in one transaction. A row may carry its own `stimulus_id` and `annotator`; a
        frame (an import's labels) carries every `NEW_ROW_COLUMNS` field itself, `meta` as JSON text.

        With `skip_existing` (an import), a row whose natural key (`NATURAL_KEY`) a live annotation or an
        earlier row already has is left out, so importing the same file twice adds nothing. Returns the labels
        written as `WrittenLabels`, which makes an `Annotation` only for a label looked at."""
        import polars as pl

        if isinstance(rows, pl.DataFrame):
            frame = rows
        else:  # column by column: a list per field, not a mapping per row
            columns = {"stimulus_id": [row.get("stimulus_id", stimulus_id) for row in rows],
                       "annotator": [row.get("annotator") or annotator for row in rows],
                       **{name: [row.get(name) for row in rows] for name in EDITABLE_FIELDS},
                       "meta": meta_texts([row.get("meta") for row in rows])}
            frame = pl.DataFrame(columns, schema=new_row_schema())
        with writing(self.store, "The new label" if len(rows) == 1 else f"{len(rows)} new labels") as cur:
            created = insert_annotations(cur, frame, skip_existing=skip_existing)
        self._remember(created)
        return created

    def update(self, annotation_id: int, annotator: str, **changes: Any) -> Annotation:
        """Change fields of a label (move, resize, relabel, value, note); durable on return."""
        return self.update_many(annotator, [(annotation_id, changes)])[0]

    def update_many(self, annotator: str, edits: Sequence[tuple[int, Mapping[str, Any]]]) -> list[Annotation]:
        """Apply several updates in one transaction; each bumps the row's revision and writes an event."""
        for _, changes in edits:
            unknown = set(changes) - set(EDITABLE_FIELDS)
            if unknown:
                raise AnnotationError(f"Cannot edit {', '.join(sorted(unknown))} of an annotation.")
            _check_names(changes)
        if not annotator:
            raise AnnotationError("Every edit needs an annotator name.")
        if len(edits) == 1:
            quick = self._update_as_known(annotator, edits[0][0], edits[0][1])
            if quick is not None:
                return [quick]
        results, events = [], []
        with writing(self.store, "The label change" if len(edits) == 1 else f"{len(edits)} label changes") as cur:
            for annotation_id, changes in edits:
                before, now = self._get_with_time(cur, annotation_id)
                merged = {**before.state(), **changes}
                check_label_times(merged["start_s"], merged["end_s"])
                if all(getattr(before, k) == v for k, v in changes.items()):
                    results.append(before)
                    continue
                sets = ", ".join(f"{k} = ?" for k in changes)
                cur.execute(f"UPDATE annotation SET {sets}, revision = revision + 1,"
                            " updated_at = current_timestamp WHERE id = ?", [*changes.values(), annotation_id])
                after = _as_updated(before, changes, now) or self._get(cur, annotation_id)
                events.append((annotation_id, annotator, "update", before.state(), after.state()))
                results.append(after)
            write_events(cur, events)
        self._remember(results)
        return results

    def _update_as_known(self, annotator: str, annotation_id: int, changes: Mapping[str, Any]) -> Annotation | None:
        """One update of a row as this store last wrote or read it, without reading it first (durable on return).

        The row is changed, and its event written, only if it still is as known: every edit, rename
        and delete bumps `revision` and `updated_at`. None when this cannot be done (row unknown or changed
        since, no change, values whose stored form is uncertain); the caller then takes the usual path."""
        known = self._written.get(annotation_id)
        if known is None or all(getattr(known, k) == v for k, v in changes.items()):
            return None
        merged = {**known.state(), **changes}
        try:
            check_label_times(merged["start_s"], merged["end_s"])
        except AnnotationError:
            return None   # the usual path reads the row and reports the problem against it
        after = _as_updated(known, changes, known.updated_at or datetime.min)
        if after is None:
            return None
        sets = ", ".join(f"{k} = ?" for k in changes)
        try:
            with writing(self.store, "The label change") as cur:
                changed = cur.execute(
                    f"UPDATE annotation SET {sets}, revision = revision + 1, updated_at = current_timestamp"
                    " WHERE id = ? AND revision = ? AND updated_at IS NOT DISTINCT FROM ?"
                    " AND label_set IS NOT DISTINCT FROM ? AND label IS NOT DISTINCT FROM ?",
                    [*changes.values(), annotation_id, known.revision, known.updated_at, known.label_set,
                     known.label]).fetchall()[0][0]
                if not changed:
                    raise _RowChanged
                # The event's time is the transaction's current_timestamp, which the row got as updated_at.
                now = cur.execute(
                    "INSERT INTO annotation_event (annotation_id, annotator, action, before, after)"
                    " VALUES (?, ?, 'update', ?, ?) RETURNING happened_at",
                    [annotation_id, annotator, json.dumps(known.state()), json.dumps(after.state())]).fetchall()[0][0]
        except _RowChanged:
            self._written.pop(annotation_id, None)
            return None
        after = replace(after, updated_at=now)
        self._remember([after])
        return after

    def _remember(self, written: Sequence[Annotation]) -> None:
        # only the newest rows can stay: remembering all of a 100,000-label import, then forgetting them one
        # by one from the front of the dict, took seconds (and only they are made into `Annotation`s)
        for item in written[-_REMEMBERED_ROWS:]:
            self._written.pop(item.id, None)
            self._written[item.id] = item
        while len(self._written) > _REMEMBERED_ROWS:
            del self._written[next(iter(self._written))]

    def delete(self, annotation_id: int, annotator: str) -> Annotation:
        return self.delete_many([annotation_id], annotator)[0]

    def delete_many(self, annotation_ids: Iterable[int], annotator: str) -> list[Annotation]:
        """Mark labels deleted in one transaction (already deleted ones are left as they are)."""
        return self._set_deleted(annotation_ids, annotator, deleted=True)

    def restore(self, annotation_id: int, annotator: str) -> Annotation:
        return self.restore_many([annotation_id], annotator)[0]

    def restore_many(self, annotation_ids: Iterable[int], annotator: str) -> list[Annotation]:
        """Bring deleted labels back in one transaction."""
        return self._set_deleted(annotation_ids, annotator, deleted=False)

    def _set_deleted(self, annotation_ids: Iterable[int], annotator: str, *, deleted: bool) -> list[Annotation]:
        """Delete or restore in one statement: the rows as changed come back from the UPDATE itself (the state
        before differs only in `revision` and `deleted`), so nothing is read around the write."""
        ids = [int(i) for i in annotation_ids]
        what = ("Deleting" if deleted else "Restoring") + (" the label" if len(ids) == 1 else f" {len(ids)} labels")
        stamp = "current_timestamp" if deleted else "NULL"
        marks = ", ".join("?" * len(ids))
        with writing(self.store, what) as cur:
            changed = [_row_to_annotation(r) for r in cur.execute(
                f"UPDATE annotation SET deleted_at = {stamp}, revision = revision + 1, updated_at = current_timestamp"
                f" WHERE id IN ({marks}) AND (deleted_at IS NULL) = ? RETURNING {_COLUMNS}",
                [*ids, deleted]).fetchall()] if ids else []
            by_id = {a.id: a for a in changed}
            unchanged = [i for i in ids if i not in by_id]
            if unchanged:  # already as asked, or not there at all
                found = {a.id: a for a in (_row_to_annotation(r) for r in cur.execute(
                    f"SELECT {_COLUMNS} FROM annotation WHERE id IN ({', '.join('?' * len(unchanged))})",
                    unchanged).fetchall())}
                missing = [i for i in unchanged if i not in found]
                if missing:
                    raise AnnotationError(f"There is no annotation {missing[0]}.")
                by_id.update(found)
            events = []
            for after in changed:
                before = {**after.state(), "revision": after.revision - 1, "deleted": not deleted}
                events.append((after.id, annotator, "delete" if deleted else "restore", before, after.state()))
            write_events(cur, events)
        results = [by_id[i] for i in ids]
        self._remember(results)
        return results

    @staticmethod
    def _get(cur: duckdb.DuckDBPyConnection, annotation_id: int) -> Annotation:
        rows = cur.execute(f"SELECT {_COLUMNS} FROM annotation WHERE id = ?", [annotation_id]).fetchall()
        if not rows:
            raise AnnotationError(f"There is no annotation {annotation_id}.")
        return _row_to_annotation(rows[0])

    @staticmethod
    def _get_with_time(cur: duckdb.DuckDBPyConnection, annotation_id: int) -> tuple[Annotation, datetime]:
        """The row and the transaction's `current_timestamp` as a TIMESTAMP column stores it."""
        rows = cur.execute(f"SELECT {_COLUMNS}, CAST(current_timestamp AS TIMESTAMP) FROM annotation WHERE id = ?",
                           [annotation_id]).fetchall()
        if not rows:
            raise AnnotationError(f"There is no annotation {annotation_id}.")
        return _row_to_annotation(rows[0]), rows[0][-1]

    def _update_where(self, cur: duckdb.DuckDBPyConnection, annotator: str, where: str, params: list[Any],
                      changes: Mapping[str, Any]) -> list[Annotation]:
        """Set `changes` on every annotation matching `where` (deleted ones too, so a restore brings back a
        name that exists), each with its revision bumped and an 'update' event like any other edit."""
        rows = cur.execute(f"SELECT {_COLUMNS}, CAST(current_timestamp AS TIMESTAMP) FROM annotation WHERE {where}",
                           params).fetchall()
        if not rows:
            return []
        befores = [_row_to_annotation(r) for r in rows]
        now = rows[0][-1]
        sets = ", ".join(f"{k} = ?" for k in changes)
        cur.execute(f"UPDATE annotation SET {sets}, revision = revision + 1, updated_at = current_timestamp"
                    f" WHERE {where}", [*changes.values(), *params])
        afters = [replace(b, **changes, revision=b.revision + 1, updated_at=now) for b in befores]
        write_events(cur, [(a.id, annotator, "update", b.state(), a.state()) for b, a in zip(befores, afters)])
        return afters

    # -- label sets ------------------------------------------------------------------------------
    def label_sets(self) -> list[LabelSet]:
        rows = self.store.cursor().execute(
            "SELECT id, name, scope, description, source FROM label_set ORDER BY name").fetchall()
        return [LabelSet(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]

    def label_set(self, name: str) -> LabelSet | None:
        row = self.store.cursor().execute(
            "SELECT id, name, scope, description, source FROM label_set WHERE name = ?", [name]).fetchone()
        return LabelSet(int(row[0]), row[1], row[2], row[3], row[4]) if row else None

    def labels(self, label_set: str) -> list[Label]:
        """The labels of a set in hierarchy order: each parent followed by its children (depth-first)."""
        rows = self.store.cursor().execute(
            "SELECT l.id, s.name, l.name, l.parent, l.colour, l.shortcut, l.description, l.ord, l.aliases"
            " FROM label l JOIN label_set s ON s.id = l.label_set_id WHERE s.name = ? ORDER BY l.ord, l.id",
            [label_set]).fetchall()
        flat = [Label(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6], int(r[7]), 0, tuple(r[8] or ()))
                for r in rows]
        names = {label.name for label in flat}
        children: dict[str | None, list[Label]] = {}
        for label in flat:
            parent = label.parent if label.parent in names else None
            children.setdefault(parent, []).append(label)
        ordered: list[Label] = []

        def visit(parent: str | None, depth: int) -> None:
            for label in children.get(parent, []):
                if any(seen.name == label.name for seen in ordered):
                    continue  # a cycle in hand-edited data: show each label once
                ordered.append(Label(label.id, label.label_set, label.name, label.parent, label.colour,
                                     label.shortcut, label.description, label.ord, depth, label.aliases))
                visit(label.name, depth + 1)

        visit(None, 0)
        return ordered

    def snapshot_label_set(self, name: str) -> LabelSetSnapshot | None:
        """Everything of the set called `name` (None when there is none), for `restore_label_set`."""
        found = self.label_set(name)
        if found is None:
            return None
        return LabelSetSnapshot(found.name, found.scope, found.description, found.source, tuple(self.labels(name)))

    def restore_label_set(self, name: str, snapshot: LabelSetSnapshot | None) -> None:
        """Make the set called `name` exactly `snapshot` again (None: no such set), in one transaction.
        Refused, changing nothing, when that would drop a label (or the set) live annotations use."""
        with writing(self.store, f"The label set '{name}'") as cur:
            kept = {label.name for label in snapshot.labels} if snapshot is not None else set()
            stored = {r[0] for r in cur.execute("SELECT l.name FROM label l JOIN label_set s ON s.id = l.label_set_id"
                                                " WHERE s.name = ?", [name]).fetchall()}
            for gone in sorted(stored - kept):
                _refuse_if_used(cur, name, gone)
            if snapshot is None:
                _refuse_if_used(cur, name, None)
            cur.execute("DELETE FROM label WHERE label_set_id IN (SELECT id FROM label_set WHERE name = ?)"
                        " AND NOT list_contains(?, name)", [name, sorted(kept)])
            if snapshot is None:
                cur.execute("DELETE FROM label_set WHERE name = ?", [name])
                return
            upsert_label_sets(cur, _set_frame([(snapshot.name, snapshot.scope, snapshot.description, snapshot.source)]),
                              _label_frame([(name, l.name, l.parent, l.colour, l.shortcut, l.description, l.ord,
                                             list(l.aliases)) for l in snapshot.labels]))

    def save_label_set(self, name: str, scope: str = "both", description: str | None = None,
                       source: str | None = None) -> LabelSet:
        """Create a label set, or change the scope/description/source of an existing one."""
        if scope not in SCOPES:
            raise AnnotationError(f"A label set's scope is one of {', '.join(SCOPES)}, not {scope!r}.")
        if not name.strip():
            raise AnnotationError("A label set needs a name.")
        with writing(self.store, f"The label set '{name}'") as cur:
            upsert_label_sets(cur, _set_frame([(name, scope, description, source)]), None)
        found = self.label_set(name)
        assert found is not None
        return found

    def rename_label_set(self, old: str, new: str, annotator: str) -> list[Annotation]:
        """Rename a set; annotations that use it follow the new name, each with an 'update' event stamped
        with `annotator`. Refused if `new` is empty or taken. Returns the annotations as renamed."""
        if not new.strip():
            raise AnnotationError("A label set needs a name.")
        _check_names({"label_set": new})
        if not annotator:
            raise AnnotationError("Every edit needs an annotator name.")
        if old == new:
            return []
        with writing(self.store, f"Renaming the label set '{old}'") as cur:
            if cur.execute("SELECT count(*) FROM label_set WHERE name = ?", [new]).fetchall()[0][0]:
                raise AnnotationError(f"There is already a label set called '{new}'.")
            self._set_id(cur, old)
            cur.execute("UPDATE label_set SET name = ? WHERE name = ?", [new, old])
            touched = self._update_where(cur, annotator, "label_set = ?", [old], {"label_set": new})
        self._remember(touched)
        return touched

    def delete_label_set(self, name: str) -> None:
        """Remove a set and its labels; refused while live annotations use it."""
        with writing(self.store, f"Deleting the label set '{name}'") as cur:
            _refuse_if_used(cur, name, None)
            cur.execute("DELETE FROM label WHERE label_set_id IN (SELECT id FROM label_set WHERE name = ?)", [name])
            cur.execute("DELETE FROM label_set WHERE name = ?", [name])

    def save_label(self, label_set: str, name: str, *, parent: str | None = None, colour: str | None = None,
                   shortcut: str | None = None, description: str | None = None, ord: int | None = None) -> None:
        """Create a label in a set, or replace the parent/colour/shortcut/description of an existing one
        (`ord` None keeps its place; a new label goes last)."""
        if not name.strip():
            raise AnnotationError("A label needs a name.")
        with writing(self.store, f"The label '{name}'") as cur:
            self._set_id(cur, label_set)
            upsert_label_sets(cur, None, _label_frame([(label_set, name, parent, colour, shortcut, description, ord,
                                                        None)]))

    def delete_label(self, label_set: str, name: str) -> None:
        """Remove a label; refused while live annotations use it. Its children move up to its parent."""
        with writing(self.store, f"Deleting the label '{name}'") as cur:
            _refuse_if_used(cur, label_set, name)
            set_id = self._set_id(cur, label_set)
            parent = cur.execute("SELECT parent FROM label WHERE label_set_id = ? AND name = ?",
                                 [set_id, name]).fetchall()
            cur.execute("UPDATE label SET parent = ? WHERE label_set_id = ? AND parent = ?",
                        [parent[0][0] if parent else None, set_id, name])
            cur.execute("DELETE FROM label WHERE label_set_id = ? AND name = ?", [set_id, name])

    def label_set_usage(self, label_set: str, label: str | None = None) -> int:
        """How many live annotations use the set (or, given `label`, that label of the set)."""
        return _usage(self.store.cursor(), label_set, label)

    def rename_label(self, label_set: str, old: str, new: str, annotator: str) -> list[Annotation]:
        """Rename a label; its children and the annotations that use it follow the new name, each annotation
        with an 'update' event stamped with `annotator`. Refused if `new` is empty or another label of the
        set already has it. Returns the annotations as renamed."""
        if not new.strip():
            raise AnnotationError("A label needs a name.")
        _check_names({"label": new})
        if not annotator:
            raise AnnotationError("Every edit needs an annotator name.")
        if old == new:
            return []
        with writing(self.store, f"Renaming the label '{old}'") as cur:
            set_id = self._set_id(cur, label_set)
            names = {r[0] for r in cur.execute("SELECT name FROM label WHERE label_set_id = ?", [set_id]).fetchall()}
            if old not in names:
                raise AnnotationError(f"The label set '{label_set}' has no label '{old}'.")
            if new in names:
                raise AnnotationError(f"The label set '{label_set}' already has a label '{new}'.")
            cur.execute("UPDATE label SET name = ? WHERE label_set_id = ? AND name = ?", [new, set_id, old])
            cur.execute("UPDATE label SET parent = ? WHERE label_set_id = ? AND parent = ?", [new, set_id, old])
            touched = self._update_where(cur, annotator, "label_set = ? AND label = ?", [label_set, old],
                                         {"label": new})
        self._remember(touched)
        return touched

    def reorder_labels(self, label_set: str, names: Sequence[str]) -> None:
        """Store the order of a set's labels: each named label's `ord` becomes its position in `names`
        (siblings are shown in `ord` order)."""
        with writing(self.store, f"The order of '{label_set}'") as cur:
            set_id = self._set_id(cur, label_set)
            cur.executemany("UPDATE label SET ord = ? WHERE label_set_id = ? AND name = ?",
                            [[position, set_id, name] for position, name in enumerate(names)])

    def load_label_set_file(self, path: Path | str) -> LabelSet:
        """Create or update a label set from a JSON file {name, scope, description, source, labels: [...]}."""
        return self.save_label_set_document(read_label_set_file(path), Path(path).name)

    def save_label_set_document(self, data: Mapping[str, Any], source_name: str = "") -> LabelSet:
        """Create or update a label set from a document `read_label_set_file` has checked."""
        with writing(self.store, f"The label set file {source_name}" if source_name else
                     f"The label set '{data['name']}'") as cur:
            upsert_label_sets(cur, _set_frame([(data["name"], data.get("scope", "both"), data.get("description"),
                                                data.get("source"))]),
                              _label_frame([(data["name"], label["name"], label.get("parent"), label.get("colour"),
                                             label.get("shortcut"), label.get("description"), index,
                                             label.get("aliases")) for index, label in enumerate(data["labels"])]))
        found = self.label_set(data["name"])
        assert found is not None
        return found

    def label_set_document(self, name: str) -> dict[str, Any] | None:
        """The set as the label-set file format holds it (None when there is no such set)."""
        found = self.label_set(name)
        if found is None:
            return None
        return {"name": found.name, "scope": found.scope, "description": found.description,
                "source": found.source,
                "labels": [{"name": l.name, "parent": l.parent, "colour": l.colour, "shortcut": l.shortcut,
                            "description": l.description, **({"aliases": list(l.aliases)} if l.aliases else {})}
                           for l in self.labels(name)]}

    def write_label_set_file(self, name: str, path: Path | str) -> None:
        """Write a set in the same JSON format `load_label_set_file` reads."""
        data = self.label_set_document(name)
        if data is None:
            raise AnnotationError(f"There is no label set '{name}'.")
        Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    @staticmethod
    def _set_id(cur: duckdb.DuckDBPyConnection, name: str) -> int:
        rows = cur.execute("SELECT id FROM label_set WHERE name = ?", [name]).fetchall()
        if not rows:
            raise AnnotationError(f"There is no label set '{name}'.")
        return int(rows[0][0])


def read_label_set_file(path: Path | str) -> dict[str, Any]:
    """The checked document of a label-set JSON file; `AnnotationError` names the file and the problem."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AnnotationError(f"Cannot read the label set file {path}: {exc}") from None
    if not isinstance(data, dict) or not data.get("name") or not isinstance(data.get("labels"), list):
        raise AnnotationError(f"{path} is not a label set file: expected an object with 'name' and 'labels'.")
    scope = data.get("scope", "both")
    if scope not in SCOPES:
        raise AnnotationError(f"{path}: scope must be one of {', '.join(SCOPES)}, not {scope!r}.")
    if data["labels"]:  # a set built in the app may still be empty; the format check wants labels
        from storage.importers.label_sets import parse_label_set

        try:
            parse_label_set(data, path.name)
        except ImportFailed as exc:
            problems = "; ".join(str(p) for p in exc.problems) or str(exc)
            raise AnnotationError(f"The label set file {path} was not loaded: {problems}") from None
    for index, label in enumerate(data["labels"]):
        if not isinstance(label, dict) or not label.get("name"):
            raise AnnotationError(f"{path}: label {index + 1} has no name.")
    return data


# -- the one write path of labels, label sets and history, shared by edits and release imports ----------
_after_commit: weakref.WeakKeyDictionary[Store, list[Callable[[], None]]] = weakref.WeakKeyDictionary()
_open_writes: weakref.WeakKeyDictionary[Store, int] = weakref.WeakKeyDictionary()
_open_writes_lock = threading.Lock()


def after_commit(store: Store, listener: Callable[[], None], *, remove: bool = False) -> None:
    """Call `listener` after every committed `writing` transaction on `store`, on the thread that wrote (a
    team session sends on every label write from here, whichever model, page or command made it); `remove`
    stops that."""
    listeners = _after_commit.setdefault(store, [])
    if remove:
        if listener in listeners:
            listeners.remove(listener)
    elif listener not in listeners:
        listeners.append(listener)


def writes_open(store: Store) -> int:
    """How many `writing` transactions on `store` are under way now (their history ids may be taken but
    not yet committed)."""
    return _open_writes.get(store, 0)


@contextmanager
def writing(store: Store, what: str, *, history: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """A transaction for a write described by `what` ("The label change"). Any database error (a read-only
    store, a full disk) rolls it back and comes out as one `StoreWriteError`, so a caller never mistakes a
    refused write for a saved one; our own refusals (`AnnotationError`) pass through as they are. Once it
    has committed, the store's `after_commit` listeners hear of it. Without `history` (the team's own
    tables) it writes no history event: it is not journaled, nor counted among the writes under way whose
    event ids may not be committed yet (`writes_open`)."""
    opened = 1 if history else 0
    with _open_writes_lock:
        _open_writes[store] = _open_writes.get(store, 0) + opened
    try:
        with store.transaction(journaled=history, history=history) as cur:
            yield cur
    except duckdb.Error as exc:
        try:
            store.cursor().execute("ROLLBACK")  # a failed COMMIT can leave the transaction open
        except duckdb.Error:
            pass
        text = str(exc).strip().splitlines()
        raise StoreWriteError(store.path, what, (text[0] if text else type(exc).__name__)[:200]) from None
    finally:
        with _open_writes_lock:
            _open_writes[store] -= opened
    for listener in list(_after_commit.get(store, ())):
        listener()


def write_events(cur: duckdb.DuckDBPyConnection,
                 events: Sequence[tuple[int, str, str, dict[str, Any] | None, dict[str, Any] | None]]) -> None:
    """Write history events (annotation id, who, action, state before, state after). Every event, whatever
    made it, has this one shape: before and after are `Annotation.state()` (None before a create)."""
    rows = [(i, who, action, json.dumps(before) if before is not None else None,
             json.dumps(after) if after is not None else None) for i, who, action, before, after in events]
    if not rows:
        return
    if len(rows) <= 16:
        cur.executemany("INSERT INTO annotation_event (annotation_id, annotator, action, before, after)"
                        " VALUES (?, ?, ?, ?, ?)", [list(r) for r in rows])
        return
    import polars as pl

    frame = pl.DataFrame(rows, schema={"annotation_id": pl.Int64, "annotator": pl.String, "action": pl.String,
                                       "before": pl.String, "after": pl.String}, orient="row")
    cur.register("events_in_", frame.to_arrow())
    try:
        cur.execute("INSERT INTO annotation_event (annotation_id, annotator, action, before, after)"
                    " SELECT annotation_id, annotator, action, before, after FROM events_in_")
    finally:
        cur.unregister("events_in_")


def insert_annotations(cur: duckdb.DuckDBPyConnection, rows: pl.DataFrame, *,
                       skip_existing: bool = True) -> WrittenLabels:
    """Add labels (a frame with `NEW_ROW_COLUMNS`, see `new_row_schema`) with a 'create' event each; returns them
    in id order.

    The one way labels enter the store: edits, annotation-file imports and release imports. With
    `skip_existing`, a row whose `NATURAL_KEY` a live annotation or an earlier row has is left out.
    Raises `AnnotationError` (nothing written) for a row without annotator or label set, or bad times."""
    import polars as pl
    import pyarrow.compute as pc

    frame = rows.select([(pl.col(c) if c in rows.columns else pl.lit(None)).cast(t).alias(c)
                         for c, t in new_row_schema().items()])
    _check_rows(frame)
    if skip_existing:   # the first row of each natural key, in order (as `unique` keeps it, at half its cost)
        frame = frame.filter(pl.struct(list(NATURAL_KEY)).is_first_distinct())
    columns = ", ".join(NEW_ROW_COLUMNS)
    fresh = ""
    if skip_existing:
        same = " AND ".join(f"a.{c} IS NOT DISTINCT FROM f.{c}" for c in NATURAL_KEY)
        fresh = f" WHERE NOT EXISTS (SELECT 1 FROM annotation a WHERE a.deleted_at IS NULL AND {same})"
    # registered inside the caller's transaction: a failed insert leaves it to the rollback, since unregistering
    # in an aborted transaction would fail and hide the insert's own error
    cur.register("annotations_in_", frame.to_arrow())
    with warnings.catch_warnings():
        # DuckDB suggests `sql()`, which would run the INSERT as a lazy relation; one copy of the new rows
        # is what this costs
        warnings.filterwarnings("ignore", "Arrow output on a DB-API result", UserWarning)
        written = cur.execute(f"INSERT INTO annotation ({columns}) SELECT {columns} FROM annotations_in_ f{fresh}"
                              f" RETURNING {_COLUMNS}").to_arrow_table()
    cur.unregister("annotations_in_")
    ids = written.column("id")
    if len(ids) > 1 and not pc.all(pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))).as_py():
        written = written.sort_by("id")   # the database may return the rows of a parallel insert out of order
    if written.num_rows:
        _write_create_events(cur, written)
    return WrittenLabels(written)


def _python_values(column: Any) -> list[Any]:
    """An Arrow column's values as Python objects. A timestamp is made once per distinct value: the labels of
    one write share their creation time, and a datetime costs as much as the rest of a row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_timestamp(column.type):
        return column.to_pylist()
    distinct = pc.unique(column)
    made = distinct.to_pylist()
    return [made[i] for i in pc.index_in(column, value_set=distinct, skip_nulls=False).to_pylist()]


# A create event's `after` is `Annotation.state()` as `json.dumps` writes it, built in the database for all
# new labels at once: text values come from `json.dumps` of each distinct value, times from DuckDB's text of a
# DOUBLE, which is Python's shortest repr, as `json.dumps` writes a float.
_TEXT_FIELDS = ("label_set", "label", "value", "note", "media_role")


def _json_texts(column: Any) -> Any:
    """A text column as its values' JSON (null where none), each distinct value encoded once: the column's
    dictionary is swapped for its JSON, so the database reads the encoded text in place of a join."""
    import pyarrow as pa
    import pyarrow.compute as pc

    coded = pc.dictionary_encode(column.cast(pa.string()).combine_chunks())
    encoded = pa.array([json.dumps(text) for text in coded.dictionary.to_pylist()], pa.string())
    return pa.DictionaryArray.from_arrays(coded.indices, encoded)


def _write_create_events(cur: duckdb.DuckDBPyConnection, written: Any) -> None:
    """One 'create' event per new label (an Arrow table of `_COLUMNS` rows), in id order."""
    import pyarrow as pa

    table = pa.table({name: _json_texts(written.column(name)) if name in _TEXT_FIELDS else written.column(name)
                      for name in written.column_names})
    # one concat() per row: a chain of || makes a new string at every step
    parts = []
    for k, name in enumerate(EDITABLE_FIELDS):
        value = f"w.{name}" if name in _TEXT_FIELDS else f"CAST(w.{name} AS VARCHAR)"
        parts += [f"'{', ' if k else '{'}\"{name}\": '", f"coalesce({value}, 'null')"]
    parts += ["', \"revision\": '", "CAST(w.revision AS VARCHAR)",
              "CASE WHEN w.deleted_at IS NULL THEN ', \"deleted\": false}' ELSE ', \"deleted\": true}' END"]
    cur.register("written_", table)   # left to the rollback if the insert fails (see `insert_annotations`)
    cur.execute("INSERT INTO annotation_event (annotation_id, annotator, action, before, after)"
                f" SELECT w.id, w.annotator, 'create', NULL, concat({', '.join(parts)})"
                " FROM written_ w ORDER BY w.id")
    cur.unregister("written_")


def _check_rows(frame: pl.DataFrame) -> None:
    """Refuse the first row without annotator or label set, or holding a value the importers' rule
    (`storage.validation.bad_values`: times, control characters in names) refuses, whichever path it took."""
    import polars as pl

    from storage.validation import bad_values

    unnamed = frame.filter((pl.col("annotator").fill_null("") == "") | (pl.col("label_set").fill_null("") == ""))
    if unnamed.height:
        first = unnamed.row(0, named=True)
        raise AnnotationError("Every edit needs an annotator name." if not first["annotator"]
                              else "A label needs a label set.")
    bad = bad_values("annotations", frame)
    if bad:
        _row, field_name, found, expected = min(bad, key=lambda problem: problem[0])
        raise AnnotationError(f"A label's {field_name} must be {expected}, not {found!r}.")


def _usage(cur: duckdb.DuckDBPyConnection, label_set: str, label: str | None) -> int:
    sql, params = "SELECT count(*) FROM annotation WHERE label_set = ? AND deleted_at IS NULL", [label_set]
    if label is not None:
        sql += " AND label = ?"
        params.append(label)
    return int(cur.execute(sql, params).fetchall()[0][0])


def _refuse_if_used(cur: duckdb.DuckDBPyConnection, label_set: str, label: str | None) -> None:
    used = _usage(cur, label_set, label)
    if used and label is None:
        raise AnnotationError(f"The label set '{label_set}' is used by {used} annotations; delete those first.")
    if used:
        raise AnnotationError(f"The label '{label}' is used by {used} annotations; relabel them first.")


def _set_frame(rows: Sequence[tuple]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(rows, schema=_set_row_schema(), orient="row")


def _label_frame(rows: Sequence[tuple]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(rows, schema=_label_row_schema(), orient="row")


def upsert_label_sets(cur: duckdb.DuckDBPyConnection, sets: pl.DataFrame | None, labels: pl.DataFrame | None) -> None:
    """Create or update label sets (`SET_ROW_COLUMNS`) and labels (`LABEL_ROW_COLUMNS`) by name.

    The one way label sets are written: the editor, label-set files and release imports. A set's scope
    defaults to 'both'; a label of a set not yet stored creates the set. A label's `ord` None keeps its
    place (a new one goes last) and `aliases` None keeps the ones it has."""
    if sets is not None and sets.height:
        cur.register("sets_in_", sets.select(list(SET_ROW_COLUMNS)).to_arrow())
        try:
            cur.execute("UPDATE label_set SET scope = coalesce(f.scope, 'both'), description = f.description,"
                        " source = f.source FROM sets_in_ f WHERE label_set.name = f.name")
            cur.execute("INSERT INTO label_set (name, scope, description, source) SELECT f.name,"
                        " coalesce(f.scope, 'both'), f.description, f.source FROM sets_in_ f"
                        " WHERE f.name NOT IN (SELECT name FROM label_set)")
        finally:
            cur.unregister("sets_in_")
    if labels is None or not labels.height:
        return
    cur.register("labels_in_", labels.select(list(LABEL_ROW_COLUMNS)).to_arrow())
    try:
        cur.execute("INSERT INTO label_set (name) SELECT DISTINCT label_set FROM labels_in_"
                    " WHERE label_set NOT IN (SELECT name FROM label_set)")
        cur.execute(
            "UPDATE label SET parent = f.parent, colour = f.colour, shortcut = f.shortcut,"
            " description = f.description, ord = coalesce(f.ord, label.ord), aliases = coalesce(f.aliases, label.aliases)"
            " FROM labels_in_ f JOIN label_set ls ON ls.name = f.label_set"
            " WHERE label.label_set_id = ls.id AND label.name = f.name")
        cur.execute(
            "INSERT INTO label (label_set_id, name, parent, colour, shortcut, description, ord, aliases)"
            " SELECT ls.id, f.name, f.parent, f.colour, f.shortcut, f.description,"
            " coalesce(f.ord, (SELECT coalesce(max(l.ord) + 1, 0) FROM label l WHERE l.label_set_id = ls.id)),"
            " f.aliases FROM labels_in_ f JOIN label_set ls ON ls.name = f.label_set WHERE NOT EXISTS"
            " (SELECT 1 FROM label l WHERE l.label_set_id = ls.id AND l.name = f.name)")
    finally:
        cur.unregister("labels_in_")
