"""The NCP-ExploreToM stepper: one or more traces side by side (`widgets.trace_pane`), stepped together.

`BeliefStepperView.set_trace(steps, goal, title)` shows one trace; `set_traces([(label, steps, goal), ...])`
shows several side by side (e.g. two models acting on the same task), stepped together. The view only renders
what `app.beliefs` computed; it emits `stepChanged(int)` when the shown step changes. Its keys are the
keymap's stepper bindings (`app.keymap`): in the main window the window's dispatcher runs them wherever focus
is, and a stepper shown on its own (a comparison, a test) runs them itself.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

from app.beliefs.trace_view import TraceData, load_trace
from app.keymap import STEP_FIRST, STEP_LAST, STEP_NEXT, STEP_PLAY, STEP_PREVIOUS, STEPPER, STEPPER_BINDINGS, Keymap
from widgets.keys import key_sequence_of
from widgets.trace_pane import TracePane

SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
KEYMAP = Keymap(STEPPER_BINDINGS)


class BeliefStepperView(QWidget):
    """Steps through one trace, or several side by side, showing the world and everyone's beliefs."""

    stepChanged = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._panes: list[TracePane] = []
        self._step = 0
        self._count = 0
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._advance)
        self._panes_box = QHBoxLayout()
        self._panes_box.setContentsMargins(0, 0, 0, 0)
        self._build_controls()
        layout = QVBoxLayout(self)
        layout.addLayout(self._panes_box, 1)
        layout.addLayout(self._controls)
        self._actions = {STEP_NEXT: self.step_forward, STEP_PREVIOUS: self.step_back, STEP_FIRST: self.go_first,
                         STEP_LAST: self.go_last, STEP_PLAY: self.toggle_play}

    def heightForWidth(self, width: int) -> int:
        """No taller than its least height: in the page's scroll area it takes the room there is, and its panes
        share that by their splitters, rather than asking what every wrapped line would like (which pushed
        the belief table below the fold on a laptop)."""
        return self.minimumSizeHint().height()

    def actions(self) -> dict[str, Callable[[], None]]:
        """What each stepper action of the keymap does (the window's key dispatcher runs them)."""
        return dict(self._actions)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Children take no keyboard focus, so a key pressed on a stepper shown on its own reaches this view.
        action = self._actions.get(KEYMAP.action_for(key_sequence_of(event), STEPPER) or "")
        if action is None:
            super().keyPressEvent(event)
            return
        action()
        event.accept()

    def _build_controls(self) -> None:
        self._controls = QHBoxLayout()
        self.first_button = QPushButton("⇤")
        self.back_button = QPushButton("◀")
        self.play_button = QPushButton("▶ Play")
        self.forward_button = QPushButton("▶")
        self.last_button = QPushButton("⇥")
        for button, slot, action, what in ((self.first_button, self.go_first, STEP_FIRST, "First step"),
                                           (self.back_button, self.step_back, STEP_PREVIOUS, "Previous step"),
                                           (self.play_button, self.toggle_play, STEP_PLAY, "Play / pause"),
                                           (self.forward_button, self.step_forward, STEP_NEXT, "Next step"),
                                           (self.last_button, self.go_last, STEP_LAST, "Last step")):
            tip = f"{what} ({' / '.join(KEYMAP.sequences_for(action))})"
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            self._controls.addWidget(button)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.slider.valueChanged.connect(self.set_step)
        self._controls.addWidget(self.slider, 1)
        self.step_label = QLabel("step 0 / 0")
        self._controls.addWidget(self.step_label)
        self.speed = QComboBox()
        self.speed.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        for value in SPEEDS:
            self.speed.addItem(f"{value:g} steps/s", value)
        self.speed.setCurrentIndex(SPEEDS.index(2.0))
        self.speed.currentIndexChanged.connect(self._speed_changed)
        self._controls.addWidget(self.speed)

    # ----- public API ---------------------------------------------------------------------------------
    def set_trace(self, steps: list[dict], goal: list | dict | None = None, title: str = "") -> None:
        """Show one trace (steps in the golden-trace shape) with an optional goal."""
        self._set_panes([load_trace(title, steps, goal)], compact=False)

    def set_traces(self, traces: Sequence[tuple[str, list[dict], list | dict | None]], *, compact: bool = False) -> None:
        """Show several traces side by side, stepped together (a shorter one stays on its last step); each
        pane lists its steps in a tab of its own when there are several, or when `compact` (a narrow place)."""
        self._set_panes([load_trace(label, steps, goal) for label, steps, goal in traces],
                        compact=compact or len(traces) > 1)

    def step(self) -> int:
        return self._step

    def step_count(self) -> int:
        return self._count

    def pane_count(self) -> int:
        return len(self._panes)

    def pane(self, index: int = 0) -> TracePane:
        return self._panes[index]

    def set_step(self, step: int) -> None:
        """Show the state after `step` (clamped to the trace); emits `stepChanged` when it moves."""
        if self._count == 0:
            return
        step = max(0, min(int(step), self._count - 1))
        changed = step != self._step
        self._step = step
        for pane in self._panes:
            pane.show_step(step)
        self.slider.blockSignals(True)
        self.slider.setValue(step)
        self.slider.blockSignals(False)
        self.step_label.setText(f"step {step} / {self._count - 1}")
        if changed:
            self.stepChanged.emit(step)

    def step_forward(self) -> None:
        self.set_step(self._step + 1)

    def step_back(self) -> None:
        self.set_step(self._step - 1)

    def go_first(self) -> None:
        self.set_step(0)

    def go_last(self) -> None:
        self.set_step(self._count - 1)

    def is_playing(self) -> bool:
        return self._timer.isActive()

    def toggle_play(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
        elif self._count:
            if self._step >= self._count - 1:
                self.set_step(0)
            self._timer.start(int(1000 / self.speed.currentData()))
        self.play_button.setText("❚❚ Pause" if self._timer.isActive() else "▶ Play")

    def set_speed(self, steps_per_second: float) -> None:
        """Choose the closest offered play speed."""
        nearest = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - steps_per_second))
        self.speed.setCurrentIndex(nearest)

    # ----- internals ----------------------------------------------------------------------------------
    def _set_panes(self, datas: list[TraceData], compact: bool) -> None:
        self._timer.stop()
        self.play_button.setText("▶ Play")
        for pane in self._panes:
            self._panes_box.removeWidget(pane)
            pane.deleteLater()
        self._panes = []
        for data in datas:
            pane = TracePane(compact)
            pane.set_data(data)
            pane.stepPicked.connect(self.set_step)
            self._panes_box.addWidget(pane, 1)
            self._panes.append(pane)
        self._count = max((d.count for d in datas), default=0)
        self.slider.setRange(0, max(0, self._count - 1))
        self._step = -1
        self.set_step(0)
        self._step = max(self._step, 0)

    def _advance(self) -> None:
        if self._step >= self._count - 1:
            self.toggle_play()
            return
        self.step_forward()

    def _speed_changed(self) -> None:
        if self._timer.isActive():
            self._timer.start(int(1000 / self.speed.currentData()))
