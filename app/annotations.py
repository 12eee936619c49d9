"""Annotation and label-set edits as undoable commands, live labelling while playing, label navigation. Qt-free.

Every command writes through to the `AnnotationStore` in `redo()` and `undo()`, stamped with the
annotator who made it, so the store (and its history) is always what the user sees, and returns the rows
it wrote. A drag is one command carrying the times before and after. Commands are made from the rows a
view shows (no read first); `app.annotation_model.AnnotationModel` applies them and keeps their undo
history, one per stimulus.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# the annotation keys and their action ids live in the one keymap; label keys (1-6 ...) come from the set
from app.keymap import (ANNOTATION_BINDINGS, DELETE_SELECTION, NEXT_LABEL, NUDGE_END_LEFT,  # noqa: F401
                        NUDGE_END_RIGHT, NUDGE_START_LEFT, NUDGE_START_RIGHT, PREVIOUS_LABEL)
from storage.annotations import Annotation, AnnotationError, AnnotationStore, LabelSetSnapshot, check_label_times

GRID_S = 0.01            # label times snap to 10 ms, the same grid agreement is computed on
NUDGE_S = 0.01           # one Alt+arrow press moves an edge by this much
REACTION_OFFSET_S = 0.25  # a key pressed while playing marks a moment this much before the clock
NOTE_SET = "note"        # label set of the free-text note on a whole stimulus


def snap(t: float, grid_s: float = GRID_S) -> float:
    """`t` rounded to the nearest point of the grid (never below 0)."""
    return max(0.0, round(round(t / grid_s) * grid_s, 6))


def ordered_span(start_s: float, end_s: float) -> tuple[float, float]:
    """A time range with its edges in order: an edge moved past the other swaps with it, as in ELAN and
    Praat. Refuses a range of zero length, which would be a label nobody can see or grab."""
    start_s, end_s = sorted((float(start_s), float(end_s)))
    if end_s - start_s < 1e-9:
        raise AnnotationError(f"A label must last longer than zero; both its edges are at {start_s:.2f} s.")
    return start_s, end_s


def move_edge(start_s: float, end_s: float, edge: str, t: float, grid_s: float = GRID_S,
              limit_s: float = float("inf")) -> tuple[float, float]:
    """The range after its `edge` ("start" or "end") moves to `t` (snapped, kept in 0..limit): an edge
    dragged past the other swaps with it; one landing on the other stops a grid step short of it."""
    fixed = end_s if edge == "start" else start_s
    t = min(snap(t, grid_s), limit_s)
    if abs(t - fixed) < grid_s / 2:
        t = fixed - grid_s if edge == "start" else fixed + grid_s
        if not 0.0 <= t <= limit_s:
            t = fixed + grid_s if edge == "start" else fixed - grid_s
        t = round(t, 6)
    return ordered_span(t, fixed)


def _owned(item: Annotation, annotator: str) -> Annotation:
    if item.annotator != annotator:
        raise AnnotationError(f"This label belongs to {item.annotator}; {annotator} can only edit their own.")
    return item


class EditCommand:
    """Base of every command: `text` names the step in an undo menu; `scope` is the undo history it joins
    (the stimulus it changes, or `LABEL_SETS_SCOPE`). `redo` and `undo` write through to the store and
    return the annotations as written, so a model of the stimulus updates itself without reading back."""

    text = "Edit label"
    merge_id = -1  # commands with the same id >= 0 may merge (successive nudges)
    scope: Hashable = None
    changes_label_sets = False

    def redo(self) -> list[Annotation]:
        raise NotImplementedError

    def undo(self) -> list[Annotation]:
        raise NotImplementedError

    def id(self) -> int:
        return self.merge_id

    def merge_with(self, other: EditCommand) -> bool:
        """Absorb `other` (already done) into this one; True when merged."""
        return False


class AddLabel(EditCommand):
    """Create a label; undo deletes it and redo restores the same row, so its history stays one thread.
    A range must last longer than zero unless `point` says a moment is meant (as on a Praat point tier)."""

    text = "Add label"

    def __init__(self, store: AnnotationStore, annotator: str, stimulus_id: int, label_set: str,
                 label: str | None, start_s: float | None, end_s: float | None, *,
                 value: str | None = None, note: str | None = None, media_role: str | None = None,
                 point: bool = False) -> None:
        if point and start_s is not None and start_s == end_s:
            check_label_times(start_s, end_s)
        elif start_s is not None and end_s is not None:
            start_s, end_s = ordered_span(start_s, end_s)
        self.store, self.annotator, self.scope = store, annotator, stimulus_id
        self.fields = dict(stimulus_id=stimulus_id, label_set=label_set, label=label, start_s=start_s,
                           end_s=end_s, value=value, note=note, media_role=media_role)
        self.annotation_id: int | None = None
        self.text = f"Add {label or label_set}"

    def redo(self) -> list[Annotation]:
        if self.annotation_id is not None:
            return [self.store.restore(self.annotation_id, self.annotator)]
        f = self.fields
        created = self.store.create(f["stimulus_id"], self.annotator, f["label_set"], f["label"], f["start_s"],
                                    f["end_s"], value=f["value"], note=f["note"], media_role=f["media_role"])
        self.annotation_id = created.id
        return [created]

    def undo(self) -> list[Annotation]:
        assert self.annotation_id is not None
        return [self.store.delete(self.annotation_id, self.annotator)]


class ChangeTimes(EditCommand):
    """Set a label's start and end; carries both the times before and after (one drag, one step).
    Times given the wrong way round are swapped; a zero-length range is refused, except that a point (a
    moment, as a Praat point tier keeps one) may move as a point."""

    text = "Change label times"

    def __init__(self, store: AnnotationStore, annotator: str, item: Annotation,
                 after: tuple[float, float], before: tuple[float, float] | None = None) -> None:
        _owned(item, annotator)
        if item.is_whole:
            raise AnnotationError("A whole-stimulus label has no times to change.")
        self.store, self.annotator, self.annotation_id = store, annotator, item.id
        self.scope = item.stimulus_id
        self.before = before if before is not None else (item.start_s, item.end_s)
        point = item.start_s == item.end_s and after[0] == after[1]
        self.after = (float(after[0]), float(after[1])) if point else ordered_span(*after)

    def redo(self) -> list[Annotation]:
        return [self.store.update(self.annotation_id, self.annotator, start_s=self.after[0], end_s=self.after[1])]

    def undo(self) -> list[Annotation]:
        return [self.store.update(self.annotation_id, self.annotator, start_s=self.before[0], end_s=self.before[1])]


class MoveLabel(ChangeTimes):
    text = "Move label"


class ResizeLabel(ChangeTimes):
    """Move one edge. With `mergeable`, successive nudges of the same edge of the same label become one step."""

    text = "Resize label"
    _MERGE_BASE = 1_000_000

    def __init__(self, store: AnnotationStore, annotator: str, item: Annotation,
                 after: tuple[float, float], before: tuple[float, float] | None = None, *,
                 mergeable: bool = False, edge: str = "end") -> None:
        super().__init__(store, annotator, item, after, before)
        self.edge = edge
        # one id per (label, edge): nudging the start never merges into nudging the end
        self.merge_id = (self._MERGE_BASE + 2 * item.id + (edge == "start")) if mergeable else -1

    def merge_with(self, other: EditCommand) -> bool:
        if not isinstance(other, ResizeLabel) or other.merge_id != self.merge_id or self.merge_id < 0:
            return False
        self.after = other.after
        return True


def nudge(store: AnnotationStore, annotator: str, item: Annotation, edge: str, delta_s: float,
          grid_s: float = GRID_S, limit_s: float = float("inf")) -> ResizeLabel | None:
    """A mergeable resize moving one edge by `delta_s` (see `move_edge`); None if nothing moves."""
    _owned(item, annotator)
    if item.is_whole:
        return None
    moved = move_edge(item.start_s, item.end_s, edge, (item.start_s if edge == "start" else item.end_s) + delta_s,
                      grid_s, limit_s)
    if moved == (item.start_s, item.end_s):
        return None
    return ResizeLabel(store, annotator, item, moved, mergeable=True, edge=edge)


class Relabel(EditCommand):
    text = "Relabel"

    def __init__(self, store: AnnotationStore, annotator: str, item: Annotation, label: str | None,
                 label_set: str | None = None) -> None:
        _owned(item, annotator)
        self.store, self.annotator, self.annotation_id, self.scope = store, annotator, item.id, item.stimulus_id
        self.before = {"label": item.label, "label_set": item.label_set}
        self.after = {"label": label, "label_set": label_set or item.label_set}
        self.text = f"Relabel as {label}"

    def redo(self) -> list[Annotation]:
        return [self.store.update(self.annotation_id, self.annotator, **self.after)]

    def undo(self) -> list[Annotation]:
        return [self.store.update(self.annotation_id, self.annotator, **self.before)]


class SetNote(EditCommand):
    """Set the free-text note of one label (None clears it)."""

    text = "Edit note"

    def __init__(self, store: AnnotationStore, annotator: str, item: Annotation, note: str | None) -> None:
        _owned(item, annotator)
        self.store, self.annotator, self.annotation_id, self.scope = store, annotator, item.id, item.stimulus_id
        self.before, self.after = item.note, note or None

    def redo(self) -> list[Annotation]:
        return [self.store.update(self.annotation_id, self.annotator, note=self.after)]

    def undo(self) -> list[Annotation]:
        return [self.store.update(self.annotation_id, self.annotator, note=self.before)]


class DeleteLabels(EditCommand):
    """Delete one or many labels in one transaction and one undo step."""

    def __init__(self, store: AnnotationStore, annotator: str, items: Sequence[Annotation]) -> None:
        if not items:
            raise AnnotationError("Select one of your labels to delete it.")
        self.ids = [_owned(item, annotator).id for item in items]
        self.store, self.annotator, self.scope = store, annotator, items[0].stimulus_id
        self.text = "Delete label" if len(self.ids) == 1 else f"Delete {len(self.ids)} labels"

    def redo(self) -> list[Annotation]:
        return self.store.delete_many(self.ids, self.annotator)

    def undo(self) -> list[Annotation]:
        return self.store.restore_many(self.ids, self.annotator)


class BulkRelabel(EditCommand):
    """Give many labels one new label in one transaction and one undo step."""

    def __init__(self, store: AnnotationStore, annotator: str, items: Sequence[Annotation], label: str,
                 label_set: str | None = None) -> None:
        if not items:
            raise AnnotationError("Select one of your labels to relabel it.")
        for item in items:
            _owned(item, annotator)
        self.store, self.annotator, self.scope = store, annotator, items[0].stimulus_id
        self.before = [(a.id, {"label": a.label, "label_set": a.label_set}) for a in items]
        self.after = [(a.id, {"label": label, "label_set": label_set or a.label_set}) for a in items]
        self.text = f"Relabel {len(items)} labels as {label}"

    def redo(self) -> list[Annotation]:
        return self.store.update_many(self.annotator, self.after)

    def undo(self) -> list[Annotation]:
        return self.store.update_many(self.annotator, self.before)


class SetWholeLabel(EditCommand):
    """Set (or with None clear) the annotator's whole-stimulus label in one label set.

    One whole-stimulus label per annotator, stimulus and set: an existing one (found among `current`, the
    stimulus's annotations as shown) is relabelled, a cleared one is deleted, and undo returns exactly to
    the state before.
    """

    def __init__(self, store: AnnotationStore, annotator: str, stimulus_id: int, label_set: str,
                 label: str | None, current: Iterable[Annotation], *, note: str | None = None) -> None:
        self.store, self.annotator, self.scope = store, annotator, stimulus_id
        self.stimulus_id, self.label_set, self.label, self.note = stimulus_id, label_set, label, note
        existing = [a for a in current if a.is_whole and not a.deleted and a.annotator == annotator
                    and a.label_set == label_set and a.stimulus_id == stimulus_id]
        self.existing = existing[-1] if existing else None
        self.created_id: int | None = None
        self._deleted_existing = False
        self.text = f"Set {label_set}: {label}" if label else f"Clear {label_set}"

    def _after_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"label": self.label}
        if self.note is not None:
            fields["note"] = self.note or None
        return fields

    def redo(self) -> list[Annotation]:
        cleared = self.label is None and not self.note
        if self.existing is not None:
            self._deleted_existing = cleared
            if cleared:
                return [self.store.delete(self.existing.id, self.annotator)]
            return [self.store.update(self.existing.id, self.annotator, **self._after_fields())]
        if cleared:
            return []
        if self.created_id is not None:
            return [self.store.restore(self.created_id, self.annotator)]
        created = self.store.create(self.stimulus_id, self.annotator, self.label_set, self.label,
                                    note=self.note or None)
        self.created_id = created.id
        return [created]

    def undo(self) -> list[Annotation]:
        if self.existing is not None:
            written = []
            if self._deleted_existing:
                written.append(self.store.restore(self.existing.id, self.annotator))
            written.append(self.store.update(self.existing.id, self.annotator, label=self.existing.label,
                                             note=self.existing.note))
            return written
        if self.created_id is not None:
            return [self.store.delete(self.created_id, self.annotator)]
        return []


def set_stimulus_note(store: AnnotationStore, annotator: str, stimulus_id: int, note: str,
                      current: Iterable[Annotation]) -> SetWholeLabel:
    """The command that sets the annotator's free-text note on a whole stimulus (an empty text clears it)."""
    return SetWholeLabel(store, annotator, stimulus_id, NOTE_SET, None, current, note=note)


def stimulus_note(annotations: Iterable[Annotation], annotator: str) -> str:
    """The annotator's note on the whole stimulus among `annotations` ('' when none)."""
    for item in annotations:
        if item.annotator == annotator and item.label_set == NOTE_SET and item.is_whole:
            return item.note or ""
    return ""


class ImportedLabels(EditCommand):
    """The labels one import added to one stimulus (written before the command is made, in one transaction
    for the whole file); undo deletes them and redo brings them back."""

    def __init__(self, store: AnnotationStore, annotator: str, stimulus_id: int, ids: Sequence[int],
                 source: str) -> None:
        self.store, self.annotator, self.scope = store, annotator, stimulus_id
        self.ids = list(ids)
        self.text = f"Import {len(self.ids)} labels from {source}"

    def redo(self) -> list[Annotation]:
        return self.store.restore_many(self.ids, self.annotator)

    def undo(self) -> list[Annotation]:
        return self.store.delete_many(self.ids, self.annotator)


# -- label-set edits: one history of their own, since a set is shared by every stimulus ---------------------
LABEL_SETS_SCOPE = "label sets"


class RenameLabel(EditCommand):
    """Rename a label (or, with `label` None, a whole label set); every annotation that uses it follows,
    each with a history event, and undo renames back the same way."""

    scope = LABEL_SETS_SCOPE
    changes_label_sets = True

    def __init__(self, store: AnnotationStore, annotator: str, label_set: str, old: str, new: str, *,
                 whole_set: bool = False) -> None:
        if not annotator:
            raise AnnotationError("Choose an annotator name before renaming: every change is stamped with one.")
        self.store, self.annotator = store, annotator
        self.label_set, self.old, self.new, self.whole_set = label_set, old, new.strip(), whole_set
        self.text = f"Rename {'label set ' if whole_set else ''}'{old}' to '{self.new}'"

    def _rename(self, old: str, new: str) -> list[Annotation]:
        if self.whole_set:
            return self.store.rename_label_set(old, new, self.annotator)
        return self.store.rename_label(self.label_set, old, new, self.annotator)

    def redo(self) -> list[Annotation]:
        return self._rename(self.old, self.new)

    def undo(self) -> list[Annotation]:
        return self._rename(self.new, self.old)


class EditLabelSet(EditCommand):
    """Any other change of one label set (its scope or description, a label's fields, adding, deleting or
    reordering labels, loading a file): `change` makes it; undo puts the whole set back as it was, redo
    as it was after. These touch no annotation (deleting what annotations use is refused)."""

    scope = LABEL_SETS_SCOPE
    changes_label_sets = True

    def __init__(self, store: AnnotationStore, name: str, text: str, change: Callable[[], object]) -> None:
        self.store, self.name, self.text, self._change = store, name, text, change
        self.before: LabelSetSnapshot | None = store.snapshot_label_set(name)
        self.after: LabelSetSnapshot | None = None
        self._done_once = False

    def redo(self) -> list[Annotation]:
        if self._done_once:
            self.store.restore_label_set(self.name, self.after)
        else:
            self._change()
            self._done_once = True
            self.after = self.store.snapshot_label_set(self.name)
        return []

    def undo(self) -> list[Annotation]:
        self.store.restore_label_set(self.name, self.before)
        return []


# -- labelling while playing ---------------------------------------------------------------------
@dataclass(frozen=True)
class LiveMark:
    """A range marked by pressing a label's key twice while playing."""

    label: str
    start_s: float
    end_s: float


class LiveLabeler:
    """First press of a label's key marks its start, the next press of the same key marks its end.

    Both moments are the clock time minus the reaction-time offset, because a person presses a key
    a little after hearing the cue. Different keys run independently, so overlapping cues can be marked.
    """

    def __init__(self, reaction_offset_s: float = REACTION_OFFSET_S, grid_s: float = GRID_S) -> None:
        self.reaction_offset_s = reaction_offset_s
        self.grid_s = grid_s
        self._open: dict[str, float] = {}

    def moment(self, clock_s: float) -> float:
        """The moment a key pressed at clock time `clock_s` marks: a reaction time earlier, on the grid."""
        return snap(clock_s - self.reaction_offset_s, self.grid_s)

    def press(self, label: str, clock_s: float) -> LiveMark | None:
        """Record a key press at clock time `clock_s`; returns the finished range on the second press."""
        moment = self.moment(clock_s)
        start = self._open.pop(label, None)
        if start is None:
            self._open[label] = moment
            return None
        start, end = sorted((start, moment))
        return LiveMark(label, start, end)

    def pending(self) -> dict[str, float]:
        """Labels whose start is marked and end is not, with their start times."""
        return dict(self._open)

    def cancel(self) -> None:
        self._open.clear()


# -- navigation -----------------------------------------------------------------------------------
def next_label(annotations: Sequence[Annotation], t: float, epsilon: float = 1e-6) -> Annotation | None:
    """The time-range label starting soonest after `t` (ties: the shorter one)."""
    later = [a for a in annotations if not a.is_whole and a.start_s > t + epsilon]
    return min(later, key=lambda a: (a.start_s, a.end_s), default=None)


def previous_label(annotations: Sequence[Annotation], t: float, epsilon: float = 1e-6) -> Annotation | None:
    """The time-range label starting latest before `t`."""
    earlier = [a for a in annotations if not a.is_whole and a.start_s < t - epsilon]
    return max(earlier, key=lambda a: (a.start_s, a.end_s), default=None)


# -- history text ---------------------------------------------------------------------------------
def _span(state: dict[str, Any]) -> str:
    if state.get("start_s") is None:
        return "whole"
    return f"{state['start_s']:.2f}-{state['end_s']:.2f} s"


def describe_state(state: dict[str, Any] | None) -> str:
    """A short text for one before/after state: 'laugh 8.00-9.00 s', with the note when there is one."""
    if state is None:
        return "-"
    if state.get("deleted"):
        return "(deleted)"
    text = f"{state.get('label') or state.get('label_set')} {_span(state)}"
    if state.get("note"):
        text += f" \u201c{state['note']}\u201d"
    return text
