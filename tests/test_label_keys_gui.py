"""Label keys in the real window as an annotator uses them: a held key, hold mode, point labels, the list of
keys, and keys for a label set of sixty labels. Keys are real QKeyEvents sent to whatever has the focus,
with the auto-repeat flag a held key gets from the keyboard."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from app.annotations import REACTION_OFFSET_S
from storage.store import Store
from test_label_snap_gui import drag
from test_window_keys import become_active, click_row, live_labels, press


@pytest.fixture
def dyad_window(qtbot, dyad_store, window_for):
    win = window_for(dyad_store, annotator="ana")
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 1, timeout=10000)
    click_row(qtbot, win)
    page = win.media_page
    qtbot.waitUntil(lambda: win.stimulus_view.current_page() is page and page.player.waveform.lane_count == 2
                    and not page.busy(), timeout=30000)
    return win


def send_key(kind: QEvent.Type, key: Qt.Key, text: str, repeat: bool = False,
             modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """One key event to the widget with the focus, as the window system delivers it."""
    widget = QApplication.focusWidget()
    assert widget is not None, "nothing has the keyboard focus"
    QApplication.sendEvent(widget, QKeyEvent(kind, key, modifiers, text, repeat))


def hold(qtbot, clock, key: Qt.Key, text: str, seconds: float, repeats: bool = True) -> tuple[float, float]:
    """Hold a key while the clip plays for `seconds` of clip time, the keyboard repeating it as X does
    (a release and a press, both marked auto-repeat, every few tens of milliseconds); returns the clock
    at the press and at the release."""
    send_key(QEvent.Type.KeyPress, key, text)
    pressed = clock.position
    while clock.position < pressed + seconds:
        qtbot.wait(30)
        if repeats:
            send_key(QEvent.Type.KeyRelease, key, text, repeat=True)
            send_key(QEvent.Type.KeyPress, key, text, repeat=True)
    released = clock.position
    send_key(QEvent.Type.KeyRelease, key, text)
    return pressed, released


def start_playing(qtbot, win, from_s: float = 0.5) -> object:
    clock = win.media_page.player.clock
    press(qtbot, "Space")
    assert clock.playing
    qtbot.waitUntil(lambda: clock.position > from_s, timeout=10000)
    return clock


def test_a_held_label_key_makes_one_label_from_press_to_release(qtbot, dyad_window, dyad_store):
    clock = start_playing(qtbot, dyad_window)
    pressed, released = hold(qtbot, clock, Qt.Key.Key_1, "1", 1.0)
    labels = live_labels(dyad_store)
    assert [label for label, _s, _e in labels] == ["laugh"]   # one label, not a shower of fragments
    _label, start, end = labels[0]
    assert start == pytest.approx(pressed - REACTION_OFFSET_S, abs=0.06)
    assert end == pytest.approx(released - REACTION_OFFSET_S, abs=0.06)
    assert not dyad_window.media_page.annotation.live.pending()   # nothing left dangling
    # a quick tap still waits for the second tap, as before, and the begun label is drawn up to the playhead
    tiers = dyad_window.media_page.annotation.tiers
    assert tiers.open_marks() == {}
    press(qtbot, "2")
    assert list(dyad_window.media_page.annotation.live.pending()) == ["sigh"]
    assert len(live_labels(dyad_store)) == 1
    assert list(tiers.open_marks()) == ["sigh"]
    started = tiers.open_marks()["sigh"]
    qtbot.waitUntil(lambda: clock.position > started + REACTION_OFFSET_S + 0.5, timeout=10000)
    row = tiers.tier_row("vocal cues", "ana")
    image = tiers.viewport().grab().toImage()
    y = tiers.map_to_widget(0.0, row).toPoint().y()
    inside = tiers.map_to_widget(started + 0.3, row).toPoint().x()
    beyond = tiers.map_to_widget(clock.position + 0.8, row).toPoint().x()
    assert image.pixelColor(inside, y) != image.pixelColor(beyond, y)   # a ghost of "sigh" so far, none past it
    press(qtbot, "K")   # stopping drops it, from the tiers too
    assert tiers.open_marks() == {}


def test_hold_mode_marks_each_press_until_its_release_and_is_remembered(qtbot, dyad_window, dyad_store,
                                                                       window_for):
    palette = dyad_window.media_page.annotation.palette
    palette.key_mode.setCurrentIndex(palette.key_mode.findData("hold"))
    dyad_window.table.setFocus()
    qtbot.waitUntil(lambda: dyad_window.table.hasFocus(), timeout=5000)
    clock = start_playing(qtbot, dyad_window)
    # held shorter than the keyboard's repeat delay: no repeats, yet the release ends it in hold mode
    pressed, released = hold(qtbot, clock, Qt.Key.Key_2, "2", 0.4, repeats=False)
    labels = live_labels(dyad_store)
    assert [label for label, _s, _e in labels] == ["sigh"]
    assert labels[0][2] - labels[0][1] == pytest.approx(released - pressed, abs=0.06)
    press(qtbot, "K")
    dyad_window.close()
    again = window_for(dyad_store, annotator="ana")
    assert again.media_page.annotation.palette.hold_keys()


def test_question_mark_closes_the_list_of_keys_it_opened_with_shift_pressed_first(qtbot, dyad_window):
    overlay = dyad_window.help_overlay
    shift = Qt.KeyboardModifier.ShiftModifier
    for _ in range(2):  # open, then close: each time Shift goes down before "?", as on a real keyboard
        opened = overlay.isVisible()
        send_key(QEvent.Type.KeyPress, Qt.Key.Key_Shift, "", modifiers=shift)
        assert overlay.isVisible() is opened   # Shift alone is on the way to "?": it closes nothing
        press(qtbot, "?")
        send_key(QEvent.Type.KeyRelease, Qt.Key.Key_Shift, "")
        assert overlay.isVisible() is not opened


def test_a_point_label_from_the_dot_key_and_from_shift_click(qtbot, dyad_window, dyad_store):
    page = dyad_window.media_page
    tiers = page.annotation.tiers
    page.player.clock.seek(2.0)
    press(qtbot, ".")   # the current label ("laugh", the palette's first) at the playhead
    qtbot.waitUntil(lambda: len(live_labels(dyad_store)) == 1, timeout=5000)
    assert live_labels(dyad_store) == [("laugh", 2.0, 2.0)]
    row = tiers.tier_row("vocal cues", "ana")
    spot = tiers.map_to_widget(4.0, row).toPoint()
    qtbot.mouseClick(tiers.viewport(), Qt.MouseButton.LeftButton, pos=spot)   # a plain click only seeks
    assert len(live_labels(dyad_store)) == 1
    qtbot.mouseClick(tiers.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, pos=spot)
    qtbot.waitUntil(lambda: len(live_labels(dyad_store)) == 2, timeout=5000)
    label, start, end = live_labels(dyad_store)[1]
    assert label == "laugh" and start == end and start == pytest.approx(4.0, abs=0.05)
    # the point is drawn and can be picked and dragged as a whole
    point = max(tiers.labels(), key=lambda a: a.id)
    qtbot.mouseClick(tiers.viewport(), Qt.MouseButton.LeftButton,
                     pos=tiers.map_to_widget(point.start_s, row).toPoint())
    assert tiers.selected_ids() == [point.id]
    drag(qtbot, tiers, point.start_s, point.start_s + 0.5, row, shift=False)   # a mouse drag of the pin
    assert live_labels(dyad_store)[1][1:] == (pytest.approx(start + 0.5, abs=0.02),) * 2
    press(qtbot, "Ctrl+Z")
    assert live_labels(dyad_store)[1][1:] == (start, end)
    # Ctrl with a label's key: that label as a point, while playing too, and no range left begun
    page.player.clock.seek(1.0)
    press(qtbot, "Ctrl+2")
    assert live_labels(dyad_store)[2] == ("sigh", 1.0, 1.0)
    clock = start_playing(qtbot, dyad_window, 1.5)
    before = clock.position
    press(qtbot, "Ctrl+5")
    after = clock.position   # the press is handled between the two (a store write takes its time)
    press(qtbot, "K")
    label, start, end = live_labels(dyad_store)[3]
    assert label == "hesitation" and start == end
    assert before - REACTION_OFFSET_S - 0.06 <= start <= after - REACTION_OFFSET_S + 0.01
    assert not page.annotation.live.pending()


def test_tier_names_are_in_the_header_column_not_over_labels(qtbot, dyad_window, dyad_store):
    tiers = dyad_window.media_page.annotation.tiers
    dyad_window.media_page.annotation.model.add_label("vocal cues", "laugh", 0.0, 2.0)
    qtbot.waitUntil(lambda: len(tiers.labels()) == 1, timeout=5000)
    assert tiers.tier_names() == ["ana \u00b7 vocal cues"]
    # the column left of time 0 holds the names; the label starts at its right edge
    column = tiers.plotItem.getAxis("left").sceneBoundingRect()
    label_left = tiers.view_box().mapViewToScene(tiers.view_box().mapSceneToView(column.topRight())).x()
    assert column.width() >= 70 and tiers.map_to_widget(0.0, 0.5).x() >= tiers.mapFromScene(column.topRight()).x()
    assert label_left == pytest.approx(column.right(), abs=1.0)
    image = tiers.grab().toImage()
    name_x = int(tiers.mapFromScene(column.center()).x())
    assert any(image.pixelColor(name_x, y).lightness() < 110 for y in range(image.height() // 2))  # text drawn


@pytest.fixture
def echomind_window(qtbot, sample_store_copy: Store, window_for):
    win = window_for(sample_store_copy, annotator="ana")
    qtbot.waitUntil(lambda: win.table_model.rowCount() > 0, timeout=10000)
    assert win.select_dataset("EchoMind (sample)")
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 17, timeout=10000)
    page = win.media_page
    (script,) = sample_store_copy.cursor().execute(
        "SELECT min(id) FROM stimulus WHERE kind = 'echomind_script'").fetchone()
    win.select_stimulus_id(script)
    qtbot.waitUntil(lambda: win.stimulus_view.current_page() is page and page.player.waveform.lane_count > 0
                    and not page.busy(), timeout=30000)
    become_active(qtbot, win)
    win.table.setFocus()
    qtbot.waitUntil(lambda: win.table.hasFocus(), timeout=5000)
    return win


def test_the_sixty_echomind_labels_get_digit_keys_and_any_is_found_by_typing(qtbot, echomind_window,
                                                                           sample_store_copy):
    annotation = echomind_window.media_page.annotation
    assert annotation.palette.label_set == "EchoMind vocal attributes"
    keys = dict((label, key) for key, label in annotation.palette.shortcuts())
    digits = {label for label, key in keys.items() if key.isdigit()}
    assert len(digits) == 10 and not digits & {"speaker", "emotion", "weather"}   # leaves, not headings
    assert echomind_window.keymap.action_for(keys["male"], "media") == "annotate.label:male"
    before = live_labels(sample_store_copy)
    clock = start_playing(qtbot, echomind_window, 0.3)
    first_key = keys["male"]
    pressed, released = hold(qtbot, clock, Qt.Key(ord(first_key)), first_key, 0.6)
    assert live_labels(sample_store_copy)[len(before):] == [("male", pytest.approx(pressed - REACTION_OFFSET_S, abs=0.06),
                                                             pytest.approx(released - REACTION_OFFSET_S, abs=0.06))]
    focus = QApplication.focusWidget()
    # a label with no key: "/" puts the keyboard in the palette's search, Enter marks it from the "/"
    for _ in range(2):
        press(qtbot, "/")
        search = annotation.palette.search
        assert search.hasFocus() and clock.playing
        qtbot.keyClicks(search, "thunder")
        qtbot.keyClick(search, Qt.Key.Key_Return)
        assert QApplication.focusWidget() is focus
        qtbot.wait(300)
    added = live_labels(sample_store_copy)[len(before):]
    assert [label for label, _s, _e in added] == ["male", "thunderstorm"] and added[1][2] > added[1][1]
    press(qtbot, "/")
    qtbot.keyClicks(annotation.palette.search, "rain")
    qtbot.keyClick(annotation.palette.search, Qt.Key.Key_Escape)   # changed my mind: nothing marked
    assert QApplication.focusWidget() is focus and "rain" not in annotation.live.pending()
