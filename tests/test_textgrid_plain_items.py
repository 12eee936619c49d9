"""A TextGrid's items laid out as Praat writes them are read a tier at a time; the same items in any other
layout are read one value at a time. Both readings give the same labels, times, lines, notes and report."""
from __future__ import annotations

import pytest

from storage.errors import ImportFailed
from storage.exporters.textgrid_reader import read_textgrid


def _tier(name: str, items: list[tuple[float, float, str]], points: bool = False) -> list[str]:
    kind, what = ("TextTier", "points") if points else ("IntervalTier", "intervals")
    lines = ["    item [1]:", f'        class = "{kind}" ', f'        name = "{name}" ', "        xmin = 0 ",
             "        xmax = 10 ", f"        {what}: size = {len(items)} "]
    for number, (start, end, text) in enumerate(items, start=1):
        quoted = '"' + text.replace('"', '""') + '"'
        lines += [f"        {what} [{number}]:"]
        lines += [f"            number = {start} ", f"            mark = {quoted} "] if points else \
            [f"            xmin = {start} ", f"            xmax = {end} ", f"            text = {quoted} "]
    return lines


def _textgrid(*tiers: list[str]) -> list[str]:
    return ['File type = "ooTextFile"', 'Object class = "TextGrid"', "", "xmin = 0 ", "xmax = 10 ",
            "tiers? <exists> ", f"size = {len(tiers)} ", "item []: ", *[line for tier in tiers for line in tier]]


WORDS = [(0, 1.5, ""), (1.5, 2.25, "laugh"), (2.25, 3, 'say "hi"'), (3, 4.5, ""), (4.5, 10, "sigh! no comment")]
NOTES = [(0, 1.5, ""), (1.5, 2.25, "loud"), (4.5, 10, "")]
POINTS = [(1, 1, "click"), (7.125, 7.125, "")]
LAYOUTS = {
    "intervals": _textgrid(_tier("ana | cues", WORDS)),
    "notes and other tools' tiers": _textgrid(_tier("words", WORDS), _tier("words :note", NOTES),
                                              _tier("bo | moments", POINTS, points=True)),
    "numbers Praat and Python read alike": _textgrid(_tier("w", [(0, 1e-3, "a"), (1e-3, 2.5E+0, "b"),
                                                                 (+2.5, 10.0, "c")])),
    "a string over two lines": _textgrid(_tier("w", [(0, 1, "two\nlines"), (1, 10, "one")])),
}


def _as_read(path) -> object:
    try:
        reading = read_textgrid(path)
    except ImportFailed as exc:
        return str(exc).replace(path.name, "FILE")
    return [{**row, "origin": row["origin"]._replace(file="FILE")} for row in reading.rows], \
        [line.replace(path.name, "FILE") for line in reading.report.lines()]


def _write(tmp_path, name: str, lines: list[str], newline: str = "\n"):
    path = tmp_path / f"{name}.TextGrid"
    path.write_bytes(newline.join(lines).encode("utf-8"))
    return path


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_items_as_praat_writes_them_read_as_one_value_at_a_time_reads_them(tmp_path, layout, newline):
    lines = LAYOUTS[layout]
    plain = _write(tmp_path, "plain", lines, newline)
    # a comment at the end of every line of values: Praat passes over it, and the tier is read value by value
    commented = _write(tmp_path, "commented", [line + " ! seen" if " = " in line and "File type" not in line
                                               and "class" not in line else line for line in lines], newline)
    found = _as_read(plain)
    assert not isinstance(found, str) and found[0]
    assert found == _as_read(commented)


@pytest.mark.parametrize("damage, where", [
    ("            xmin = .5 ", "a number Praat does not read"),
    ("            xmin = 1e999 ", "a time that is not finite"),
    ("            xmin = " + "1" * 45 + " ", "a number longer than Praat reads"),
    ('            text = "a ""q" b" ', "a string whose quote is not doubled"),
])
def test_a_damaged_item_is_refused_as_when_read_one_value_at_a_time(tmp_path, damage, where):
    lines = list(LAYOUTS["intervals"])
    at = lines.index("            xmin = 1.5 ") if "xmin" in damage else lines.index('            text = "laugh" ')
    lines[at] = damage
    damaged = _as_read(_write(tmp_path, "plain", lines))
    commented = list(lines)
    commented[at - 1] += " ! seen"
    assert isinstance(damaged, str), where
    assert damaged == _as_read(_write(tmp_path, "commented", commented))


def test_a_tier_counting_more_items_than_it_holds_is_refused_at_the_end_of_the_file(tmp_path):
    lines = [line.replace("intervals: size = 5 ", "intervals: size = 6 ") for line in LAYOUTS["intervals"]]
    assert _as_read(_write(tmp_path, "short", lines)) == \
        f"Import failed, nothing was written: FILE:{len(lines)}: found the end of the file; expected a number"
