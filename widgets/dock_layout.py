"""Where the window's panels go by default, so a 1366x768 laptop keeps a usable centre.

Panels that need room (metrics, failures, agreement) open floating over the window the first time, instead
of docking below the centre and squashing its waveform lanes and tables; a panel the remembered layout
shows, docked or floating, stays where the user put it. `reset` puts every panel back where a new window has it.
"""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QByteArray, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QMainWindow

# the window's least default size: a 1366x768 laptop's screen less the desktop's bars; never larger than the screen
DEFAULT_SIZE = QSize(1360, 720)
SCREEN_SHARE = 0.85   # a new window on a larger screen takes this share of it, leaving the desktop in view
FLOATING_SIZE = QSize(980, 620)
PLACED = "thinslicePlaced"   # dynamic property: this panel has been placed once (floating or by the user)


def fitting_size(window: QMainWindow, wanted: QSize = DEFAULT_SIZE) -> QSize:
    """The size of a new window: `SCREEN_SHARE` of the screen's available area (without the desktop's bars)
    but at least `wanted`, and never more than that area. A size the user gave the window is remembered
    with its layout and used instead."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    # the offscreen platform's fixed 800x800 stand-in is nobody's screen: renders and tests keep the default
    if screen is None or QGuiApplication.platformName() == "offscreen":
        return wanted
    room = screen.availableGeometry().size()
    width = max(wanted.width(), round(room.width() * SCREEN_SHARE))
    height = max(wanted.height(), round(room.height() * SCREEN_SHARE))
    return QSize(min(width, room.width()), min(height, room.height()))


def show_panel(window: QMainWindow, dock: QDockWidget, roomy: Sequence[QDockWidget]) -> None:
    """Show a dock; a roomy panel shown for the first time floats over the window's centre, at a useful size."""
    if dock in roomy and not dock.property(PLACED):
        dock.setProperty(PLACED, True)
        dock.setFloating(True)
        size = QSize(min(FLOATING_SIZE.width(), int(window.width() * 0.9)),
                     min(FLOATING_SIZE.height(), int(window.height() * 0.85)))
        dock.resize(size)
        centre = window.geometry().center()
        dock.move(centre.x() - size.width() // 2, centre.y() - size.height() // 2)
    dock.show()
    dock.raise_()


class DefaultLayout:
    """The dock arrangement of a new window, captured once it is built, to go back to (View > Reset layout)."""

    def __init__(self, window: QMainWindow, roomy: Sequence[QDockWidget]) -> None:
        self.window = window
        self.roomy = list(roomy)
        self.state: QByteArray = window.saveState()

    def restored(self) -> None:
        """After the remembered layout is back: a panel it shows (docked or floating) stays where the user put it."""
        for dock in self.roomy:
            if dock.isFloating() or not dock.isHidden():
                dock.setProperty(PLACED, True)

    def reset(self) -> None:
        for dock in self.roomy:
            dock.setFloating(False)
            dock.setProperty(PLACED, False)
        self.window.restoreState(self.state)
        for dock in self.roomy:
            dock.hide()
        if self.window.isMaximized() or self.window.isFullScreen():
            self.window.showNormal()
        self.window.resize(fitting_size(self.window))
