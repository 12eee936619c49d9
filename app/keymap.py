"""The one table of keyboard shortcuts: key handling, the help overlay and the tests all read it.

Qt-free: a key is written as Qt's portable text for it ("Space", "Left", "[", "F1", "V") and modifiers
as a "+"-joined prefix ("Shift+Left", "Ctrl+Z"). Symbols that already need Shift on a keyboard
("?", "[") are written without it. Later features append their own bindings with `Keymap.add`.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MODIFIER_ORDER = ("Ctrl", "Alt", "Shift", "Meta")


@dataclass(frozen=True)
class KeyBinding:
    """One shortcut: `sequence` such as "Shift+Left", the `action` id it triggers, and what it does."""

    sequence: str
    action: str
    description: str
    group: str = "Playback"

    @property
    def key(self) -> str:
        """The key without modifiers ("Left" for "Shift+Left"; "+" stays "+")."""
        return split_sequence(self.sequence)[1]

    @property
    def modifiers(self) -> tuple[str, ...]:
        return split_sequence(self.sequence)[0]


def split_sequence(sequence: str) -> tuple[tuple[str, ...], str]:
    """Split "Ctrl+Shift+Left" into (("Ctrl", "Shift"), "Left")."""
    parts = sequence.split("+")
    canonical = {m.lower(): m for m in MODIFIER_ORDER}
    modifiers: list[str] = []
    while len(parts) > 1 and parts[0].lower() in canonical:
        modifiers.append(canonical[parts.pop(0).lower()])
    return tuple(modifiers), "+".join(parts)


def normalize_sequence(sequence: str) -> str:
    """The canonical spelling: modifiers in Ctrl, Alt, Shift, Meta order, keys capitalised ("Left", "A")."""
    modifiers, key = split_sequence(sequence)
    key = key[:1].upper() + key[1:]
    ordered = [m for m in MODIFIER_ORDER if m in modifiers]
    return "+".join([*ordered, key])


class Keymap:
    """An ordered set of bindings; at most one action per key sequence."""

    def __init__(self, bindings: Iterable[KeyBinding] = ()) -> None:
        self._bindings: list[KeyBinding] = []
        self._by_sequence: dict[str, KeyBinding] = {}
        for binding in bindings:
            self.add(binding)

    def add(self, binding: KeyBinding) -> None:
        """Append a binding; raises ValueError if its key sequence is already taken."""
        sequence = normalize_sequence(binding.sequence)
        if sequence in self._by_sequence:
            taken = self._by_sequence[sequence].action
            raise ValueError(f"key {sequence} is already bound to {taken}")
        binding = KeyBinding(sequence, binding.action, binding.description, binding.group)
        self._bindings.append(binding)
        self._by_sequence[sequence] = binding

    def action_for(self, sequence: str) -> str | None:
        """The action bound to `sequence`, or None."""
        binding = self._by_sequence.get(normalize_sequence(sequence))
        return binding.action if binding else None

    def bindings_for(self, action: str) -> list[KeyBinding]:
        return [b for b in self._bindings if b.action == action]

    def __iter__(self) -> Iterator[KeyBinding]:
        return iter(self._bindings)

    def __len__(self) -> int:
        return len(self._bindings)


# Action ids. Small and large seek steps are seconds.
PLAY_PAUSE = "playback.toggle"
SHUTTLE_BACK = "playback.shuttle_back"
PAUSE = "playback.pause"
SHUTTLE_FORWARD = "playback.shuttle_forward"
SEEK_BACK = "playback.seek_back"
SEEK_FORWARD = "playback.seek_forward"
SEEK_BACK_LARGE = "playback.seek_back_large"
SEEK_FORWARD_LARGE = "playback.seek_forward_large"
RATE_DOWN = "playback.rate_down"
RATE_UP = "playback.rate_up"
GO_START = "playback.start"
GO_END = "playback.end"
NEXT_VOICE = "playback.next_voice"
HELP = "view.help"

SMALL_SEEK_S = 1.0
LARGE_SEEK_S = 5.0

PLAYBACK_BINDINGS: tuple[KeyBinding, ...] = (
    KeyBinding("Space", PLAY_PAUSE, "Play / pause"),
    KeyBinding("J", SHUTTLE_BACK, "Back 5 s (or slower while fast-forwarding)"),
    KeyBinding("K", PAUSE, "Pause"),
    KeyBinding("L", SHUTTLE_FORWARD, "Play; press again to play faster"),
    KeyBinding("Left", SEEK_BACK, "Back 1 s"),
    KeyBinding("Right", SEEK_FORWARD, "Forward 1 s"),
    KeyBinding("Shift+Left", SEEK_BACK_LARGE, "Back 5 s"),
    KeyBinding("Shift+Right", SEEK_FORWARD_LARGE, "Forward 5 s"),
    KeyBinding("[", RATE_DOWN, "Slower (down to 0.5x)"),
    KeyBinding("]", RATE_UP, "Faster (up to 2x)"),
    KeyBinding("Home", GO_START, "Go to the start"),
    KeyBinding("End", GO_END, "Go to the end"),
    KeyBinding("V", NEXT_VOICE, "EchoMind: next voice (target, alternative, neutral)"),
    KeyBinding("F1", HELP, "Show / hide this help", group="View"),
    KeyBinding("?", HELP, "Show / hide this help", group="View"),
)


def default_keymap() -> Keymap:
    """A fresh keymap with the playback bindings; callers may add their own to it."""
    return Keymap(PLAYBACK_BINDINGS)
