"""The player page at 1366x768 with the default docks, as an annotator first sees it: the analysis tracks in
view without an inner scrollbar, pitch over the spectrogram as Praat's editor draws it, the voices' names
across their lanes, and the tiers' time axis under the waveform's pixel for pixel."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFontMetrics

from storage.store import Store
from widgets.analysis_tracks import CONVERSATION, PITCH, ROW_MIN_HEIGHTS, SPECTROGRAM
from widgets.player_panel import WAVE_LANE_MIN_PX
from tests.laptop_window import laptop_window, open_first


def open_media_page(qtbot, win, store: Store, kind: str):
    """The media page of the first stimulus of `kind`, once its waveform and tracks are in."""
    open_first(qtbot, win, store, kind)
    page = win.media_page
    tracks = page.player.tracks
    qtbot.waitUntil(lambda: win.stimulus_view.current_page() is page and not page.busy() and tracks.loaded()
                    and page.player.waveform.lane_count > 0, timeout=30000)
    qtbot.wait(50)
    return page


@pytest.fixture
def laptop(qtbot, sample_store_copy, window_for):
    return laptop_window(qtbot, window_for, sample_store_copy)


def screen_x(view, box, t: float) -> int:
    return view.mapToGlobal(view.mapFromScene(box.mapViewToScene(QPointF(t, 0.0)))).x()


def test_a_dyads_tracks_show_whole_with_pitch_over_the_spectrogram(qtbot, laptop, sample_store_copy):
    page = open_media_page(qtbot, laptop, sample_store_copy, "dyad")
    tracks = page.player.tracks
    assert tracks.wanted_rows() == [(SPECTROGRAM, 0), (CONVERSATION, None)]
    assert not tracks.scroll.verticalScrollBar().isVisible()          # no rows behind an inner scrollbar
    assert tracks.scroll.viewport().height() >= tracks.canvas.minimumHeight()
    spectrogram = tracks.row_plot(SPECTROGRAM, 0)
    assert spectrogram.height() >= ROW_MIN_HEIGHTS[SPECTROGRAM]
    assert tracks.row_plot(CONVERSATION).height() >= ROW_MIN_HEIGHTS[CONVERSATION]
    # the pitch curve is in the spectrogram's row, on its own floor-to-ceiling scale over the row's height
    assert tracks.row_plot(PITCH, 0) is spectrogram
    voice = tracks.voice(0)
    curves = [item for item in spectrogram.items if type(item).__name__ == "PlotCurveItem"]
    assert curves, "no pitch drawn over the spectrogram"
    top = tracks.max_frequency.value()
    floor, ceiling = tracks.pitch_floor.value(), tracks.pitch_ceiling.value()
    _x, y = curves[-1].getData()
    voiced = ~(y != y)  # not NaN
    assert voiced.any()
    expected = (voice.pitch.f0_hz[voiced] - floor) / (ceiling - floor) * top
    assert y[voiced] == pytest.approx(expected)
    # the row's name, its own unit, then the scale of the pitch drawn over it (never "F0 … kHz" in a row)
    assert spectrogram.getAxis("left").name_lines()[:3] == ["A", "kHz", f"F0 {floor}-{ceiling} Hz"]
    # the waveform lanes keep a readable height, and one time sits at one x in waveform, tracks and tiers
    waveform = page.player.waveform
    assert all(waveform.lane_plot(i).vb.height() >= WAVE_LANE_MIN_PX for i in range(waveform.lane_count))
    tiers = page.annotation.tiers
    for t in (1.0, 10.0, 19.0):
        at = screen_x(waveform.canvas, waveform.ruler.vb, t)
        assert abs(screen_x(tracks.canvas, spectrogram.vb, t) - at) <= 1
        assert abs(screen_x(tiers, tiers.view_box(), t) - at) <= 1
    assert laptop.width() <= 1366


def test_echominds_three_voice_names_are_across_their_lanes_and_do_not_overlap(qtbot, laptop, sample_store_copy):
    page = open_media_page(qtbot, laptop, sample_store_copy, "echomind_script")
    waveform = page.player.waveform
    assert waveform.lane_count == 3
    boxes = []
    for lane in range(3):
        axis = waveform.lane_plot(lane).getAxis("left")
        assert axis.name_lines() == [("target", "alternative", "neutral")[lane]]
        rect = axis.mapRectToScene(axis.mapRectFromParent(axis.geometry()))
        line = QFontMetrics(axis._font).height()
        assert rect.height() >= line      # the whole name's height fits its lane
        # written across: the text is wider than tall, in a box no taller than one line, centred on the lane
        text = QRectF(rect.left(), rect.center().y() - line / 2, rect.width(), line)
        boxes.append(text)
    assert not any(a.intersects(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    image = waveform.canvas.grab().toImage()
    for text in boxes:  # and something is drawn there in the lane's colour
        top_left = waveform.canvas.mapFromScene(text.topLeft())
        inked = [image.pixelColor(x, y) for x in range(top_left.x() + 2, top_left.x() + 40)
                 for y in range(top_left.y(), top_left.y() + int(text.height()))]
        assert any(c.saturation() > 80 for c in inked)


def test_the_docks_tabs_say_their_names_whole_at_laptop_size(qtbot, laptop):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar
    laptop.show()
    qtbot.waitUntil(lambda: any(bar.count() >= 3 for bar in laptop.findChildren(QTabBar)), timeout=10000)
    bars = [bar for bar in laptop.findChildren(QTabBar) if bar.count() and bar.isVisible()]
    names = {bar.tabText(i) for bar in bars for i in range(bar.count())}
    assert {"Predictions", "Compare", "Live model"} <= names
    for bar in bars:   # the names fit or scroll; none is cut to "Pred…"
        assert bar.elideMode() == Qt.TextElideMode.ElideNone and bar.usesScrollButtons()
        for i in range(bar.count()):
            assert bar.tabRect(i).width() >= QFontMetrics(bar.font()).horizontalAdvance(bar.tabText(i))
