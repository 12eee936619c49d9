"""A large label set reads as its hierarchy (coarse, then fine) and can be searched; shortcuts are legible."""
from __future__ import annotations

from storage.annotations import Label
from widgets.label_palette import LabelPaletteView

TREE = [("speaker", None, None), ("female", "speaker", None), ("adult", "speaker", None), ("elderly", "speaker", None),
        ("non-verbal expression", None, None), ("cough", "non-verbal expression", "c"),
        ("laughter", "non-verbal expression", "l"), ("yawn", "non-verbal expression", "y")]
LABELS = [Label(i, "attrs", name, parent, None, key, None, i, 0 if parent is None else 1)
          for i, (name, parent, key) in enumerate(TREE)] + [
          Label(100 + i, "attrs", f"extra {i}", "speaker", None, None, None, 100 + i, 1) for i in range(8)]


def test_top_level_labels_head_their_rows_and_children_follow(qtbot):
    view = LabelPaletteView()
    qtbot.addWidget(view)
    view.set_labels("attrs", LABELS)
    grid = view._grid
    cell = {name: grid.getItemPosition(grid.indexOf(button)) for name, button in view._buttons.items()}
    assert cell["speaker"][1] == 0 and cell["speaker"][3] == view.COLUMNS   # a heading spans the row
    assert cell["female"][0] > cell["speaker"][0]
    assert cell["non-verbal expression"][0] > cell["elderly"][0]
    assert cell["cough"][0] > cell["non-verbal expression"][0]
    assert view._buttons["cough"].text() == "[c] cough"


def test_search_shows_matching_labels_and_the_way_to_them(qtbot):
    view = LabelPaletteView()
    qtbot.addWidget(view)
    view.set_labels("attrs", LABELS)
    view.show()
    assert view.search.isVisible()
    qtbot.keyClicks(view.search, "cou")
    shown = {name for name, button in view._buttons.items() if button.isVisible()}
    assert shown == {"cough", "non-verbal expression"}
    view.search.clear()
    assert all(button.isVisible() for button in view._buttons.values())
