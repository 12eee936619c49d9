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
"""
from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from storage.errors import ImportFailed, RowProblem
from storage.files import read_regular_bytes
from storage.exporters.common import ATTACHED, TierRows
from storage.exporters.report import Origin, Reading, bad_item

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


@dataclass
class _Tier:
    kind: str                        # IntervalTier or TextTier
    name: str
    items: list[tuple[float, float, str, int | None]]  # start, end (= start for a point), text, line


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
    """Praat's reading of a text file: the next number, string or <flag>, skipping what cannot be one."""

    def __init__(self, text: str) -> None:
        self.text = text
        # (string text, or None for a word; the word or, for a string, whether it was closed; offset)
        self.tokens = [(m["text"], m["word"] if m["text"] is None else bool(m["close"]), m.start("value"))
                       for m in _TOKEN.finditer(text) if m["comment"] is None]
        self.position = 0
        self._newline = "\n" if "\n" in text else "\r"
        self._line, self._counted_to = 1, 0

    def line(self, offset: int | None = None) -> int:
        """The line of `offset` (of the last value read when None); counted on from the last call."""
        if offset is None:
            offset = self.tokens[self.position - 1][2] if self.position else 0
        if offset < self._counted_to:
            return self.text.count(self._newline, 0, offset) + 1
        self._line += self.text.count(self._newline, self._counted_to, offset)
        self._counted_to = offset
        return self._line

    def _next(self, wanted: str) -> tuple[str | None, str | bool, int]:
        if self.position >= len(self.tokens):
            raise _Refused(self.line(len(self.text)), "the end of the file", wanted)
        token = self.tokens[self.position]
        self.position += 1
        return token

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
    while stream.position < len(stream.tokens):
        number = stream.integer()
        if not 1 <= number <= len(tiers):
            raise _Refused(stream.line(), f"tier number {number}", f"a tier number from 1 to {len(tiers)}")
        tier = tiers[number - 1]
        start = stream.number()
        end = stream.number() if tier.kind == "IntervalTier" else start
        line = stream.line()
        tier.items.append((start, end, stream.string(), line))
    return tiers, xmin, xmax


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
        if items is None:  # something unusual among them: read them one value at a time, to say where
            items = []
            for _ in range(count):
                start = stream.number()
                end = stream.number() if kind == "IntervalTier" else start
                line = stream.line()
                items.append((start, end, stream.string(), line))
        tiers.append(_Tier(kind, name, items))
    return tiers, xmin, xmax


def _plain_items(stream: _TextStream, count: int, intervals: bool) -> list[tuple[float, float, str, int]] | None:
    """A tier's items when they are plain (numbers, then a closed string, as Praat writes them), taken from
    the token list in one pass; None, with nothing consumed, when any is not."""
    width = 3 if intervals else 2
    tokens = stream.tokens[stream.position:stream.position + width * count]
    if len(tokens) < width * count:
        return None
    items = []
    try:
        for i in range(0, len(tokens), width):
            first, *middle, (text, closed, offset) = tokens[i:i + width]
            if first[0] is not None or text is None or not closed or (middle and middle[0][0] is not None):
                return None
            start = praat_number(first[1])
            end = praat_number(middle[0][1]) if middle else start
            items.append((start, end, text.replace('""', '"'), offset))
    except ValueError:
        return None
    stream.position += len(tokens)
    return [(start, end, text, stream.line(offset)) for start, end, text, offset in items]


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
        tiers.append(_Tier("IntervalTier" if kind == "IntervalTier" else "TextTier", name, items))
    return tiers, xmin, xmax


def read_textgrid(path: Path) -> Reading:
    """The labels of one TextGrid (any form Praat writes), each with its tier and item; the file names
    no stimulus, so `stimulus` is None (the importer places the file by its name)."""
    path = Path(path)
    raw = read_regular_bytes(path)
    try:
        tiers, _, _ = _read_binary(raw) if raw.startswith(_BINARY_MAGIC) else _read_text(decode(raw))
    except _Refused as exc:
        raise ImportFailed(RowProblem(path.name, exc.line, None, exc.found, exc.expected)) from None
    except (UnicodeDecodeError, struct.error) as exc:
        raise ImportFailed(RowProblem(path.name, None, None, f"<{exc}>", "a Praat TextGrid")) from None
    reading = Reading([])
    name = path.name
    names = {tier.name for tier in tiers}
    attached = {tier.name: (kind, tier.name[:-len(suffix)]) for tier in tiers for kind, suffix in ATTACHED.items()
                if tier.name.endswith(suffix) and tier.name[:-len(suffix)] in names}
    row_at: dict[tuple[str, float, float], dict] = {}   # a label by its tier and its times as the file gives them
    read_rows = reading.rows
    for tier in tiers:
        make = TierRows(None, tier.name).row
        before = len(read_rows)
        intervals = tier.kind == "IntervalTier"
        skipped = tier.name in attached
        for number, (start, end, text, line) in enumerate(tier.items, start=1):
            if not (math.isfinite(start) and math.isfinite(end)):
                raise bad_item(Origin(name, tier.name, number, line), f"times {start!r}..{end!r}",
                               "finite times in seconds")
            if (intervals and text == "") or skipped:
                continue
            row = make(start, end, text, Origin(name, tier.name, number, line))
            read_rows.append(row)
            if attached:  # only a tier of notes or values looks a label up by its times
                row_at[(tier.name, start, end)] = row
        found = len(read_rows) - before
        if tier.name not in attached:
            reading.report.count_read(name, tier.name, found)
            reading.report.tally(name, tier.name).gaps += len(tier.items) - found
    for tier in tiers:
        if tier.name not in attached:
            continue
        kind, labels = attached[tier.name]
        for number, (start, end, text, line) in enumerate(tier.items, start=1):
            row = row_at.get((labels, start, end)) if text != "" else None
            if row is not None:
                row[kind] = text
            elif text != "":
                reading.report.leave_out(Origin(name, tier.name, number, line),
                                         f"a {kind} at times where the tier '{labels}' has no label", repr(text))
    return reading
