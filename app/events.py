"""A minimal observer for Qt-free state: state emits only when a value really changes, views listen."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Event:
    def __init__(self) -> None:
        self._listeners: list[Callable[..., Any]] = []

    def connect(self, listener: Callable[..., Any]) -> None:
        if listener not in self._listeners:
            self._listeners.append(listener)

    def disconnect(self, listener: Callable[..., Any]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def emit(self, *args: Any) -> None:
        for listener in list(self._listeners):
            listener(*args)
