"""Putting the Qt-free annotation commands on a QUndoStack."""
from __future__ import annotations

from PySide6.QtGui import QUndoCommand, QUndoStack

from app.annotations import EditCommand


class UndoAdapter(QUndoCommand):
    """A QUndoCommand that runs an `EditCommand`. The first redo already happened in `push_command`."""

    def __init__(self, command: EditCommand) -> None:
        super().__init__(command.text)
        self.command = command
        self._done_once = True

    def redo(self) -> None:
        if self._done_once:
            self._done_once = False  # QUndoStack.push calls redo; the edit was made (and checked) before
            return
        self.command.redo()

    def undo(self) -> None:
        self.command.undo()

    def id(self) -> int:
        return self.command.id()

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 (Qt API)
        return isinstance(other, UndoAdapter) and self.command.merge_with(other.command)


def push_command(stack: QUndoStack, command: EditCommand) -> None:
    """Do `command` now, then put it on `stack`. An edit that fails raises here and never enters the stack
    (Qt would swallow an exception raised inside QUndoStack.push)."""
    command.redo()
    stack.push(UndoAdapter(command))
