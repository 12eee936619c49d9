"""In a dark palette, Compare's changed words and the belief table's world and changed cells stay readable."""
from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from widgets.belief_stepper import BeliefStepperView
from widgets.compare_view import word_diff_html
from widgets.palette import COLOURS, colour, is_dark, pick

DARK = {QPalette.ColorRole.Window: "#2b2b2b", QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1e1e1e", QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#353535", QPalette.ColorRole.ButtonText: "#e6e6e6"}


def luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.fixture
def dark(qapp):
    before = QApplication.palette()
    palette = QPalette(before)
    for role, value in DARK.items():
        palette.setColor(role, QColor(value))
    QApplication.setPalette(palette)
    yield palette
    QApplication.setPalette(before)


def test_the_helper_picks_the_dark_colour_under_a_dark_palette(dark):
    assert is_dark()
    assert pick("#ffffff", "#000000") == "#000000"
    assert all(colour(name) == dark_value for name, (_light, dark_value) in COLOURS.items())


def test_compare_changed_words_are_readable_in_dark(dark):
    marked = word_diff_html("they are old friends", "they are strangers")
    inserted = re.search(r"background:(#[0-9a-f]{6});color:(#[0-9a-f]{6})", marked)
    assert inserted, marked
    assert contrast(QColor(inserted.group(1)), QColor(inserted.group(2))) >= 4.5
    deleted = re.search(r"color:(#[0-9a-f]{6});text-decoration:line-through", marked)
    assert contrast(QColor(deleted.group(1)), dark.color(QPalette.ColorRole.Base)) >= 4.5


def test_belief_table_world_and_changed_cells_are_readable_in_dark(qtbot, dark):
    view = BeliefStepperView()
    qtbot.addWidget(view)
    view.set_trace([{"action": "enter_room", "args": ["Anne", "living room"]},
                    {"action": "move_object_container", "args": ["Anne"],
                     "kwargs": {"obj": "ball", "container": "box"}}], None, "tomi")
    view.step_forward()
    view.step_forward()
    model = view.pane().first_model
    text = dark.color(QPalette.ColorRole.Text)
    seen = set()
    for row in range(model.rowCount()):
        for column in range(model.columnCount()):
            brush = model.data(model.index(row, column), Qt.ItemDataRole.BackgroundRole)
            if brush is None:
                continue
            foreground = model.data(model.index(row, column), Qt.ItemDataRole.ForegroundRole)
            fg = foreground.color() if foreground is not None else text
            assert contrast(brush.color(), fg) >= 4.5, (row, column, brush.color().name(), fg.name())
            seen.add(brush.color().name())
    assert len(seen) >= 2   # the world's row and a changed cell at least


def test_every_background_of_the_palette_keeps_its_palettes_text_readable():
    for name, (light, dark) in COLOURS.items():
        if not name.endswith("_bg"):
            continue
        assert contrast(QColor(light), QColor("#000000")) >= 4.5, name
        assert contrast(QColor(dark), QColor(DARK[QPalette.ColorRole.Text])) >= 4.5, name


def test_the_steppers_false_belief_line_is_readable_in_dark(qtbot, dark):
    view = BeliefStepperView()
    qtbot.addWidget(view)
    view.set_trace([{"action": "enter_room", "args": ["Anne", "kitchen"]},
                    {"action": "enter_room", "args": ["Beth", "kitchen"]},
                    {"action": "move_object_container", "args": ["Anne", "ball", "basket"]},
                    {"action": "leave_room", "args": ["Beth", "kitchen"]},
                    {"action": "move_object_container", "args": ["Anne", "ball", "box"]}], None, "tomi")
    view.go_last()
    header = view.pane().header.text()
    line = re.search(r"color:(#[0-9a-fA-F]{6})'><b>⚠ False belief", header)
    assert line, header   # Beth still thinks the ball is in the basket
    assert contrast(QColor(line.group(1)), dark.color(QPalette.ColorRole.Window)) >= 4.5


def test_a_video_with_nothing_to_show_says_so_in_the_dark_palettes_colours(qtbot, dark):
    from widgets.video_view import VideoSurface
    surface = VideoSurface(None, "video", embed=False)
    qtbot.addWidget(surface)
    style = surface.message.styleSheet()
    fg = re.search(r"color: (#[0-9a-fA-F]{6})", style).group(1)
    bg = re.search(r"background: (#[0-9a-fA-F]{6})", style).group(1)
    assert QColor(bg).lightnessF() < 0.3   # not a pale box in a dark window
    assert contrast(QColor(fg), QColor(bg)) >= 4.5


def test_the_rooms_canvas_draws_its_boxes_in_the_dark_palettes_colours(dark):
    for background, text in (("container_bg", "container_fg"), ("object_bg", "object_fg"),
                             ("object_changed_bg", "object_fg")):
        assert QColor(colour(background)).lightnessF() < 0.35, background
        assert contrast(QColor(colour(text)), QColor(colour(background))) >= 4.5, (background, text)
