"""Reading a Praat TextGrid as Praat itself does: long, short and chronological text forms, and the binary form.

Text: UTF-8 (with or without BOM), UTF-16 with a BOM or without one (recognised by its zero bytes), and
otherwise Windows-1252 / Latin-1, the fallback Praat uses. Praat reads a text file as a stream of values:
it skips any word that cannot start the value it wants (so `xmin =`, `item [1]:` and free text are
ignored), a `!` starting a word comments out the rest of its line, strings are in double quotes with `""`
for a quote. A number is a word starting with a sign or a digit, read as Praat's `getReal` and `Melder_a8tof`
read it: `+1`, `2.5e-3`, a percentage `80%` (0.8), hexadecimal `0x3`, a fraction `2/200` (0.01), and whatever
follows the number in its word is ignored (`0ignored` is 0, `-0.5s` is -0.5); `.5`, `1e` and `1/0` are no
numbers. A count is read as C's `strtoll` reads it (`3`, `3.0` and `3x` are 3). Binary (`ooBinaryFile`):
big-endian doubles and 32-bit counts, strings as a 16-bit length and ASCII bytes, or 0xFFFF, a length, and
UTF-16BE.

Interval tiers give labels (an empty interval is Praat's gap, not a label, and is counted as such); point
tiers (TextTier) give point labels; a tier `<tier> :note` (`:value`) beside a tier gives the notes (values)
of its labels at the same times. praatio reads neither the binary form nor `!` comments, Latin-1 or
Praat's number forms, so this reader is our own; the tests check it against praatio on what both read.
A tier's items laid out as Praat writes them are taken as a block of lines at once (`_plain_items`), others
value by value, to the same items; the labels come back as a table (`Reading.labels`).
"""
from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress, repeat
from pathlib import Path
from typing import NamedTuple

import polars as pl

from storage.errors import ImportFailed, RowProblem
from storage.files import read_regular_bytes
from storage.exporters.common import ATTACHED, TierRows, TierTable
from storage.exporters.report import Origin, Reading, TransferReport, bad_item

_BINARY_MAGIC = b"ooBinaryFile"
# What Praat skips (white space, and words no value can start with: `xmin`, `=`, `item [1]:`) is consumed
# in front of each value, possessively so that nothing is tried twice; then a string, a `!` comment, or a
# word that starts a number (Praat reads it up to the next white space) or a <flag>.
_TOKEN = re.compile(r"""(?:\s++|[^\s"!<+\-0-9][^\s"]*+)*+
    (?P<value>"(?P<text>(?:[^"]|"")*+)(?P<close>"?)
     |!(?P<comment>[^\n\r]*)
     |(?P<word>[+\-0-9]\S*|[^\s"]+))""", re.X)
# The start of a word as Melder_a8tof takes it: a decimal number (an exponent, once begun, needs a digit, else
# the word is no number) with an optional '%', or the hexadecimal number C's strtod reads.
_DECIMAL = re.compile(r"(?P<number>[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)(?P<broken>[eE])?(?P<percent>%)?")
_HEXADECIMAL = re.compile(r"(?P<sign>[-+]?)0[xX](?P<digits>[0-9a-fA-F]*(?:\.[0-9a-fA-F]*)?)(?P<exponent>[pP][-+]?\d+)?")
_COUNT = re.compile(r"[-+]?\d+")   # what C's strtoll takes from the start of a word
_LONGEST_WORD = 40  # Praat refuses a longer number ("Found long text while looking for a real number")


class _Refused(Exception):
    def __init__(self, line: int | None, found: str, expected: str) -> None:
        super().__init__(found)
        self.line, self.found, self.expected = line, found, expected


class _Items(NamedTuple):
    """A tier's items as columns: start, end (= start for a point), text, and the line of the text (None in
    the binary form)."""

    start: list[float]
    end: list[float]
    text: list[str]
    line: list[int | None]


@dataclass
class _Tier:
    kind: str                        # IntervalTier or TextTier
    name: str
    items: _Items


def _items(rows: list[tuple[float, float, str, int | None]]) -> _Items:
    return _Items(*map(list, zip(*rows))) if rows else _Items([], [], [], [])


def decode(raw: bytes) -> str:
    """The text of a Praat text file, decoded the way Praat decides its encoding."""
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return raw.decode("utf-16")
    if len(raw) >= 2 and raw[0] == 0 and raw[1] != 0:
        return raw.decode("utf-16-be")
    if len(raw) >= 2 and raw[1] == 0 and raw[0] != 0:
        return raw.decode("utf-16-le")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            return raw.decode("cp1252")
        except UnicodeDecodeError:
            return raw.decode("latin-1")  # the five bytes Windows-1252 leaves undefined


def _melder_a8tof(text: str) -> float | None:
    """A number as Praat's `Melder_a8tof` reads the start of `text`; None where Praat finds none (undefined)."""
    hexadecimal = _HEXADECIMAL.match(text)
    if hexadecimal:
        digits = hexadecimal["digits"]
        if not digits.strip("."):
            return 0.0   # strtod takes the '0' of a bare '0x'
        try:
            value = float.fromhex(f"0x{digits}{hexadecimal['exponent'] or ''}")
        except OverflowError:
            value = math.inf   # as strtod gives it; a time must be finite, and is refused as such
        return -value if hexadecimal["sign"] == "-" else value
    decimal = _DECIMAL.match(text)
    if decimal is None or decimal["broken"]:
        return None
    value = float(decimal["number"])
    return value / 100 if decimal["percent"] else value


def praat_number(word: str) -> float:
    """A number written as Praat reads one from a text file (`getReal`); ValueError when Praat finds none."""
    if len(word) > _LONGEST_WORD or not word.isascii():
        raise ValueError(word)
    # the usual case, taken without a pattern match: a word starting with a digit (after its sign, if any)
    # that Python reads as a finite number is that number to Praat too
    if "_" not in word and (word[0].isdigit() or (word[0] in "+-" and word[1:2].isdigit())):
        try:
            value = float(word)
            if math.isfinite(value):
                return value
        except ValueError:
            pass
    numerator, slash, denominator = word.partition("/")
    if slash:
        top, bottom = _melder_a8tof(numerator), _melder_a8tof(denominator)
        if top is None or bottom is None or bottom == 0:
            raise ValueError(word)
        return top / bottom
    value = _melder_a8tof(word)
    if value is None:
        raise ValueError(word)
    return value


class _TextStream:
    """Praat's reading of a text file: the next number, string or <flag>, skipping what cannot be one. Each value
    is looked for from `offset` when it is wanted, so that a tier's plain items can be taken as a block of
    lines (`_plain_items`) and the reading go on after them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0   # where the next value is looked for
        self._last = 0    # where the last value read starts
        self._newline = "\n" if "\n" in text else "\r"
        self._line, self._counted_to = 1, 0
        self._lines: list[str] | None = None

    def line(self, offset: int | None = None) -> int:
        """The line of `offset` (of the last value read when None); counted on from the last call."""
        if offset is None:
            offset = self._last
        if offset < self._counted_to:
            return self.text.count(self._newline, 0, offset) + 1
        self._line += self.text.count(self._newline, self._counted_to, offset)
        self._counted_to = offset
        return self._line

    def lines(self) -> list[str] | None:
        """The file's lines, when they end in a line feed (else None)."""
        if self._lines is None and self._newline == "\n":
            self._lines = self.text.split("\n")
        return self._lines

    def _peek(self) -> re.Match[str] | None:
        """The next value (comments passed over), not yet taken."""
        while True:
            found = _TOKEN.search(self.text, self.offset)
            if found is None or found["comment"] is None:
                return found
            self.offset = found.end()

    def at_end(self) -> bool:
        return self._peek() is None

    def mark(self) -> tuple[int, int]:
        """Where the reading is, for `restore` to go back to."""
        return self.offset, self._last

    def restore(self, mark: tuple[int, int]) -> None:
        self.offset, self._last = mark

    def _next(self, wanted: str) -> tuple[str | None, str | bool, int]:
        found = self._peek()
        if found is None:
            raise _Refused(self.line(len(self.text)), "the end of the file", wanted)
        self.offset, self._last = found.end(), found.start("value")
        text = found["text"]
        return text, found["word"] if text is None else bool(found["close"]), self._last

    def number(self) -> float:
        while True:
            text, word, offset = self._next("a number")
            if text is not None or word[0] == "<":
                raise _Refused(self.line(offset), repr(word if text is None else f'"{text[:40]}"'), "a number")
            if word == "+":
                continue   # Praat passes over a lone '+' (one stands between a complex number's parts)
            try:
                return praat_number(word)
            except ValueError:
                raise _Refused(self.line(offset), repr(word), "a number") from None

    def integer(self) -> int:
        text, word, offset = self._next("a count (a whole number)")
        count = _COUNT.match(word) if text is None else None
        if count is None or int(count[0]) < 0:
            found = repr(word if text is None else f'"{text[:40]}"')
            raise _Refused(self.line(offset), found, "a count (a whole number)")
        return int(count[0])

    def string(self) -> str:
        while True:
            text, closed, offset = self._next("a quoted string")
            if text is not None:
                if not closed:
                    raise _Refused(self.line(offset), "a string without its closing quote", 'a "quoted" string')
                return text.replace('""', '"')

    def flag(self) -> str:
        while True:
            text, word, offset = self._next("<exists> or <absent>")
            if text is not None:
                raise _Refused(self.line(offset), repr(f'"{text[:40]}"'), "<exists> or <absent>")
            if word[0] == "<":
                return word


def _read_chronological(stream: _TextStream) -> tuple[list[_Tier], float, float]:
    """Praat's chronological text form: the tiers' classes and names, then every interval or point in time
    order, each led by its tier's number."""
    xmin, xmax = stream.number(), stream.number()
    tiers = []
    for _ in range(stream.integer()):
        kind, name = stream.string(), stream.string()
        stream.number(), stream.number()
        if kind not in ("IntervalTier", "TextTier"):
            raise _Refused(stream.line(), f"a tier of class {kind!r}", "IntervalTier or TextTier")
        tiers.append(_Tier(kind, name, []))
    while not stream.at_end():
        number = stream.integer()
        if not 1 <= number <= len(tiers):
            raise _Refused(stream.line(), f"tier number {number}", f"a tier number from 1 to {len(tiers)}")
        tier = tiers[number - 1]
        start = stream.number()
        end = stream.number() if tier.kind == "IntervalTier" else start
        line = stream.line()
        tier.items.append((start, end, stream.string(), line))
    return [_Tier(tier.kind, tier.name, _items(tier.items)) for tier in tiers], xmin, xmax


def _read_text(text: str) -> tuple[list[_Tier], float, float]:
    stream = _TextStream(text)
    file_type = stream.string()
    if file_type == "Praat chronological TextGrid text file":
        return _read_chronological(stream)
    object_class = stream.string()
    if file_type not in ("ooTextFile", "ooTextFile short") or object_class != "TextGrid":
        raise _Refused(1, f"file type {file_type!r}, object class {object_class!r}",
                       'File type = "ooTextFile" and Object class = "TextGrid"')
    xmin, xmax = stream.number(), stream.number()
    tiers: list[_Tier] = []
    if stream.flag() != "<exists>":
        return tiers, xmin, xmax
    for _ in range(stream.integer()):
        kind, name = stream.string(), stream.string()
        stream.number(), stream.number()
        count = stream.integer()
        if kind not in ("IntervalTier", "TextTier"):
            raise _Refused(stream.line(), f"a tier of class {kind!r}", "IntervalTier or TextTier")
        items = _plain_items(stream, count, kind == "IntervalTier")
        if items is None:
            items = _token_items(stream, count, kind == "IntervalTier")
        if items is None:  # something unusual among them: read them one value at a time, to say where
            rows = []
            for _ in range(count):
                start = stream.number()
                end = stream.number() if kind == "IntervalTier" else start
                line = stream.line()
                rows.append((start, end, stream.string(), line))
            items = _items(rows)
        tiers.append(_Tier(kind, name, items))
    return tiers, xmin, xmax


# A tier's item as Praat writes it in the long text form, from the line end before it to the end of its last
# line: a line naming the item, then one value a line (`key = value`: Praat passes over the key and '='), the
# last a string closed on its line (each quote inside it doubled). Each number is in the form Python's `float`
# and Praat's `getReal` read alike. An item holds as many line ends as it has lines. (Each begins with the
# line end, so the search for the next one skips ahead to a line end.)
_NUMBER_LINE = r"[ \t\r]*+\n[ \t]*+{key} = ([-+]?[0-9]++(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?)"
_STRING_LINE = r'[ \t\r]*+\n[ \t]*+{key} = "([^"\n]*+(?:""[^"\n]*+)*+)"[ \t\r]*+(?=\n|\Z)'
_PLAIN_ITEM = {
    True: (re.compile(r"\n[ \t]*+intervals \[[0-9]++\]:" + _NUMBER_LINE.format(key="xmin")
                      + _NUMBER_LINE.format(key="xmax") + _STRING_LINE.format(key="text")), 4),
    False: (re.compile(r"\n[ \t]*+points \[[0-9]++\]:" + _NUMBER_LINE.format(key="number")
                       + _STRING_LINE.format(key="mark")), 3)}


def _plain_items(stream: _TextStream, count: int, intervals: bool) -> _Items | None:
    """A tier's items when every one is written on its own lines as Praat writes them (`_PLAIN_ITEM`), right
    after the line of the count, read as columns at once; None, with nothing consumed, when any is not."""
    text = stream.text
    if stream.lines() is None or count == 0:
        return None
    pattern, width = _PLAIN_ITEM[intervals]
    end_of_count = text.find("\n", stream.offset)
    if end_of_count < 0 or text[stream.offset:end_of_count].strip():
        return None
    first = stream.line(stream.offset)   # the count's line; the items' lines follow it (0-based index `first`)
    block = stream.lines()[first:first + width * count]
    if len(block) < width * count:
        return None
    end = end_of_count + sum(map(len, block)) + len(block)   # the end of the block's last line
    # The block holds `width * count` line ends and each item as many: `count` items found in it are all of it.
    found = pattern.findall(text, end_of_count, end)
    if len(found) != count:
        return None
    values = list(zip(*found))
    if max(max(map(len, values[0])), max(map(len, values[-2]))) > _LONGEST_WORD:
        return None   # Praat refuses so long a number: read one value at a time, to say where
    starts = list(map(float, values[0]))   # as `praat_number` reads a number of this form
    texts = list(values[-1])
    if '"' in "".join(texts):   # a quote inside a text is written doubled
        texts = [item.replace('""', '"') for item in texts]
    stream.offset = end
    return _Items(starts, list(map(float, values[1])) if intervals else starts, texts,
                  list(range(first + width, first + width * (count + 1), width)))


def _token_items(stream: _TextStream, count: int, intervals: bool) -> _Items | None:
    """A tier's items when they are plain values (numbers, then a closed string) however they are laid out
    (Praat's short form, comments between them), each with the line of its string; None, with nothing
    consumed, when any is not."""
    mark = stream.mark()
    rows = []
    try:
        for _ in range(count):
            start_word, end_word, (text, closed, at) = (stream._next(""), stream._next("") if intervals else None,
                                                        stream._next(""))
            if start_word[0] is not None or text is None or not closed or (end_word and end_word[0] is not None):
                raise ValueError
            start = praat_number(start_word[1])
            rows.append((start, praat_number(end_word[1]) if end_word else start, text.replace('""', '"'), at))
    except (ValueError, _Refused):
        stream.restore(mark)
        return None
    return _items([(start, end, text, stream.line(at)) for start, end, text, at in rows])


def _read_binary(raw: bytes) -> tuple[list[_Tier], float, float]:
    position = len(_BINARY_MAGIC)

    def take(size: int) -> bytes:
        nonlocal position
        if position + size > len(raw):
            raise _Refused(None, f"the end of the file at byte {len(raw)}", f"{size} more bytes of a binary TextGrid")
        chunk = raw[position:position + size]
        position += size
        return chunk

    def short_string() -> str:
        return take(take(1)[0]).decode("ascii", errors="replace")

    def string() -> str:
        (length,) = struct.unpack(">H", take(2))
        if length == 0xFFFF:
            (length,) = struct.unpack(">H", take(2))
            return take(2 * length).decode("utf-16-be")
        return take(length).decode("latin-1")

    def double() -> float:
        return struct.unpack(">d", take(8))[0]

    def count() -> int:
        return struct.unpack(">i", take(4))[0]

    if short_string() != "TextGrid":
        raise _Refused(None, "another kind of Praat binary object", "a binary TextGrid")
    xmin, xmax = double(), double()
    tiers: list[_Tier] = []
    if not take(1)[0]:
        return tiers, xmin, xmax
    for _ in range(count()):
        kind = short_string()
        name = string()
        double(), double()
        items = []
        for _ in range(count()):
            if kind == "IntervalTier":
                start, end = double(), double()
            elif kind in ("TextTier", "PointTier"):
                start = end = double()
            else:
                raise _Refused(None, f"a tier of class {kind!r}", "IntervalTier or TextTier")
            items.append((start, end, string(), None))
        tiers.append(_Tier("IntervalTier" if kind == "IntervalTier" else "TextTier", name, _items(items)))
    return tiers, xmin, xmax


def read_textgrid(path: Path) -> Reading:
    """The labels of one TextGrid (any form Praat writes) as a table (`Reading.labels`), each with its tier,
    item and line; the file names no stimulus, so `stimulus` is None (the importer places the file by its name)."""
    path = Path(path)
    raw = read_regular_bytes(path)
    try:
        tiers, _, _ = _read_binary(raw) if raw.startswith(_BINARY_MAGIC) else _read_text(decode(raw))
    except _Refused as exc:
        raise ImportFailed(RowProblem(path.name, exc.line, None, exc.found, exc.expected)) from None
    except (UnicodeDecodeError, struct.error) as exc:
        raise ImportFailed(RowProblem(path.name, None, None, f"<{exc}>", "a Praat TextGrid")) from None
    name = path.name
    names = {tier.name for tier in tiers}
    attached = {tier.name: (kind, tier.name[:-len(suffix)]) for tier in tiers for kind, suffix in ATTACHED.items()
                if tier.name.endswith(suffix) and tier.name[:-len(suffix)] in names}
    # the first time that is not finite, in the file's order, refuses the file
    for tier in tiers:
        if not all(map(math.isfinite, tier.items.start)) or not all(map(math.isfinite, tier.items.end)):
            number, (start, end, line) = next(
                (n, times) for n, times in enumerate(zip(tier.items.start, tier.items.end, tier.items.line), start=1)
                if not (math.isfinite(times[0]) and math.isfinite(times[1])))
            raise bad_item(Origin(name, tier.name, number, line), f"times {start!r}..{end!r}",
                           "finite times in seconds")
    report = TransferReport()
    table = TierTable(name)
    keys: list[tuple[str, float, float]] = []   # each label's tier and times as the file gives them
    for tier in tiers:
        if tier.name in attached:
            continue
        items = tier.items
        count = len(items.text)
        numbers: Iterable[int] = range(1, count + 1)
        if tier.kind == "IntervalTier" and "" in items.text:   # an empty interval is a gap, not a label
            keep = list(map(bool, items.text))
            items = _Items(*(list(compress(column, keep)) for column in items))
            numbers = list(compress(numbers, keep))
        table.add(TierRows(None, tier.name), tier.name, items.text, items.start, items.end, numbers, items.line)
        report.count_read(name, tier.name, len(items.text))
        report.tally(name, tier.name).gaps += count - len(items.text)
        if attached:
            keys += zip(repeat(tier.name), items.start, items.end)
    reading = Reading(report=report, labels=table.frame())
    if attached:
        _attach(reading, keys, tiers, attached, name)
    return reading


def _attach(reading: Reading, keys: list[tuple[str, float, float]], tiers: list[_Tier],
            attached: dict[str, tuple[str, str]], file: str) -> None:
    """Give each label (`keys`: its tier and times as the file gives them, in the reading's order) the note
    (value) a tier `<tier> :note` (`:value`) holds at its times; one at times where its tier has no label is
    left out, and said so. (A rare tier: looked at item by item.)"""
    frame = reading.labels.with_row_index("_at")
    at = {key: index for index, key in enumerate(keys)}   # a label by its tier and times
    given: dict[str, dict[int, str]] = {kind: {} for kind in ATTACHED}
    for tier in tiers:
        if tier.name not in attached:
            continue
        kind, labels = attached[tier.name]
        for number, (start, end, text, line) in enumerate(zip(*tier.items), start=1):
            index = at.get((labels, start, end)) if text != "" else None
            if index is not None:
                given[kind][index] = text
            elif text != "":
                reading.report.leave_out(Origin(file, tier.name, number, line),
                                         f"a {kind} at times where the tier '{labels}' has no label", repr(text))
    reading.labels = frame.with_columns(
        **{kind: pl.col("_at").replace_strict(pl.Series(list(texts), dtype=pl.UInt32),
                                              pl.Series(list(texts.values()), dtype=pl.String), default=None)
           for kind, texts in given.items() if texts}).drop("_at")
