"""File > Team…: join the store to a team project, and the status bar's word on the team.

`TeamLink` runs the window's `app.team.TeamSession` when the store has joined a team. The session talks
to the server on its own thread and hands what changes the model (another member's edit, a conflict's
winner) to the GUI thread, where the annotation model lives; the status bar label shows the team, whether
it is online, connecting or offline, how many edits wait to be sent, who else has the stimulus open, and
the last conflict or refusal. `TeamDialog` joins (or leaves) a team, checking the server on the window's
worker (`widgets.tasks.TaskRunner`), so the window keeps answering meanwhile; the address it keeps has no
password (libpq's password file or service file holds it).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QMessageBox,
                               QPushButton, QVBoxLayout, QWidget)

from app.annotation_model import AnnotationModel
from app.team_membership import joined

if TYPE_CHECKING:  # app.team loads the PostgreSQL client: only a store that has joined a team needs it
    from app.team import TeamSession, TeamStatus
from storage.errors import ThinsliceError
from storage.store import Store
from widgets.tasks import TaskRunner

ONLINE_STYLE, OFFLINE_STYLE = "", "color: #a05a00;"


class TeamLink(QObject):
    """The window's team session (none for a local project) and its status bar label."""

    _work = Signal(object)     # a callable to run on the GUI thread
    _status = Signal(object)   # app.team.TeamStatus

    def __init__(self, store: Store, model: AnnotationModel, set_annotator: Callable[[str], None],
                 runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store, self.model, self._set_annotator, self.runner = store, model, set_annotator, runner
        self.session: TeamSession | None = None
        self.label = QLabel()
        self.label.hide()
        self._work.connect(lambda work: work())
        self._status.connect(self._show)
        if joined(store) is not None:
            self.start()

    def start(self) -> None:
        """Start (or restart) the session of the team the store has joined."""
        from app.team import TeamSession
        self.stop()
        self.session = TeamSession(self.store, self.model, post=self._work.emit)
        self.session.status_listeners.append(self._status.emit)
        if self.model.annotator != self.session.member:
            self._set_annotator(self.session.member)
        self.session.start(wait=False)   # the window never waits for the server
        self._show(self.session.status())

    def join(self, url: str, member: str | None, on_joined: Callable[[tuple[str, bool]], None],
             on_error: Callable[[BaseException], None]) -> None:
        """Join the team at `url` on the worker (the server is asked whether the role is a member), then
        start its session here; `on_joined` hears (member, lead)."""
        def joined_now(result: tuple[str, bool]) -> None:
            self.start()
            on_joined(result)
        from app.team import join_team
        self.runner.submit("team-join", lambda: join_team(self.store, url, member), joined_now, on_error)

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()
            self.session = None
        self.label.hide()

    def _show(self, status: TeamStatus) -> None:
        if self.session is None:
            return
        self.label.setText(status.text())
        self.label.setToolTip(status.message or status.text())
        self.label.setStyleSheet(ONLINE_STYLE if status.online else OFFLINE_STYLE)
        self.label.show()

    def open_dialog(self, parent: QWidget | None = None) -> None:
        TeamDialog(self, parent).exec()


class TeamDialog(QDialog):
    """Join a team (address and member name) or leave it."""

    def __init__(self, link: TeamLink, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.link = link
        self.setWindowTitle("Team")
        self.url = QLineEdit()
        self.url.setPlaceholderText("postgresql://host/database?sslmode=require")
        self.member = QLineEdit()
        self.member.setPlaceholderText("your member name (default: the address's user)")
        found = joined(link.store)
        if found is not None:
            self.url.setText(found[0])
            self.member.setText(found[1])
        self.state = QLabel(link.session.status().text() if link.session is not None else "A local project.")
        self.state.setWordWrap(True)
        note = QLabel("The password comes from your password file (~/.pgpass or PGPASSFILE) or a service file;"
                      " Thinslice never stores one.")
        note.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Server", self.url)
        form.addRow("Join as", self.member)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.join_button = QPushButton("Join")
        self.leave_button = QPushButton("Leave team")
        self.leave_button.setEnabled(found is not None)
        buttons.addButton(self.join_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.leave_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.join_button.clicked.connect(self.join)
        self.leave_button.clicked.connect(self.leave)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.state)
        layout.addWidget(buttons)

    def join(self) -> None:
        self.join_button.setEnabled(False)
        self.state.setText("Connecting…")
        self.link.join(self.url.text().strip(), self.member.text().strip() or None, self._joined, self._failed)

    def _joined(self, result: tuple[str, bool]) -> None:
        member, lead = result
        self.join_button.setEnabled(True)
        self.state.setText(f"Joined as {member}{' (lead)' if lead else ''}.")
        self.leave_button.setEnabled(True)

    def _failed(self, exc: BaseException) -> None:
        self.join_button.setEnabled(True)
        self.state.setText("Not joined.")
        QMessageBox.warning(self, "Team", str(exc) if isinstance(exc, ThinsliceError)
                            else f"Joining the team failed: {exc}")

    def leave(self) -> None:
        self.link.stop()
        from app.team import leave_team
        leave_team(self.link.store)
        self.state.setText("A local project.")
        self.leave_button.setEnabled(False)
