"""The bulk of an ELAN file laid out as ELAN writes it, read as columns without building an element per tag.

An `.eaf` of 1,000 labels holds some 5,000 elements, nearly all of them time slots and annotations in one
of a few fixed shapes. `plain_document` cuts out the body of every TIME_ORDER and TIER, parses what is
left (the header, tier attributes, linguistic types, vocabularies) as XML, and reads each body with one
pattern: a time slot, an aligned annotation or, on a tier of notes or values, a reference annotation, each as
ELAN, pympi-ling and our export write it, with white space anywhere XML allows it between attributes and
elements, the five named entities in values, and any further attributes. A body holding anything else (a
comment, CDATA, a character reference, an attribute in another order or with an entity, an element of
another kind, stray text), a skeleton XML refuses, or a document with comments, processing instructions, a
DOCTYPE, CDATA or an encoding other than UTF-8 gives None: the caller parses the whole file as XML instead.
Everything the patterns accept is well-formed XML that the parser would read to the same values (line ends
normalised first, as XML does; no character in a value that XML refuses; no attribute value XML would
normalise), so both readings agree on every file this one reads.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import getitem
from typing import NamedTuple

_S = "[ \t\n]"
_VALUE_CHARS = '[^"<&\x00-\x1f\ufffe\uffff]'           # an attribute value with nothing to expand or normalise
_ATT = f'"({_VALUE_CHARS}*+)"'
# further attributes: XML names without a prefix (one would need its namespace declared); each is checked for
# repeats, namespace declarations and names the pattern reads itself (`_extra`)
_EXTRA = f'((?:{_S}++(?!TIME_SLOT_REF[12]=)[A-Za-z_][-A-Za-z0-9_.]*+="{_VALUE_CHARS}*+")*+)'
# a value's text: no character XML refuses, no "]]>", and no entity but the five named ones
_TEXT_CHARS = "[^]<&\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]"
_TEXT = f"({_TEXT_CHARS}*+(?:(?:&(?:lt|gt|amp|quot|apos);|](?!]>)){_TEXT_CHARS}*+)*+)"
_VALUE = f"<ANNOTATION_VALUE{_S}*+(?:/>|>{_TEXT}</ANNOTATION_VALUE{_S}*+>)"
# each pattern ends in `|(.)`: anything else in a body is caught there, and the body is not plain
_SLOT = re.compile(f"{_S}*+(?:<TIME_SLOT{_S}++TIME_SLOT_ID={_ATT}(?:{_S}++TIME_VALUE={_ATT})?{_S}*+/>|(.))", re.S)
_ALIGNED = re.compile(
    f"{_S}*+(?:<ANNOTATION{_S}*+>{_S}*+<ALIGNABLE_ANNOTATION{_S}++ANNOTATION_ID={_ATT}{_EXTRA}"
    f"{_S}++TIME_SLOT_REF1={_ATT}{_S}++TIME_SLOT_REF2={_ATT}{_EXTRA}{_S}*+>{_S}*+{_VALUE}{_S}*+"
    f"</ALIGNABLE_ANNOTATION{_S}*+>{_S}*+</ANNOTATION{_S}*+>|(.))", re.S)
_REFERENCE = re.compile(
    f"{_S}*+(?:<ANNOTATION{_S}*+>{_S}*+<REF_ANNOTATION{_S}++ANNOTATION_ID={_ATT}{_S}++ANNOTATION_REF={_ATT}"
    f"{_EXTRA}{_S}*+>{_S}*+{_VALUE}{_S}*+</REF_ANNOTATION{_S}*+>{_S}*+</ANNOTATION{_S}*+>|(.))", re.S)
_EXTRA_ATTRIBUTE = re.compile(f'{_S}+([^=]+)="([^"]*)"')   # within what `_EXTRA` took
_OWN_NAMES = {_ALIGNED: {"ANNOTATION_ID", "TIME_SLOT_REF1", "TIME_SLOT_REF2"},
              _REFERENCE: {"ANNOTATION_ID", "ANNOTATION_REF"}}
_BLOCK = re.compile(f"<(TIME_ORDER|TIER)({_S}[^<>]*)?>")
_DECLARATION = re.compile(r"<\?xml[^<>]*?\?>")
_ENCODING = re.compile(r"""encoding\s*=\s*["']([^"']*)["']""")
_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'"), ("&amp;", "&"))


class Aligned(NamedTuple):
    """A tier's annotations, each an ALIGNABLE_ANNOTATION, as columns: id, time slots, value, and CVE_REF and
    LANG_REF (None where it has none)."""

    ids: list[str]
    first: list[str]
    second: list[str]
    values: list[str]
    cves: list[str | None]
    languages: list[str | None]


class References(NamedTuple):
    """A tier of notes or values as columns: each annotation's ANNOTATION_REF (None where it has none) and value."""

    references: list[str | None]
    values: list[str]


@dataclass
class PlainDocument:
    """A file read by `plain_document`: the XML around the bodies (`skeleton`, with empty TIME_ORDERs and
    TIERs), its time slots in file order (`slot_values`: empty where a slot has no time), and each TIER's
    annotations in file order, read as `Aligned`, or as `References` for a tier of notes or values."""

    skeleton: ET.Element
    slot_ids: list[str]
    slot_values: list[str]
    tiers: list[Aligned | References]


def plain_document(raw: bytes, attached_tiers: Callable[[ET.Element, list[ET.Element]], Collection[str]]
                   ) -> PlainDocument | None:
    """The file `raw` read as described above, or None when it is not laid out plainly. `attached_tiers(root,
    tiers)` names (by TIER_ID), of the skeleton's TIER elements, those read as tiers of notes or values."""
    text = _text(raw)
    if text is None:
        return None
    pieces, slot_bodies, tier_bodies, position = [], [], [], 0
    while (opening := _BLOCK.search(text, position)) is not None:
        body: tuple[int, int] | None = None
        if not (opening[2] or "").endswith("/"):   # else an empty element, with nothing to cut
            end = text.find(f"</{opening[1]}>", opening.end())
            if end < 0:
                return None
            body = (opening.end(), end)
        pieces.append(text[position:opening.end()])
        position = body[1] if body else opening.end()
        if opening[1] == "TIER":
            tier_bodies.append(body)
        elif body:
            slot_bodies.append(body)
    pieces.append(text[position:])
    skeleton = "".join(pieces)
    # No comment, CDATA, DOCTYPE or processing instruction but the XML declaration: none can be in a body the
    # patterns read, so none is in the file, and every tag cut at was one.
    if "<!" in skeleton or skeleton.count("<?") != (_DECLARATION.match(skeleton) is not None):
        return None
    try:
        root = ET.fromstring(skeleton)
    except ET.ParseError:
        return None
    elements = list(root.iter("TIER"))
    # every time slot is in a body read here, and each TIER element is one whose opening tag was found
    if next(root.iter("TIME_SLOT"), None) is not None or len(elements) != len(tier_bodies):
        return None
    slot_ids: list[str] = []
    slot_values: list[str] = []
    for start, end in slot_bodies:
        slots = _uniform_slots(text[start:end]) or _slots(text, start, end)
        if slots is None:
            return None
        slot_ids += slots[0]
        slot_values += slots[1]
    attached = attached_tiers(root, elements)
    tiers: list[Aligned | References] = []
    for element, body in zip(elements, tier_bodies):
        start, end = body or (0, 0)
        items = _references(text, start, end) if element.get("TIER_ID", "") in attached else _aligned(text, start, end)
        if items is None:
            return None
        tiers.append(items)
    return PlainDocument(root, slot_ids, slot_values, tiers)


def _text(raw: bytes) -> str | None:
    """The file as text with XML's line ends, when it is UTF-8; else None."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    declaration = _DECLARATION.match(text)
    encoding = _ENCODING.search(declaration[0]) if declaration is not None else None
    if encoding is not None and encoding[1].lower() not in ("utf-8", "utf8"):
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _slots(text: str, start: int, end: int) -> tuple[Sequence[str], Sequence[str]] | None:
    found = _SLOT.findall(text, start, end)
    if not found:
        return [], []
    ids, values, stray = zip(*found)
    return None if any(stray) else (ids, values)


# The same shapes taken faster where every item of a body is written alike, as a program writes them: the body
# split at its quotes alternates between the same pieces of markup (checked once each) and attribute values;
# an annotation's value sits between the same markup in every item. Any body written otherwise (a slot without
# a time, further attributes, a quote in a value, a value without text) is left to the patterns above.
_SLOT_PIECES = tuple(re.compile(pattern) for pattern in (
    f"{_S}*+<TIME_SLOT{_S}++TIME_SLOT_ID=", f"{_S}++TIME_VALUE=", f"{_S}*+/>{_S}*+<TIME_SLOT{_S}++TIME_SLOT_ID=",
    f"{_S}*+/>{_S}*+"))
_ALIGNED_PIECES = tuple(re.compile(pattern) for pattern in (
    f"{_S}*+<ANNOTATION{_S}*+>{_S}*+<ALIGNABLE_ANNOTATION{_S}++ANNOTATION_ID=", f"{_S}++TIME_SLOT_REF1=",
    f"{_S}++TIME_SLOT_REF2="))
# after an annotation's last slot: the markup before its value, the value, and the markup after it (with the
# next item's, up to its first attribute value, but for the last item)
_ALIGNED_TAIL = re.compile(
    f"({_S}*+>{_S}*+<ANNOTATION_VALUE{_S}*+>){_TEXT}(</ANNOTATION_VALUE{_S}*+>{_S}*+</ALIGNABLE_ANNOTATION{_S}*+>"
    f"{_S}*+</ANNOTATION{_S}*+>{_S}*+(?:<ANNOTATION{_S}*+>{_S}*+<ALIGNABLE_ANNOTATION{_S}++ANNOTATION_ID=)?)")
_ATTRIBUTE_REFUSES = re.compile("[<&\x00-\x1f\ufffe\uffff]")
_TEXT_REFUSES = re.compile("[<\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|]]>|&(?!(?:lt|gt|amp|quot|apos);)")


def _alike(pieces: list[str], pattern: re.Pattern[str]) -> bool:
    """Whether the pieces are all one piece of markup that `pattern` takes."""
    return not pieces or (pieces.count(pieces[0]) == len(pieces) and pattern.fullmatch(pieces[0]) is not None)


def _uniform_slots(body: str) -> tuple[list[str], list[str]] | None:
    """A TIME_ORDER's slot ids and times, when every slot has both and is written alike; else None."""
    parts = body.split('"')
    count, rest = divmod(len(parts) - 1, 4)
    first, value, between, last = _SLOT_PIECES
    if rest or not count or not (first.fullmatch(parts[0]) and last.fullmatch(parts[-1])
                                 and _alike(parts[2::4], value) and _alike(parts[4:-1:4], between)):
        return None
    ids, values = parts[1::4], parts[3::4]
    if _ATTRIBUTE_REFUSES.search("".join(ids)) or _ATTRIBUTE_REFUSES.search("".join(values)):
        return None
    return ids, values


def _uniform_aligned(body: str) -> Aligned | None:
    """A tier's aligned annotations, when each has an id, two slots and a value and no more, written alike;
    else None."""
    parts = body.split('"')
    count, rest = divmod(len(parts) - 1, 6)
    first, slot1, slot2 = _ALIGNED_PIECES
    if rest or not count or not (first.fullmatch(parts[0]) and _alike(parts[2::6], slot1)
                                 and _alike(parts[4::6], slot2)):
        return None
    ids, firsts, seconds, tails = parts[1::6], parts[3::6], parts[5::6], parts[6::6]
    last = _ALIGNED_TAIL.fullmatch(tails[-1])
    if last is None or last[3].endswith("="):
        return None
    values = []
    if count > 1:
        model = _ALIGNED_TAIL.fullmatch(tails[0])
        if model is None or not model[3].endswith("="):
            return None
        before, after = model[1], model[3]
        if not (all(map(str.startswith, tails[:-1], repeat(before))) and all(map(str.endswith, tails[:-1], repeat(after)))):
            return None
        values = list(map(getitem, tails[:-1], repeat(slice(len(before), -len(after)))))
    values.append(last[2])
    if _ATTRIBUTE_REFUSES.search("".join(ids + firsts + seconds)) or _TEXT_REFUSES.search("\n".join(values)):
        return None
    return Aligned(ids, firsts, seconds, _unescaped(values, body, 0, len(body)), [None] * count, [None] * count)


def _aligned(text: str, start: int, end: int) -> Aligned | None:
    uniform = _uniform_aligned(text[start:end])
    if uniform is not None:
        return uniform
    found = _ALIGNED.findall(text, start, end)
    if not found:
        return Aligned([], [], [], [], [], [])
    ids, before, first, second, after, values, stray = map(list, zip(*found))
    if any(stray):
        return None
    cves: list[str | None] = [None] * len(ids)
    languages: list[str | None] = [None] * len(ids)
    for index in compress(range(len(ids)), map(str.__add__, before, after)):
        extra = _extra(_ALIGNED, before[index] + after[index])
        if extra is None:
            return None
        cves[index], languages[index] = extra.get("CVE_REF"), extra.get("LANG_REF")
    return Aligned(ids, first, second, _unescaped(values, text, start, end), cves, languages)


def _references(text: str, start: int, end: int) -> References | None:
    found = _REFERENCE.findall(text, start, end)
    if not found:
        return References([], [])
    _ids, references, extras, values, stray = map(list, zip(*found))
    if any(stray) or any(_extra(_REFERENCE, extra) is None for extra in compress(extras, extras)):
        return None
    return References(references, _unescaped(values, text, start, end))


def _extra(pattern: re.Pattern[str], attributes: str) -> dict[str, str] | None:
    """An element's further attributes by name; None when one repeats (XML refuses the element) or is one the
    pattern reads itself, or is a namespace declaration."""
    pairs = _EXTRA_ATTRIBUTE.findall(attributes)
    found = dict(pairs)
    if len(found) != len(pairs) or found.keys() & _OWN_NAMES[pattern] \
            or any(name.lower().startswith("xmlns") for name in found):
        return None
    return found


def _unescaped(values: list[str], text: str, start: int, end: int) -> list[str]:
    """The values with their named entities replaced by the characters they stand for."""
    if text.find("&", start, end) < 0:   # no attribute value the patterns take holds one
        return values
    out = []
    for value in values:
        if "&" in value:
            for entity, character in _ENTITIES:
                value = value.replace(entity, character)
        out.append(value)
    return out
