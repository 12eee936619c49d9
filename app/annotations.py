"""Annotation edits as undoable commands, live labelling while playing, and label navigation. Qt-free.

Every command writes through to the `AnnotationStore` in `redo()` and `undo()`, stamped with the
annotator who made it, so the store (and its history) is always what the user sees. A drag is one
command carrying the times before and after. Commands follow QUndoCommand's shape (`redo`, `undo`,
`id`, `merge_with`) so a thin adapter puts them on a `QUndoStack`.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from app.keymap import KeyBinding
from storage.annotations import Annotation, AnnotationError, AnnotationStore

GRID_S = 0.01            # label times snap to 10 ms, the same grid agreement is computed on
NUDGE_S = 0.01           # one Alt+arrow press moves an edge by this much
REACTION_OFFSET_S = 0.25  # a key pressed while playing marks a moment this much before the clock
NOTE_SET = "note"        # label set of the free-text note on a whole stimulus

# Action ids of the annotation keys; the label shortcuts themselves (1-6 ...) come from the label set.
DELETE_SELECTION = "annotate.delete"
NUDGE_END_LEFT = "annotate.nudge_end_left"
NUDGE_END_RIGHT = "annotate.nudge_end_right"
NUDGE_START_LEFT = "annotate.nudge_start_left"
NUDGE_START_RIGHT = "annotate.nudge_start_right"
NEXT_LABEL = "annotate.next_label"
PREVIOUS_LABEL = "annotate.previous_label"

ANNOTATION_BINDINGS: tuple[KeyBinding, ...] = (
    KeyBinding("Delete", DELETE_SELECTION, "Delete the selected labels", "Annotate"),
    KeyBinding("Alt+Left", NUDGE_END_LEFT, "Move the selected label's end 10 ms earlier", "Annotate"),
    KeyBinding("Alt+Right", NUDGE_END_RIGHT, "Move the selected label's end 10 ms later", "Annotate"),
    KeyBinding("Alt+Shift+Left", NUDGE_START_LEFT, "Move the selected label's start 10 ms earlier", "Annotate"),
    KeyBinding("Alt+Shift+Right", NUDGE_START_RIGHT, "Move the selected label's start 10 ms later", "Annotate"),
    KeyBinding("N", NEXT_LABEL, "Go to the next label", "Annotate"),
    KeyBinding("P", PREVIOUS_LABEL, "Go to the previous label", "Annotate"),
)


def snap(t: float, grid_s: float = GRID_S) -> float:
    """`t` rounded to the nearest point of the grid (never below 0)."""
    return max(0.0, round(round(t / grid_s) * grid_s, 6))


def _owned(store: AnnotationStore, annotation_id: int, annotator: str) -> Annotation:
    item = store.get(annotation_id)
    if item.annotator != annotator:
        raise AnnotationError(f"This label belongs to {item.annotator}; {annotator} can only edit their own.")
    return item


class EditCommand:
    """Base of the annotation commands: `text` names the step in an undo menu."""

    text = "Edit label"
    merge_id = -1  # commands with the same id >= 0 may merge (QUndoCommand.id)

    def redo(self) -> None:
        raise NotImplementedError

    def undo(self) -> None:
        raise NotImplementedError

    def id(self) -> int:
        return self.merge_id

    def merge_with(self, other: EditCommand) -> bool:
        """Absorb `other` (already done) into this one; True when merged."""
        return False


class AddLabel(EditCommand):
    """Create a label; undo deletes it and redo restores the same row, so its history stays one thread."""

    text = "Add label"

    def __init__(self, store: AnnotationStore, annotator: str, stimulus_id: int, label_set: str,
                 label: str | None, start_s: float | None, end_s: float | None, *,
                 value: str | None = None, note: str | None = None, media_role: str | None = None) -> None:
        self.store, self.annotator = store, annotator
        self.fields = dict(stimulus_id=stimulus_id, label_set=label_set, label=label, start_s=start_s,
                           end_s=end_s, value=value, note=note, media_role=media_role)
        self.annotation_id: int | None = None
        self.text = f"Add {label or label_set}"

    def redo(self) -> None:
        if self.annotation_id is None:
            f = self.fields
            created = self.store.create(f["stimulus_id"], self.annotator, f["label_set"], f["label"],
                                        f["start_s"], f["end_s"], value=f["value"], note=f["note"],
                                        media_role=f["media_role"])
            self.annotation_id = created.id
        else:
            self.store.restore(self.annotation_id, self.annotator)

    def undo(self) -> None:
        assert self.annotation_id is not None
        self.store.delete(self.annotation_id, self.annotator)


class ChangeTimes(EditCommand):
    """Set a label's start and end; carries both the times before and after (one drag, one step)."""

    text = "Change label times"

    def __init__(self, store: AnnotationStore, annotator: str, annotation_id: int,
                 after: tuple[float, float], before: tuple[float, float] | None = None) -> None:
        item = _owned(store, annotation_id, annotator)
        if item.is_whole:
            raise AnnotationError("A whole-stimulus label has no times to change.")
        self.store, self.annotator, self.annotation_id = store, annotator, annotation_id
        self.before = before if before is not None else (item.start_s, item.end_s)
        self.after = after

    def redo(self) -> None:
        self.store.update(self.annotation_id, self.annotator, start_s=self.after[0], end_s=self.after[1])

    def undo(self) -> None:
        self.store.update(self.annotation_id, self.annotator, start_s=self.before[0], end_s=self.before[1])


class MoveLabel(ChangeTimes):
    text = "Move label"


class ResizeLabel(ChangeTimes):
    """Move one edge. With `mergeable`, successive nudges of the same edge of the same label become one step."""

    text = "Resize label"
    _MERGE_BASE = 1_000_000

    def __init__(self, store: AnnotationStore, annotator: str, annotation_id: int,
                 after: tuple[float, float], before: tuple[float, float] | None = None, *,
                 mergeable: bool = False, edge: str = "end") -> None:
        super().__init__(store, annotator, annotation_id, after, before)
        self.edge = edge
        # one id per (label, edge): nudging the start never merges into nudging the end
        self.merge_id = (self._MERGE_BASE + 2 * annotation_id + (edge == "start")) if mergeable else -1

    def merge_with(self, other: EditCommand) -> bool:
        if not isinstance(other, ResizeLabel) or other.merge_id != self.merge_id or self.merge_id < 0:
            return False
        self.after = other.after
        return True


def nudge(store: AnnotationStore, annotator: str, annotation_id: int, edge: str, delta_s: float,
          grid_s: float = GRID_S) -> ResizeLabel | None:
    """A mergeable resize moving one edge by `delta_s`, kept inside 0 <= start <= end; None if nothing moves."""
    item = _owned(store, annotation_id, annotator)
    if item.is_whole:
        return None
    start, end = item.start_s, item.end_s
    if edge == "start":
        start = min(snap(start + delta_s, grid_s), end)
    else:
        end = max(snap(end + delta_s, grid_s), start)
    if (start, end) == (item.start_s, item.end_s):
        return None
    return ResizeLabel(store, annotator, annotation_id, (start, end), mergeable=True, edge=edge)


class Relabel(EditCommand):
    text = "Relabel"

    def __init__(self, store: AnnotationStore, annotator: str, annotation_id: int, label: str | None,
                 label_set: str | None = None) -> None:
        item = _owned(store, annotation_id, annotator)
        self.store, self.annotator, self.annotation_id = store, annotator, annotation_id
        self.before = {"label": item.label, "label_set": item.label_set}
        self.after = {"label": label, "label_set": label_set or item.label_set}
        self.text = f"Relabel as {label}"

    def redo(self) -> None:
        self.store.update(self.annotation_id, self.annotator, **self.after)

    def undo(self) -> None:
        self.store.update(self.annotation_id, self.annotator, **self.before)


class SetNote(EditCommand):
    """Set the free-text note of one label (None clears it)."""

    text = "Edit note"

    def __init__(self, store: AnnotationStore, annotator: str, annotation_id: int, note: str | None) -> None:
        item = _owned(store, annotation_id, annotator)
        self.store, self.annotator, self.annotation_id = store, annotator, annotation_id
        self.before, self.after = item.note, note or None

    def redo(self) -> None:
        self.store.update(self.annotation_id, self.annotator, note=self.after)

    def undo(self) -> None:
        self.store.update(self.annotation_id, self.annotator, note=self.before)


class DeleteLabel(EditCommand):
    text = "Delete label"

    def __init__(self, store: AnnotationStore, annotator: str, annotation_id: int) -> None:
        _owned(store, annotation_id, annotator)
        self.store, self.annotator, self.annotation_id = store, annotator, annotation_id

    def redo(self) -> None:
        self.store.delete(self.annotation_id, self.annotator)

    def undo(self) -> None:
        self.store.restore(self.annotation_id, self.annotator)


class BulkDelete(EditCommand):
    """Delete many labels in one transaction and one undo step."""

    def __init__(self, store: AnnotationStore, annotator: str, annotation_ids: Iterable[int]) -> None:
        self.ids = [_owned(store, i, annotator).id for i in annotation_ids]
        self.store, self.annotator = store, annotator
        self.text = f"Delete {len(self.ids)} labels"

    def redo(self) -> None:
        self.store.delete_many(self.ids, self.annotator)

    def undo(self) -> None:
        self.store.restore_many(self.ids, self.annotator)


class BulkRelabel(EditCommand):
    """Give many labels one new label in one transaction and one undo step."""

    def __init__(self, store: AnnotationStore, annotator: str, annotation_ids: Iterable[int], label: str,
                 label_set: str | None = None) -> None:
        items = [_owned(store, i, annotator) for i in annotation_ids]
        self.store, self.annotator = store, annotator
        self.before = [(a.id, {"label": a.label, "label_set": a.label_set}) for a in items]
        self.after = [(a.id, {"label": label, "label_set": label_set or a.label_set}) for a in items]
        self.text = f"Relabel {len(items)} labels as {label}"

    def redo(self) -> None:
        self.store.update_many(self.annotator, self.after)

    def undo(self) -> None:
        self.store.update_many(self.annotator, self.before)


class SetWholeLabel(EditCommand):
    """Set (or with None clear) the annotator's whole-stimulus label in one label set.

    One whole-stimulus label per annotator, stimulus and set: an existing one is relabelled, a cleared
    one is deleted, and undo returns exactly to the state before.
    """

    def __init__(self, store: AnnotationStore, annotator: str, stimulus_id: int, label_set: str,
                 label: str | None, *, note: str | None = None) -> None:
        self.store, self.annotator = store, annotator
        self.stimulus_id, self.label_set, self.label, self.note = stimulus_id, label_set, label, note
        existing = [a for a in store.for_stimulus(stimulus_id, annotator=annotator, label_set=label_set)
                    if a.is_whole]
        self.existing = existing[-1] if existing else None
        self.created_id: int | None = None
        self.text = f"Set {label_set}: {label}" if label else f"Clear {label_set}"

    def _after_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"label": self.label}
        if self.note is not None:
            fields["note"] = self.note or None
        return fields

    def redo(self) -> None:
        cleared = self.label is None and not self.note
        if self.existing is not None:
            if cleared:
                self.store.delete(self.existing.id, self.annotator)
            else:
                self.store.update(self.existing.id, self.annotator, **self._after_fields())
        elif not cleared:
            if self.created_id is None:
                self.created_id = self.store.create(self.stimulus_id, self.annotator, self.label_set,
                                                    self.label, note=self.note or None).id
            else:
                self.store.restore(self.created_id, self.annotator)

    def undo(self) -> None:
        if self.existing is not None:
            if self.store.get(self.existing.id).deleted:
                self.store.restore(self.existing.id, self.annotator)
            self.store.update(self.existing.id, self.annotator, label=self.existing.label, note=self.existing.note)
        elif self.created_id is not None:
            self.store.delete(self.created_id, self.annotator)


def set_stimulus_note(store: AnnotationStore, annotator: str, stimulus_id: int, note: str) -> SetWholeLabel:
    """The command that sets the annotator's free-text note on a whole stimulus (an empty text clears it)."""
    return SetWholeLabel(store, annotator, stimulus_id, NOTE_SET, None, note=note)


def stimulus_note(annotations: Iterable[Annotation], annotator: str) -> str:
    """The annotator's note on the whole stimulus among `annotations` ('' when none)."""
    for item in annotations:
        if item.annotator == annotator and item.label_set == NOTE_SET and item.is_whole:
            return item.note or ""
    return ""


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

    def press(self, label: str, clock_s: float) -> LiveMark | None:
        """Record a key press at clock time `clock_s`; returns the finished range on the second press."""
        moment = snap(clock_s - self.reaction_offset_s, self.grid_s)
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
