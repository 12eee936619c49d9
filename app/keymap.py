"""The one table of keyboard shortcuts: key handling, menus, the help overlay and the tests all read it.

Qt-free: a key is written as Qt's portable text for it ("Space", "Left", "[", "F1", "V") and modifiers
as a "+"-joined prefix ("Shift+Left", "Ctrl+Z"). Symbols that already need Shift on a keyboard
("?", "[") are written without it.

Every binding belongs to a context, the place where it works:
- `window`: menu shortcuts and help, anywhere in the main window, whatever page is shown;
- `media`: the player and the annotation tiers of a stimulus with sound or video;
- `stepper`: the belief stepper of an NCP task;
- `presentation`: the full-screen presentation of a comparison (a window of its own).
A key sequence is bound at most once per context; the same key may mean different things in different
contexts (Space plays a clip and plays a trace), but a page's key never hides a window key.
A label set's own keys ("1", "f") are added while that set is active with `Keymap.set_labels`; a set's
labels without a key of their own get the free digit keys, most used first (`label_keys`).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the keymap is read before the window shows; the annotation store's stack is not needed then
    from storage.annotations import Label

MODIFIER_ORDER = ("Ctrl", "Alt", "Shift", "Meta")

WINDOW = "window"
MEDIA = "media"
STEPPER = "stepper"
PRESENTATION = "presentation"
CONTEXTS = (WINDOW, MEDIA, STEPPER, PRESENTATION)
PAGE_CONTEXTS = (MEDIA, STEPPER)


@dataclass(frozen=True)
class KeyBinding:
    """One shortcut: `sequence` such as "Shift+Left", the `action` id it triggers, what it does, where it works."""

    sequence: str
    action: str
    description: str
    group: str = "Playback"
    context: str = MEDIA


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


LABEL_ACTION_PREFIX = "annotate.label:"
LABELS_GROUP = "Labels"


def label_action(name: str) -> str:
    """The action id of a label's own key: pick the label, or mark it while playing."""
    return LABEL_ACTION_PREFIX + name


def label_of_action(action: str) -> str | None:
    """The label a label action names, or None for any other action."""
    return action[len(LABEL_ACTION_PREFIX):] if action.startswith(LABEL_ACTION_PREFIX) else None


class Keymap:
    """An ordered set of bindings; at most one action per key sequence in each context."""

    def __init__(self, bindings: Iterable[KeyBinding] = ()) -> None:
        self._bindings: list[KeyBinding] = []
        self._by_sequence: dict[tuple[str, str], KeyBinding] = {}
        for binding in bindings:
            self.add(binding)

    def add(self, binding: KeyBinding) -> None:
        """Append a binding; raises ValueError if its key sequence is already taken in its context, or
        (for a page's binding) by a window binding, which works on every page."""
        if binding.context not in CONTEXTS:
            raise ValueError(f"unknown key context {binding.context!r}; expected one of {', '.join(CONTEXTS)}")
        sequence = normalize_sequence(binding.sequence)
        taken = self._by_sequence.get((binding.context, sequence))
        if taken is None and binding.context in PAGE_CONTEXTS:
            taken = self._by_sequence.get((WINDOW, sequence))
        if taken is None and binding.context == WINDOW:
            taken = next((self._by_sequence[(c, sequence)] for c in PAGE_CONTEXTS
                          if (c, sequence) in self._by_sequence), None)
        if taken is not None:
            raise ValueError(f"key {sequence} is already bound to {taken.action}")
        binding = KeyBinding(sequence, binding.action, binding.description, binding.group, binding.context)
        self._bindings.append(binding)
        self._by_sequence[(binding.context, sequence)] = binding

    def action_for(self, sequence: str, *contexts: str) -> str | None:
        """The action bound to `sequence` in the first of `contexts` that binds it (any context when none
        is named, in table order), or None."""
        sequence = normalize_sequence(sequence)
        for context in contexts or CONTEXTS:
            binding = self._by_sequence.get((context, sequence))
            if binding is not None:
                return binding.action
        return None

    def sequences_for(self, action: str) -> list[str]:
        """The keys of `action`, in table order (a menu item shows the first)."""
        return [b.sequence for b in self._bindings if b.action == action]

    def set_labels(self, label_set: str, shortcuts: Sequence[tuple[str, str]]) -> list[str]:
        """Bind the active label set's keys (key, label) in the media context, replacing the previous set's.

        A label key that a media or window binding already takes is left out (the fixed key wins, as the
        label-set editor warns); the labels left out are returned."""
        for binding in [b for b in self._bindings if b.group.startswith(LABELS_GROUP)]:
            self._bindings.remove(binding)
            del self._by_sequence[(binding.context, binding.sequence)]
        group = f"{LABELS_GROUP} ({label_set})" if label_set else LABELS_GROUP
        skipped = []
        for key, name in shortcuts:
            try:
                self.add(KeyBinding(key, label_action(name),
                                    f"{name} (while playing: press at its start and again at its end, or hold "
                                    f"it; {POINT_MODIFIER}+{key} adds it as a point)", group, MEDIA))
            except ValueError:
                skipped.append(name)
        return skipped

    def __iter__(self) -> Iterator[KeyBinding]:
        return iter(list(self._bindings))

    def __len__(self) -> int:
        return len(self._bindings)


POINT_MODIFIER = "Ctrl"  # with a label's key: that label as a point at the playhead (no range begun)
AUTOMATIC_KEYS = "1234567890"  # never a fixed binding in any context, so a label can always have them


def label_keys(labels: Sequence[Label], usage: Mapping[str, int] | None = None) -> dict[str, str]:
    """The key of each label of a set that has one: the set's own shortcuts, then the free digits for the
    labels without one, most used first (`usage`: label name to count), then in set order. Only labels
    without children get a digit: a heading such as "emotion" is not what one marks while listening. A
    set's own key that a fixed key of the player already takes ("l" plays faster) does not count: its
    label waits for a digit like one without a key."""
    keys = {label.name: label.shortcut for label in labels
            if label.shortcut and not fixed_player_key(label.shortcut)}
    taken = {key.lower() for key in keys.values()}
    free = [key for key in AUTOMATIC_KEYS if key not in taken]
    parents = {label.parent for label in labels if label.parent}
    counts = usage or {}
    waiting = [label for label in labels if label.name not in keys and label.name not in parents]
    waiting.sort(key=lambda label: -counts.get(label.name, 0))  # stable: set order among equals
    for label, key in zip(waiting, free):
        keys[label.name] = key
    return keys


# ----- playback (media context). Small and large seek steps are seconds. --------------------------------
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
)

# ----- annotation tiers (media context); a label set's own keys join with `Keymap.set_labels` -------------
DELETE_SELECTION = "annotate.delete"
NUDGE_END_LEFT = "annotate.nudge_end_left"
NUDGE_END_RIGHT = "annotate.nudge_end_right"
NUDGE_START_LEFT = "annotate.nudge_start_left"
NUDGE_START_RIGHT = "annotate.nudge_start_right"
NEXT_LABEL = "annotate.next_label"
PREVIOUS_LABEL = "annotate.previous_label"
ADD_POINT = "annotate.add_point"
FIND_LABEL = "annotate.find_label"

ANNOTATION_BINDINGS: tuple[KeyBinding, ...] = (
    KeyBinding("Delete", DELETE_SELECTION, "Delete the selected labels", "Annotate"),
    KeyBinding("Alt+Left", NUDGE_END_LEFT, "Move the selected label's end 10 ms earlier", "Annotate"),
    KeyBinding("Alt+Right", NUDGE_END_RIGHT, "Move the selected label's end 10 ms later", "Annotate"),
    KeyBinding("Alt+Shift+Left", NUDGE_START_LEFT, "Move the selected label's start 10 ms earlier", "Annotate"),
    KeyBinding("Alt+Shift+Right", NUDGE_START_RIGHT, "Move the selected label's start 10 ms later", "Annotate"),
    KeyBinding("N", NEXT_LABEL, "Go to the next label", "Annotate"),
    KeyBinding("P", PREVIOUS_LABEL, "Go to the previous label", "Annotate"),
    KeyBinding(".", ADD_POINT, "Add a point label (the current label) at the playhead", "Annotate"),
    KeyBinding("/", FIND_LABEL, "Find a label by typing its name; Enter marks it as its key would", "Annotate"),
)

# ----- the belief stepper of an NCP task (stepper context) ------------------------------------------------
STEP_NEXT = "stepper.next"
STEP_PREVIOUS = "stepper.prev"
STEP_PLAY = "stepper.play"
STEP_FIRST = "stepper.first"
STEP_LAST = "stepper.last"

STEPPER_BINDINGS: tuple[KeyBinding, ...] = tuple(
    KeyBinding(key, action, description, "Belief stepper", STEPPER) for key, action, description in (
        ("Right", STEP_NEXT, "Next step"),
        ("N", STEP_NEXT, "Next step"),
        ("Left", STEP_PREVIOUS, "Previous step"),
        ("P", STEP_PREVIOUS, "Previous step"),
        ("Home", STEP_FIRST, "First step"),
        ("End", STEP_LAST, "Last step"),
        ("Space", STEP_PLAY, "Play / pause the steps"),
    ))

# ----- presentation mode (its own full-screen window) -----------------------------------------------------
PRESENT_ADVANCE = "presentation.advance"
PRESENT_REVEAL = "presentation.reveal"
PRESENT_REVEAL_ALL = "presentation.reveal_all"
PRESENT_BACK = "presentation.back"
PRESENT_LEAVE = "presentation.leave"
PRESENT_PLAY = "presentation.play"
PRESENT_VOICE = "presentation.voice"
PRESENT_RACE = "presentation.race"
PRESENT_RACE_AGAIN = "presentation.race_again"

PRESENTATION_BINDINGS: tuple[KeyBinding, ...] = tuple(
    KeyBinding(key, action, description, "Presentation", PRESENTATION) for key, action, description in (
        ("Right", PRESENT_ADVANCE, "Reveal the next answer, then go to the next stimulus"),
        ("PgDown", PRESENT_ADVANCE, "Reveal the next answer, then go to the next stimulus"),
        ("Space", PRESENT_PLAY, "Play / pause the clip"),
        ("V", PRESENT_VOICE, "Hear the next voice (EchoMind) from the same moment"),
        ("Down", PRESENT_REVEAL, "Reveal the next answer"),
        ("Return", PRESENT_REVEAL, "Reveal the next answer"),
        ("A", PRESENT_REVEAL_ALL, "Reveal every answer"),
        ("Left", PRESENT_BACK, "Previous stimulus"),
        ("PgUp", PRESENT_BACK, "Previous stimulus"),
        ("Backspace", PRESENT_BACK, "Previous stimulus"),
        ("Escape", PRESENT_LEAVE, "Leave presentation mode"),
        ("F5", PRESENT_LEAVE, "Leave presentation mode"),
        ("R", PRESENT_RACE, "Race the contenders on this stimulus, all at once (kept answers are shown)"),
        ("Shift+R", PRESENT_RACE_AGAIN, "Race again: ask every contender afresh"),
    ))

# ----- the main window's menus and help (window context: every page) -------------------------------------
HELP = "view.help"
SEARCH = "view.search"
IMPORT = "file.import"
QUIT = "file.quit"
UNDO = "annotate.undo"
REDO = "annotate.redo"
AGREEMENT = "annotate.agreement"
EXPORT = "annotate.export"
COMPARE = "compare.compare"
PRESENT = "compare.present"
METRICS = "compare.metrics"
FAILURES = "compare.failures"
LIVE = "compare.live"

WINDOW_BINDINGS: tuple[KeyBinding, ...] = tuple(
    KeyBinding(key, action, description, group, WINDOW) for key, action, description, group in (
        ("F1", HELP, "Show / hide this list of keys", "Window"),
        ("?", HELP, "Show / hide this list of keys", "Window"),
        ("Ctrl+I", IMPORT, "Import a dataset or results", "Window"),
        ("Ctrl+Q", QUIT, "Quit", "Window"),
        ("Ctrl+Z", UNDO, "Undo the last label edit on this stimulus", "Window"),
        ("Ctrl+Shift+Z", REDO, "Redo", "Window"),
        ("Ctrl+Y", REDO, "Redo", "Window"),
        ("Ctrl+G", AGREEMENT, "Agreement between annotators", "Window"),
        ("Ctrl+E", EXPORT, "Export annotations", "Window"),
        ("Ctrl+K", COMPARE, "Compare models on this stimulus", "Window"),
        ("F5", PRESENT, "Presentation mode (full screen)", "Window"),
        ("Ctrl+M", METRICS, "Metrics dashboard", "Window"),
        ("Ctrl+F", SEARCH, "Find: type in the table's search box", "Window"),
        ("Ctrl+Shift+F", FAILURES, "Failure mining", "Window"),
        ("Ctrl+L", LIVE, "Ask a live model", "Window"),
    ))

ALL_BINDINGS: tuple[KeyBinding, ...] = (WINDOW_BINDINGS + PLAYBACK_BINDINGS + ANNOTATION_BINDINGS
                                        + STEPPER_BINDINGS + PRESENTATION_BINDINGS)


def fixed_player_key(sequence: str) -> str | None:
    """The action a fixed key runs on the player page (or anywhere in the window), if it is one."""
    sequence = normalize_sequence(sequence)
    return next((b.action for b in ALL_BINDINGS if b.context in (MEDIA, WINDOW)
                 and normalize_sequence(b.sequence) == sequence), None)


def default_keymap() -> Keymap:
    """A fresh keymap holding every fixed binding; a label set's keys join it with `set_labels`."""
    return Keymap(ALL_BINDINGS)
