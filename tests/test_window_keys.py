"""Every key of the one keymap in the real window, pressed where focus really is after clicking a row."""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPushButton

from app.import_service import run_import
from app.keymap import default_keymap
from storage.importers.common import ImportOptions
from storage.store import Store
from widgets.keys import key_press_for

SETUP = [{"action": "location_declaration", "args": ["Anne", "kitchen"], "kwargs": {}},
         {"action": "location_declaration", "args": ["Beth", "kitchen"], "kwargs": {}},
         {"action": "location_declaration", "args": ["ball", "kitchen"], "kwargs": {"is_thinking_entity": False}}]
ATTEMPT = [{"action": "move_object_container", "args": ["Anne", "ball", "basket"], "kwargs": {}},
           {"action": "leave_room", "args": ["Beth", "kitchen"], "kwargs": {}},
           {"action": "move_object_container", "args": ["Anne", "ball", "box"], "kwargs": {}}]


def press(qtbot, sequence: str) -> None:
    """Press a key on whatever widget has the keyboard focus now, as a person would."""
    widget = QApplication.focusWidget()
    assert widget is not None, "nothing has the keyboard focus"
    key, modifiers = key_press_for(sequence)
    qtbot.keyClick(widget, key, modifiers)


def become_active(qtbot, window) -> None:
    """Wait until `window` has the keyboard (a window manager gives it at once; bare X needs asking again)."""
    def active() -> bool:
        window.activateWindow()
        return window.isActiveWindow()
    qtbot.waitUntil(active, timeout=5000)


def click_row(qtbot, win, row: int = 0) -> None:
    """Click a row of the stimulus table: the table takes the focus, the stimulus is selected."""
    index = win.table_model.index(row, 0)
    qtbot.waitUntil(lambda: win.table.visualRect(index).isValid(), timeout=5000)
    qtbot.mouseClick(win.table.viewport(), Qt.MouseButton.LeftButton, pos=win.table.visualRect(index).center())
    qtbot.waitUntil(lambda: win.table.hasFocus(), timeout=5000)


@pytest.fixture
def dyad_window(qtbot, dyad_store, window_for):
    win = window_for(dyad_store, annotator="ana")
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 1, timeout=10000)
    click_row(qtbot, win)
    page = win.media_page
    qtbot.waitUntil(lambda: win.stimulus_view.current_page() is page and page.player.waveform.lane_count == 2
                    and not page.busy(), timeout=30000)
    assert QApplication.focusWidget() is win.table
    return win


def live_labels(store: Store) -> list[tuple]:
    return store.cursor().execute("SELECT label, start_s, end_s FROM annotation WHERE deleted_at IS NULL"
                                  " ORDER BY id").fetchall()


def test_label_keys_while_playing_from_the_table_add_a_label(qtbot, dyad_window, dyad_store):
    clock = dyad_window.media_page.player.clock
    press(qtbot, "Space")
    assert clock.playing
    qtbot.waitUntil(lambda: clock.position > 0.6, timeout=10000)
    press(qtbot, "1")  # "laugh" in the vocal cues: marks its start
    started = clock.position
    qtbot.waitUntil(lambda: clock.position > started + 0.5, timeout=10000)
    press(qtbot, "1")  # and its end
    labels = live_labels(dyad_store)
    assert [label for label, _s, _e in labels] == ["laugh"]
    assert labels[0][2] > labels[0][1]
    assert QApplication.focusWidget() is dyad_window.table  # nothing took the focus away


def test_home_and_end_from_the_table_go_to_the_clip_start_and_end(qtbot, dyad_window):
    clock = dyad_window.media_page.player.clock
    press(qtbot, "Right")
    assert clock.position == pytest.approx(1.0, abs=0.05)
    press(qtbot, "End")
    assert clock.position == pytest.approx(clock.duration)
    press(qtbot, "Home")
    assert clock.position == 0.0


def test_delete_from_the_player_page_deletes_the_selected_label(qtbot, dyad_window, dyad_store):
    page = dyad_window.media_page
    tiers = page.annotation.tiers
    tiers.set_current_label("vocal cues", "sigh")
    row = tiers.tier_row("vocal cues", "ana")
    start, end = tiers.map_to_widget(1.0, row).toPoint(), tiers.map_to_widget(2.0, row).toPoint()
    qtbot.mousePress(tiers.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(tiers.viewport(), pos=end)
    qtbot.mouseRelease(tiers.viewport(), Qt.MouseButton.LeftButton, pos=end)
    assert [label for label, _s, _e in live_labels(dyad_store)] == ["sigh"]
    header = dyad_window.stimulus_view.header
    qtbot.waitUntil(lambda: "1 annotations" in header.text(), timeout=5000)  # the header's count follows
    qtbot.waitUntil(lambda: dyad_window.history.tree.topLevelItemCount() >= 1, timeout=5000)  # and the history
    qtbot.mouseClick(tiers.viewport(), Qt.MouseButton.LeftButton, pos=tiers.map_to_widget(1.5, row).toPoint())
    # the player takes the focus, as after a click on its transport bar
    qtbot.mouseClick(page.player, Qt.MouseButton.LeftButton)
    page.player.setFocus()
    qtbot.waitUntil(lambda: page.player.hasFocus(), timeout=5000)
    press(qtbot, "Delete")
    qtbot.waitUntil(lambda: live_labels(dyad_store) == [], timeout=5000)
    qtbot.waitUntil(lambda: "0 annotations" in header.text(), timeout=5000)


def test_help_lists_every_key_and_closes_with_the_key_that_opened_it(qtbot, dyad_window):
    overlay = dyad_window.help_overlay
    press(qtbot, "F1")
    assert overlay.isVisible()
    text = overlay.label.text()
    for needed in ("Playback", "Annotate", "Belief stepper", "Presentation", "Window", "Labels (vocal cues)",
                   "laugh", "Delete", "Ctrl+I", "F5"):
        assert needed in text, needed
    assert overlay.geometry() == dyad_window.rect()
    press(qtbot, "F1")
    assert not overlay.isVisible()
    press(qtbot, "?")
    assert overlay.isVisible()
    press(qtbot, "Escape")
    assert not overlay.isVisible()
    dyad_window.help_action.trigger()  # Help > Keyboard shortcuts: the same list
    assert overlay.isVisible()
    press(qtbot, "?")
    assert not overlay.isVisible()


def test_every_window_binding_is_on_a_menu_item():
    from app.keymap import WINDOW
    keymap = default_keymap()
    assert all(b.context == WINDOW for b in keymap if b.group == "Window")
    assert keymap.action_for("Space", "stepper") == "stepper.play"
    assert keymap.action_for("Space", "media") == "playback.toggle"


def test_presentation_goes_full_screen_from_f5_the_menu_and_the_button(qtbot, main_window):
    click_row(qtbot, main_window)
    qtbot.waitUntil(lambda: main_window.compare.detail is not None, timeout=10000)
    press(qtbot, "F5")
    presentation = main_window.compare.presentation
    assert presentation is not None
    qtbot.waitUntil(lambda: presentation.isFullScreen(), timeout=5000)
    become_active(qtbot, presentation)
    qtbot.keyClick(presentation, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: main_window.compare.presentation is None, timeout=5000)
    main_window.present_action.trigger()
    presentation = main_window.compare.presentation
    qtbot.waitUntil(lambda: presentation.isFullScreen(), timeout=5000)
    become_active(qtbot, presentation)
    qtbot.keyClick(presentation, Qt.Key.Key_F5)  # F5 leaves as well
    qtbot.waitUntil(lambda: main_window.compare.presentation is None, timeout=5000)
    button = next(b for b in main_window.compare.findChildren(QPushButton) if b.text().startswith("Present"))
    button.click()
    presentation = main_window.compare.presentation
    qtbot.waitUntil(lambda: presentation is not None and presentation.isFullScreen(), timeout=5000)
    presentation.leave()


@pytest.fixture
def ncp_store(tmp_path):
    root = tmp_path / "ncp"
    (root / "tasks").mkdir(parents=True)
    (root / "traces").mkdir()
    (root / "tasks" / "t1.json").write_text(json.dumps({
        "task_id": "t1", "goal": ["Beth believes that ball is in the basket"], "false_belief": True,
        "initial_steps": SETUP}))
    (root / "traces" / "runs.jsonl").write_text(json.dumps({"model": "m", "task_id": "t1", "steps": ATTEMPT}) + "\n")
    store = Store.open(tmp_path / "s.duckdb")
    run_import(store, "ncp", root, ImportOptions(dataset_name="NCP keys"))
    yield store
    store.close()


def test_stepper_keys_work_from_the_table_after_clicking_a_task(qtbot, ncp_store, window_for):
    win = window_for(ncp_store)
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 1, timeout=10000)
    click_row(qtbot, win)
    stepper = win.ncp_page.stepper
    qtbot.waitUntil(lambda: win.stimulus_view.current_page() is win.ncp_page and stepper.step_count() > 2,
                    timeout=10000)
    assert QApplication.focusWidget() is win.table
    press(qtbot, "Home")
    assert stepper.step() == 0
    press(qtbot, "Right")
    assert stepper.step() == 1
    press(qtbot, "Space")
    assert stepper.is_playing()
    press(qtbot, "Space")
    assert not stepper.is_playing()
    press(qtbot, "End")
    assert stepper.step() == stepper.step_count() - 1
    press(qtbot, "F1")  # the list of keys on the NCP page too, without a clip's label keys
    assert win.help_overlay.isVisible() and "Belief stepper" in win.help_overlay.label.text()
    assert "Labels" not in win.help_overlay.label.text()
    press(qtbot, "F1")
    assert not win.help_overlay.isVisible()


def test_keys_type_into_the_search_box(qtbot, dyad_window):
    clock = dyad_window.media_page.player.clock
    box = dyad_window.filter_bar.text
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: box.hasFocus(), timeout=5000)
    press(qtbot, "Space")
    press(qtbot, "J")
    assert box.text() == " j" and not clock.playing


def test_playback_keys_work_from_the_tiers(qtbot, dyad_window):
    tiers = dyad_window.media_page.annotation.tiers
    clock = dyad_window.media_page.player.clock
    row = tiers.tier_row("vocal cues", "ana")
    qtbot.mouseClick(tiers.viewport(), Qt.MouseButton.LeftButton, pos=tiers.map_to_widget(4.0, row).toPoint())
    tiers.setFocus()
    qtbot.waitUntil(lambda: tiers.hasFocus() or tiers.viewport().hasFocus(), timeout=5000)
    press(qtbot, "End")
    assert clock.position == pytest.approx(clock.duration)
    press(qtbot, "Home")
    press(qtbot, "Space")
    assert clock.playing
    press(qtbot, "K")
    assert not clock.playing


@pytest.mark.parametrize("kind", ["story", "agentviss_scene"])
def test_the_list_of_keys_opens_on_story_and_scene_pages(qtbot, tmp_path, window_for, kind):
    from storage.importers.plan import DatasetInfo, ImportPlan
    from storage.importers.writer import write_plan

    plan = ImportPlan(DatasetInfo("Pages", "generic", tmp_path, "test"), "test")
    plan.add("stimuli", [{"external_id": "s1", "kind": kind, "text": "Maren hid the key in the tin."}])
    store = Store.open(tmp_path / "pages.duckdb")
    write_plan(store, plan)
    win = window_for(store)
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 1, timeout=10000)
    click_row(qtbot, win)
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None, timeout=10000)
    press(qtbot, "F1")
    assert win.help_overlay.isVisible() and "Presentation" in win.help_overlay.label.text()
    press(qtbot, "Down")  # scrolls the list, leaves it open
    assert win.help_overlay.isVisible()
    press(qtbot, "F1")
    assert not win.help_overlay.isVisible()
    win.close()
    store.close()


def test_keys_work_from_a_floating_dock(qtbot, dyad_window):
    clock = dyad_window.media_page.player.clock
    dock = dyad_window.predictions_dock
    dock.setFloating(True)
    dock.show()
    tree = dyad_window.predictions.tree
    become_active(qtbot, dock)
    tree.setFocus()
    qtbot.waitUntil(lambda: tree.hasFocus(), timeout=5000)
    press(qtbot, "End")
    assert clock.position == pytest.approx(clock.duration)
    press(qtbot, "Home")
    assert clock.position == 0.0
