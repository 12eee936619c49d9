"""The annotations of the stimulus on screen, and the only way anything writes annotations or label sets. Qt-free.

`AnnotationModel` holds the current stimulus's annotations (read once per stimulus: `read` runs on a worker,
`show` takes its result on the GUI thread) and applies every change as a command from `app.annotations`:
label edits, label-set edits, annotation-file imports. Each command writes through to the store at once,
stamped with who and when; the model then updates itself from the rows the write returned (no read back),
tells its listeners, and publishes what changed on the change channel.

Undo history is a `CommandStack` scoped per stimulus (label-set edits have a scope of their own) and
bounded, so Ctrl+Z only ever changes what is on screen. A command whose write fails changes nothing: it is
not applied to the model, and an undo or redo that fails does not move the stack.
"""
from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.annotations import (GRID_S, LABEL_SETS_SCOPE, NOTE_SET, AddLabel, BulkRelabel, DeleteLabels, EditCommand,
                             EditLabelSet, ImportedLabels, MoveLabel, Relabel, RenameLabel, ResizeLabel, SetNote,
                             SetWholeLabel, nudge)
from app.changes import ChangeChannel, Topic
from storage.annotations import (Annotation, AnnotationError, AnnotationEvent, AnnotationStore, Label, LabelSet,
                                 WrittenLabels, read_label_set_file)

if TYPE_CHECKING:  # an import's labels come as a frame; the window does not load polars to show labels
    import polars as pl

UNDO_LIMIT = 200      # commands kept per stimulus; the oldest are forgotten (they stay in the history)
SCOPES_KEPT = 1000    # stimuli whose undo history is kept; the least recently edited are forgotten


class CommandStack:
    """Done and undone commands per scope, at most `limit` of each. Qt-free; the Qt undo actions drive it."""

    def __init__(self, limit: int = UNDO_LIMIT) -> None:
        self.limit = limit
        self._done: OrderedDict[Hashable, deque[EditCommand]] = OrderedDict()
        self._undone: dict[Hashable, list[EditCommand]] = {}

    def push(self, command: EditCommand) -> None:
        """Record `command`, already done: it merges into the last one where both allow it (nudges of one
        edge), and what was undone in its scope can no longer be redone."""
        scope = command.scope
        done = self._done.pop(scope, None) or deque(maxlen=self.limit)
        self._done[scope] = done  # most recently edited last
        merged = bool(done) and not self._undone.get(scope) and command.id() >= 0 \
            and done[-1].id() == command.id() and done[-1].merge_with(command)
        if not merged:
            done.append(command)
        self._undone.pop(scope, None)
        while len(self._done) > SCOPES_KEPT:
            forgotten, _ = self._done.popitem(last=False)
            self._undone.pop(forgotten, None)

    def undo(self, scope: Hashable) -> tuple[EditCommand, list[Annotation]] | None:
        """Undo the last command of `scope`; None when there is none. If its write fails, the error is
        raised and the stack stays as it was."""
        done = self._done.get(scope)
        if not done:
            return None
        command = done[-1]
        written = command.undo()
        done.pop()
        self._undone.setdefault(scope, []).append(command)
        return command, written

    def redo(self, scope: Hashable) -> tuple[EditCommand, list[Annotation]] | None:
        """Redo the last undone command of `scope`; None when there is none (a failed write moves nothing)."""
        undone = self._undone.get(scope)
        if not undone:
            return None
        command = undone[-1]
        written = command.redo()
        undone.pop()
        self._done.setdefault(scope, deque(maxlen=self.limit)).append(command)
        return command, written

    def count(self, scope: Hashable) -> int:
        return len(self._done.get(scope) or ())

    def can_undo(self, scope: Hashable) -> bool:
        return bool(self._done.get(scope))

    def can_redo(self, scope: Hashable) -> bool:
        return bool(self._undone.get(scope))

    def undo_text(self, scope: Hashable) -> str:
        done = self._done.get(scope)
        return done[-1].text if done else ""

    def redo_text(self, scope: Hashable) -> str:
        undone = self._undone.get(scope)
        return undone[-1].text if undone else ""


def _order(item: Annotation) -> tuple:
    return (item.start_s is not None, item.start_s or 0.0, item.end_s or 0.0, item.id)


class AnnotationModel:
    """The current stimulus's live annotations, the edits that change them, and their undo history."""

    def __init__(self, store: AnnotationStore, changes: ChangeChannel | None = None, *, annotator: str = "",
                 undo_limit: int = UNDO_LIMIT) -> None:
        self.store = store
        self.changes = changes if changes is not None else ChangeChannel()
        self.stack = CommandStack(undo_limit)
        self.annotator = annotator
        self.stimulus_id: int | None = None
        self.ready = True   # False between `expect` and `show`
        self._items: dict[int, Annotation] = {}
        self._listeners: list[Callable[[], None]] = []
        # Called with each command this model applied, undid or redid and the rows it wrote (a team
        # project's sync sends them on); never for what `absorb` brings in.
        self.outbound: list[Callable[[EditCommand, Sequence[Annotation]], None]] = []

    # -- following it ----------------------------------------------------------------------------
    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call `listener` after every change of what the model holds (a stimulus shown, an edit, an undo)."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()

    # -- reading ---------------------------------------------------------------------------------
    def read(self, stimulus_id: int) -> list[Annotation]:
        """The stimulus's live annotations from the store: the one read per stimulus, safe on a worker."""
        return self.store.for_stimulus(stimulus_id)

    def expect(self, stimulus_id: int) -> None:
        """The stimulus shown is now `stimulus_id`, its labels still being read: until `show` brings them,
        the model holds none and refuses edits, undo and redo (none can act on what is not on screen)."""
        self.stimulus_id = stimulus_id
        self._items = {}
        self.ready = False
        self._notify()

    def show(self, stimulus_id: int | None, annotations: Iterable[Annotation]) -> None:
        """Hold `annotations` (what `read` returned) as the current stimulus's."""
        rows = [a for a in annotations if not a.deleted]
        self.stimulus_id = stimulus_id
        self._items = {a.id: a for a in rows}
        self.ready = True
        self.store.know(rows)  # their next edit is written without reading them back
        self._notify()

    def load(self, stimulus_id: int | None) -> None:
        """Read and show a stimulus in one step (the command line and tests; the window reads on a worker)."""
        self.show(stimulus_id, self.read(stimulus_id) if stimulus_id is not None else [])

    def annotations(self) -> list[Annotation]:
        """The current stimulus's live annotations: whole-stimulus labels first, then by start, end and id."""
        return sorted(self._items.values(), key=_order)

    def get(self, annotation_id: int) -> Annotation:
        """One of the current stimulus's annotations."""
        try:
            return self._items[annotation_id]
        except KeyError:
            raise AnnotationError(f"The label {annotation_id} is not on the stimulus shown.") from None

    def history(self, stimulus_id: int, limit: int | None = None) -> list[AnnotationEvent]:
        """The stimulus's history, newest first (a read: the window runs it on a worker)."""
        return self.store.history(stimulus_id=stimulus_id, limit=limit)

    def label_sets(self) -> list[LabelSet]:
        return self.store.label_sets()

    def label_set(self, name: str) -> LabelSet | None:
        return self.store.label_set(name)

    def labels(self, label_set: str) -> list[Label]:
        return self.store.labels(label_set)

    def label_set_usage(self, label_set: str, label: str | None = None) -> int:
        return self.store.label_set_usage(label_set, label)

    # -- applying commands -----------------------------------------------------------------------
    def apply(self, command: EditCommand) -> list[Annotation]:
        """Do `command` (it writes through to the store), record it for undo, update the model from what it
        wrote and say what changed. A refused or failed write raises and leaves everything as it was."""
        written = command.redo()
        self.stack.push(command)
        self._written(command, written)
        return written

    def undo(self, scope: Hashable | None = None) -> bool:
        """Undo the last change of `scope` (default: the stimulus shown); False when there is none."""
        return self._step(self.stack.undo, scope)

    def redo(self, scope: Hashable | None = None) -> bool:
        return self._step(self.stack.redo, scope)

    def _step(self, move: Callable[[Hashable], tuple[EditCommand, list[Annotation]] | None],
              scope: Hashable | None) -> bool:
        if scope is None and not self.ready:
            return False
        scope = self.stimulus_id if scope is None else scope
        if scope is None:
            return False
        result = move(scope)
        if result is None:
            return False
        self._written(*result)
        return True

    def can_undo(self, scope: Hashable | None = None) -> bool:
        return self.stack.can_undo(self.stimulus_id if scope is None else scope)

    def can_redo(self, scope: Hashable | None = None) -> bool:
        return self.stack.can_redo(self.stimulus_id if scope is None else scope)

    def undo_text(self, scope: Hashable | None = None) -> str:
        return self.stack.undo_text(self.stimulus_id if scope is None else scope)

    def redo_text(self, scope: Hashable | None = None) -> str:
        return self.stack.redo_text(self.stimulus_id if scope is None else scope)

    def absorb(self, command: EditCommand) -> list[Annotation]:
        """Write what another member did (a team project's edit from the server) as `command`: the model
        and its views follow as for an edit made here, but it joins no undo history and is not sent on."""
        written = command.redo()
        self._written(command, written, outbound=False)
        return written

    def _written(self, command: EditCommand, written: Sequence[Annotation], *, outbound: bool = True) -> None:
        """Take what a command wrote into the model, tell the views, and publish what changed."""
        self._absorb(written)
        self._notify()
        for send in self.outbound if outbound else ():
            send(command, written)
        topics = {Topic.LABEL_SETS} if command.changes_label_sets else set()
        if written or not command.changes_label_sets:
            topics |= {Topic.ANNOTATIONS, Topic.ROWS}
        self.changes.publish(topics, stimulus_ids={a.stimulus_id for a in written}, source="annotations")

    def _absorb(self, written: Iterable[Annotation]) -> None:
        for item in written:
            if item.stimulus_id != self.stimulus_id:
                continue
            if item.deleted:
                self._items.pop(item.id, None)
            else:
                self._items[item.id] = item

    # -- label edits on the stimulus shown --------------------------------------------------------
    def _current(self) -> int:
        if self.stimulus_id is None:
            raise AnnotationError("Choose a stimulus before labelling.")
        if not self.ready:
            raise AnnotationError("The labels of this stimulus are still being read; try again in a moment.")
        if not self.annotator:
            raise AnnotationError("Choose an annotator name before labelling.")
        return self.stimulus_id

    def add_label(self, label_set: str, label: str | None, start_s: float | None, end_s: float | None, *,
                  value: str | None = None, note: str | None = None, media_role: str | None = None) -> Annotation:
        stimulus_id = self._current()
        return self.apply(AddLabel(self.store, self.annotator, stimulus_id, label_set, label, start_s, end_s,
                                   value=value, note=note, media_role=media_role))[0]

    def add_point(self, label_set: str, label: str, t: float) -> Annotation:
        """A point label (a moment, start and end both `t`), as a Praat point tier or ELAN keeps one."""
        stimulus_id = self._current()
        return self.apply(AddLabel(self.store, self.annotator, stimulus_id, label_set, label, t, t, point=True))[0]

    def move(self, annotation_id: int, span: tuple[float, float]) -> None:
        """Move a label to `span` (one drag of its body: one undo step)."""
        self._current()
        self.apply(MoveLabel(self.store, self.annotator, self.get(annotation_id), span))

    def resize(self, annotation_id: int, span: tuple[float, float]) -> None:
        """Give a label new edges (one drag of an edge); edges given the wrong way round swap."""
        self._current()
        self.apply(ResizeLabel(self.store, self.annotator, self.get(annotation_id), span))

    def nudge(self, annotation_id: int, edge: str, delta_s: float, limit_s: float = float("inf"),
              grid_s: float = GRID_S) -> bool:
        """Move one edge by `delta_s`; successive nudges of one edge are one undo step. False if nothing moved."""
        self._current()
        command = nudge(self.store, self.annotator, self.get(annotation_id), edge, delta_s, grid_s, limit_s)
        if command is None:
            return False
        self.apply(command)
        return True

    def relabel(self, annotation_ids: Sequence[int], label: str, label_set: str | None = None) -> None:
        self._current()
        items = [self.get(i) for i in annotation_ids]
        if len(items) == 1:
            self.apply(Relabel(self.store, self.annotator, items[0], label, label_set))
        else:
            self.apply(BulkRelabel(self.store, self.annotator, items, label, label_set))

    def set_label_note(self, annotation_id: int, note: str | None) -> None:
        self._current()
        self.apply(SetNote(self.store, self.annotator, self.get(annotation_id), note))

    def delete(self, annotation_ids: Sequence[int]) -> None:
        self._current()
        self.apply(DeleteLabels(self.store, self.annotator, [self.get(i) for i in annotation_ids]))

    def set_whole(self, label_set: str, label: str | None) -> None:
        """Set (None: clear) the annotator's whole-stimulus label in `label_set`."""
        stimulus_id = self._current()
        self.apply(SetWholeLabel(self.store, self.annotator, stimulus_id, label_set, label or None,
                                 self._items.values()))

    def set_note(self, text: str) -> None:
        """Set the annotator's note on the whole stimulus (an empty text clears it)."""
        stimulus_id = self._current()
        self.apply(SetWholeLabel(self.store, self.annotator, stimulus_id, NOTE_SET, None, self._items.values(),
                                 note=text))

    # -- imports ---------------------------------------------------------------------------------
    def import_rows(self, rows: Sequence[Mapping[str, Any]] | pl.DataFrame, source: str) -> WrittenLabels:
        """Add the labels of one annotation file (rows with stimulus_id, annotator, label set, label, times,
        value, note, media role; or a frame of them, see `AnnotationStore.insert_many`) in one transaction,
        leaving out any the store already has (natural key). Each stimulus gets one undo step for its share.
        Returns the labels added."""
        added = self.store.insert_many(None, self.annotator, rows, skip_existing=True)
        shares = added.by_stimulus()
        for stimulus_id, share in shares.items():
            command = ImportedLabels(self.store, self.annotator or share[0].annotator, stimulus_id, share.ids(),
                                     source)
            self.stack.push(command)
            for send in self.outbound:
                send(command, share)
        if added:  # one notice for the whole file, however many stimuli it touched
            self._absorb(shares.get(self.stimulus_id, ()))
            self._notify()
            self.changes.publish({Topic.ANNOTATIONS, Topic.ROWS}, stimulus_ids=shares, source="annotations")
        return added

    # -- label sets ------------------------------------------------------------------------------
    def _edit_set(self, name: str, text: str, change: Callable[[], object]) -> None:
        self.apply(EditLabelSet(self.store, name, text, change))

    def save_label_set(self, name: str, scope: str = "both", description: str | None = None,
                       source: str | None = None) -> None:
        self._edit_set(name, f"Edit label set '{name}'",
                       lambda: self.store.save_label_set(name, scope, description, source))

    def delete_label_set(self, name: str) -> None:
        self._edit_set(name, f"Delete label set '{name}'", lambda: self.store.delete_label_set(name))

    def save_label(self, label_set: str, name: str, **fields: Any) -> None:
        """Create a label, or set its parent/colour/shortcut/description/ord (see `AnnotationStore.save_label`)."""
        self._edit_set(label_set, f"Edit label '{name}'", lambda: self.store.save_label(label_set, name, **fields))

    def add_label_after(self, label_set: str, name: str, parent: str | None, order: Sequence[str] | None) -> None:
        """Create a label under `parent` and, with `order`, put the set's labels in that order: one undo step."""
        def change() -> None:
            self.store.save_label(label_set, name, parent=parent)
            if order is not None:
                self.store.reorder_labels(label_set, order)
        self._edit_set(label_set, f"Add label '{name}'", change)

    def add_labels(self, label_set: str, entries: Sequence[tuple[str, str | None]], *, source: str | None = None) -> int:
        """Add the (name, description) entries a set does not have yet, creating the set (with `source`) if
        there is none: one undo step. Returns how many labels were added."""
        have = {label.name for label in self.store.labels(label_set)}
        new = [(name, description) for name, description in entries if name not in have]
        if not new and self.store.label_set(label_set) is not None:
            return 0

        def change() -> None:
            if self.store.label_set(label_set) is None:
                self.store.save_label_set(label_set, source=source)
            for name, description in new:
                self.store.save_label(label_set, name, description=description)
        self._edit_set(label_set, f"Add {len(new)} labels to '{label_set}'", change)
        return len(new)

    def delete_label(self, label_set: str, name: str) -> None:
        self._edit_set(label_set, f"Delete label '{name}'", lambda: self.store.delete_label(label_set, name))

    def reorder_labels(self, label_set: str, names: Sequence[str]) -> None:
        self._edit_set(label_set, f"Reorder '{label_set}'", lambda: self.store.reorder_labels(label_set, names))

    def rename_label(self, label_set: str, old: str, new: str) -> list[Annotation]:
        """Rename a label; the annotations using it follow, each with a history event. Returns them."""
        return self.apply(RenameLabel(self.store, self.annotator, label_set, old, new))

    def rename_label_set(self, old: str, new: str) -> list[Annotation]:
        return self.apply(RenameLabel(self.store, self.annotator, old, old, new, whole_set=True))

    def load_label_set_file(self, path: Path | str) -> LabelSet:
        """Create or update a label set from its JSON file (one undo step in the label-set history)."""
        data = read_label_set_file(path)
        self._edit_set(data["name"], f"Load '{data['name']}' from {Path(path).name}",
                       lambda: self.store.save_label_set_document(data, Path(path).name))
        found = self.store.label_set(data["name"])
        assert found is not None
        return found

    def undo_label_sets(self) -> bool:
        return self.undo(LABEL_SETS_SCOPE)

    def redo_label_sets(self) -> bool:
        return self.redo(LABEL_SETS_SCOPE)
