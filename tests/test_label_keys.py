"""Which label gets which key: a set's own keys, then the free digits for the most used labels without one;
never a heading, never a key the player already uses."""
from __future__ import annotations

from app.keymap import AUTOMATIC_KEYS, default_keymap, label_keys
from storage.annotations import Label


def labels(*rows: tuple[str, str | None, str | None]) -> list[Label]:
    return [Label(i, "set", name, parent, None, key, None, i, 0 if parent is None else 1)
            for i, (name, parent, key) in enumerate(rows)]


def test_own_keys_stay_and_the_most_used_labels_without_one_get_the_free_digits():
    rows = labels(("voice", None, None), ("shout", "voice", "h"), ("whisper", "voice", "1"),
                  ("sigh", "voice", None), ("cough", "voice", None), ("rain", "voice", None))
    keys = label_keys(rows, {"rain": 7, "cough": 2})
    assert keys["shout"] == "h" and keys["whisper"] == "1"
    assert (keys["rain"], keys["cough"], keys["sigh"]) == ("2", "3", "4")   # most used first, "1" is taken
    assert "voice" not in keys   # a heading is not what one marks while listening


def test_ten_digits_at_most_and_a_players_key_is_not_a_labels():
    rows = labels(("laughter", None, "l"), *((f"sound {i}", None, None) for i in range(12)))
    keys = label_keys(rows, {"laughter": 50})
    assert keys["laughter"] == "1"   # "l" plays faster on the player: laughter gets a digit instead
    assert sorted(keys.values()) == sorted(AUTOMATIC_KEYS)
    assert len([name for name in keys if name.startswith("sound")]) == 9
    keymap = default_keymap()
    skipped = keymap.set_labels("set", [(key, name) for name, key in keys.items()])
    assert skipped == []   # every key given is one the player does not already use
    assert keymap.action_for("1", "media") == "annotate.label:laughter"
