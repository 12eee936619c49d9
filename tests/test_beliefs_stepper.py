"""The stepper as a person uses it: keys step, false beliefs are marked, the goal checklist follows."""
from __future__ import annotations

from PySide6.QtCore import Qt

from widgets.belief_stepper import KEYMAP, BeliefStepperView

TOMI = [
    {"action": "enter_room", "args": ["Anne", "living room"]},
    {"action": "enter_room", "args": ["Beth", "living room"]},
    {"action": "move_object_container", "args": ["Beth"], "kwargs": {"obj": "ball", "container": "box"}},
    {"action": "leave_room", "args": ["Beth", "living room"]},
    {"action": "move_object_container", "args": ["Anne"], "kwargs": {"obj": "ball", "container": "basket"}},
    {"action": "enter_room", "args": ["Beth", "living room"]},
    {"action": "leave_room", "args": ["Carl", "living room"]},
]
GOAL = {"atoms": ["Beth believes that ball is in the box"], "false_belief": True}


def _view(qtbot, steps=TOMI, goal=GOAL) -> BeliefStepperView:
    view = BeliefStepperView()
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.set_trace(steps, goal, "tomi")
    view.show()
    view.setFocus()
    return view


def _cell(view, holder: str, entity: str):
    model = view.pane().first_model
    rows = [model.headerData(r, Qt.Orientation.Vertical) for r in range(model.rowCount())]
    columns = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    return model.index(rows.index(f"{holder} believes"), columns.index(entity))


def test_keys_step_forward_back_and_jump(qtbot):
    view = _view(qtbot)
    with qtbot.waitSignal(view.stepChanged) as signal:
        qtbot.keyClick(view, Qt.Key.Key_Right)
    assert signal.args == [1] and view.step() == 1
    qtbot.keyClick(view, Qt.Key.Key_N)
    assert view.step() == 2
    qtbot.keyClick(view, Qt.Key.Key_Left)
    qtbot.keyClick(view, Qt.Key.Key_P)
    assert view.step() == 0
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.step() == len(TOMI) - 1
    assert view.slider.value() == len(TOMI) - 1
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.step() == 0
    assert "Step 0" in view.pane().header.text()
    assert {binding.sequence for binding in KEYMAP} >= {"Right", "Left", "N", "P", "Home", "End", "Space"}


def test_space_plays_to_the_end(qtbot):
    view = _view(qtbot)
    view.set_speed(16)
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert view.is_playing()
    qtbot.waitUntil(lambda: view.step() == len(TOMI) - 1 and not view.is_playing(), timeout=5000)


def test_false_belief_cell_is_marked_and_explained(qtbot):
    view = _view(qtbot)
    view.set_step(4)
    model = view.pane().first_model
    beth_ball = _cell(view, "Beth", "ball")
    anne_ball = _cell(view, "Anne", "ball")
    assert model.false_props(beth_ball.row(), beth_ball.column()) == ["container_location"]
    assert model.data(beth_ball).startswith("⚠")
    assert "FALSE BELIEF" in model.data(beth_ball, Qt.ItemDataRole.ToolTipRole)
    assert model.false_props(anne_ball.row(), anne_ball.column()) == []
    assert model.is_changed(anne_ball.row(), anne_ball.column())
    assert "False belief" in view.pane().header.text()
    view.set_step(2)
    assert model.false_props(beth_ball.row(), beth_ball.column()) == []


def test_goal_checklist_follows_the_step(qtbot):
    view = _view(qtbot)
    goal = view.pane().goal
    view.set_step(1)
    assert goal.atom_states() == [False] and not goal.satisfied()
    view.set_step(2)
    assert goal.atom_states() == [True] and not goal.satisfied()  # true but not yet false
    view.set_step(4)
    assert goal.atom_states() == [True] and goal.satisfied()


def test_failed_step_and_quirk_are_shown(qtbot):
    view = _view(qtbot, steps=TOMI)
    items = view.pane().step_list
    assert "✗" in items.item(6).text() and "Carl" in items.item(6).toolTip()
    view.set_step(6)
    assert "failed" in view.pane().header.text()
    view.set_step(5)  # Beth enters: Anne learns only second-order facts about the room
    assert view.pane().quirk_badge.isVisibleTo(view)
    assert "quirk" in view.pane().quirk_badge.text().lower()


def test_clicking_a_step_in_the_list_jumps_there(qtbot):
    view = _view(qtbot)
    with qtbot.waitSignal(view.stepChanged):
        view.pane().step_list.setCurrentRow(3)
    assert view.step() == 3


def test_two_traces_side_by_side_step_together(qtbot):
    view = BeliefStepperView()
    qtbot.addWidget(view)
    view.set_traces([("model A", TOMI, GOAL), ("model B", TOMI[:3], GOAL)])
    assert view.pane_count() == 2 and view.step_count() == len(TOMI)
    view.set_step(5)
    assert "Step 5" in view.pane(0).header.text()
    assert "Step 2" in view.pane(1).header.text() and "ended" in view.pane(1).header.text()


def test_malformed_trace_is_reported_in_the_view(qtbot):
    view = BeliefStepperView()
    qtbot.addWidget(view)
    view.set_trace([{"action": "fly", "args": []}], None, "bad")
    assert "step 0" in view.pane().header.text() and view.step_count() == 0


def test_step_header_grows_to_show_all_its_lines_in_a_narrow_pane(qtbot):
    view = BeliefStepperView()
    qtbot.addWidget(view)
    view.set_traces([("model A", TOMI, GOAL), ("model B", TOMI, GOAL)])
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    header = view.pane(0).header
    view.set_step(0)
    short = header.height()
    view.set_step(4)  # adds the story sentence, who saw it, and the false-belief line
    assert "False belief" in header.text()
    assert header.height() > short
    line = header.fontMetrics().lineSpacing()
    assert header.height() >= 4 * line  # nothing cut off: step, story, witnesses, false belief
    view.set_step(0)
    assert header.height() == short
    image = header.grab().toImage()
    assert any(image.pixelColor(x, y).lightness() < 100 for x in range(0, image.width(), 3)
               for y in range(image.height()))  # text is drawn


TALK = [
    {"action": "enter_room", "args": ["Anne", "kitchen"]},
    {"action": "enter_room", "args": ["Beth", "kitchen"]},
    {"action": "enter_room", "args": ["Dana", "hall"]},
    {"action": "broadcast_communication", "args": ["Anne", "recipe"], "kwargs": {"people_peeking": ["Dana"]}},
    {"action": "broadcast_communication", "args": ["Beth", ["ball", "container_location", "box", False]]},
    {"action": "broadcast_communication", "args": ["Anne", ["ball", "container_location", "basket", False]]},
    {"action": "broadcast_communication", "args": ["Beth", "recipe"]},
]


def test_talk_shows_who_heard_it_and_what_each_one_knows(qtbot):
    view = _view(qtbot, steps=TALK, goal=None)
    view.set_step(3)
    header = view.pane().header.text()
    assert "Heard by:</b> Anne, Beth" in header and "peeking:</b> Dana" in header
    model = view.pane().first_model
    assert model.headerData(model.columnCount() - 1, Qt.Orientation.Horizontal) == "topics heard"
    heard = model.index(3, model.columnCount() - 1)   # rows: world, Anne, Beth, Dana
    assert model.headerData(3, Qt.Orientation.Vertical) == "Dana believes" and model.data(heard) == "recipe"
    assert "heard about: recipe" in model.data(heard, Qt.ItemDataRole.ToolTipRole)
    view.set_step(5)   # told facts that add to a set: each believes the ball is in one of two places
    assert model.data(_cell(view, "Anne", "ball")) == "in basket or box"
    view.set_step(6)   # everyone already knows: nothing is told, and the header says why
    assert "failed" in view.pane().header.text() and "news to nobody" in view.pane().header.text()
