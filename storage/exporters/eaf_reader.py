"""Reading an ELAN `.eaf` file (EAF 2.6 to 3.0) with every annotation on every tier, as ELAN shows it.

Times: an aligned time slot has its own time; an unaligned one (a boundary inside a Time Subdivision or an
Included In tier, or a slot ELAN left unaligned) gets the time ELAN proposes, evenly spaced between the
nearest aligned slots on the same tier, else within the parent annotation. A reference annotation (Symbolic
Association) takes its parent's span; the annotations of a Symbolic Subdivision split their parent's span
evenly in their order (PREVIOUS_ANNOTATION). The first linked medium's TIME_ORIGIN (where the document's
time 0 falls in the medium) is added to every time, except in a file naming its stimulus (`thinslice:stimulus`,
as the export writes): its times are the stimulus's own, and TIME_ORIGIN is where the stimulus starts in the
recording. An annotation with an empty value is a label with empty text, not a gap.

A Symbolic Association tier `<tier> :note` or `<tier> :value` gives its parent labels' notes or values
(how the ELAN export writes them). The linked media files' names come back as `Reading.media`, so a file can be placed by its recording.
Kept per label (in `meta`): the tier's name, participant (as speaker), parent tier, constraint and
linguistic type, where its times came from, its controlled-vocabulary entry and language. Tier annotators
become the label's annotator; controlled vocabularies come back as `Reading.vocabularies`. pympi-ling
reads times of aligned slots only (it returns None for the rest), so this reader is our own; the tests
check it against pympi-ling where both give times. A file whose annotations are all aligned to slots with
times (as ELAN writes one without dependent tiers) is read a tier at a time, as columns (`_read_aligned`);
any other, annotation by annotation (`_read_annotations`), to the same labels. A file laid out as ELAN writes
it has its time slots and annotations read as columns straight from its text (`eaf_plain`), the rest parsed
as XML; any other is parsed whole.
"""
from __future__ import annotations

import functools
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import add, is_, itemgetter, methodcaller, truediv
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from storage.errors import ImportFailed, RowProblem
from storage.files import read_regular_bytes
from storage.exporters.common import ATTACHED, TierRows, TierTable, parse_tier_name
from storage.exporters.eaf_plain import Aligned, References, plain_document
from storage.exporters.report import Origin, Reading, TransferReport, bad_item, refused

STIMULUS_PROPERTY = "thinslice:stimulus"
ATTACHED_TYPE = "attached-lt"  # the linguistic type of a Symbolic Association tier of notes or values


@dataclass(slots=True)
class _Annotation:
    id: str
    tier: str
    number: int                      # position on its tier, from 1
    value: str
    slots: tuple[str, str] | None    # an alignable annotation's time slots
    parent: str | None = None        # a reference annotation's ANNOTATION_REF
    previous: str | None = None
    cve: str | None = None
    language: str | None = None
    times: tuple[float, float] | None = None
    how: str | None = None           # where the times came from when not two aligned slots


@dataclass
class _Tier:
    id: str
    attrs: dict[str, str]
    annotations: list[_Annotation] = field(default_factory=list)


# expat's error codes, said in the words of someone who wrote or damaged the file
_XML_DAMAGE = {3: "the end of the file before the XML ends", 4: "a character or mark XML does not allow",
               5: "the end of the file inside an element", 7: "a closing tag that does not match its opening one",
               9: "text after the document's last closing tag", 11: "an entity the file does not define"}


def _problem(path: Path, where: str, found: str, expected: str) -> ImportFailed:
    return refused([f"{path.name}, {where}: found {found}; expected {expected}"])


def read_eaf(path: Path) -> Reading:
    """Every annotation of one `.eaf` file as a row; `stimulus` is the file's `thinslice:stimulus`
    property when it has one, else None (the importer places the file by its name)."""
    path = Path(path)
    try:
        raw = read_regular_bytes(path)
    except OSError as exc:
        raise ImportFailed(RowProblem(path.name, None, None, f"<{exc.strerror or exc}>", "a readable file")) from None
    reading = None
    plain = plain_document(raw, attached_tiers)
    if plain is not None:   # laid out as ELAN writes a file: its bodies read as columns, the rest as XML
        file = _file(path, plain.skeleton, plain.slot_ids, plain.slot_values)
        reading = _read_aligned(file, plain.tiers)
    if reading is None:
        root = _parse(path, raw)
        slots = [slot.attrib for slot in root.iter("TIME_SLOT")]
        file = _file(path, root, list(map(dict.get, slots, repeat("TIME_SLOT_ID"), repeat(""))),
                     list(map(dict.get, slots, repeat("TIME_VALUE"))))
        reading = _read_aligned(file, [_element_items(element, element.get("TIER_ID", "") in file.attached)
                                       for element in file.elements])
        if reading is None:
            reading = _read_annotations(file)
    header = file.root.find("HEADER")
    if header is not None:
        reading.media = [PurePosixPath(unquote(m.get("MEDIA_URL") or m.get("RELATIVE_MEDIA_URL") or "")).name
                         for m in header.iter("MEDIA_DESCRIPTOR")]
    if file.origin_ms:
        reading.report.note(f"{path.name}: the medium's TIME_ORIGIN of {file.origin_ms:g} ms was added to every time")
    return reading


def _parse(path: Path, raw: bytes) -> ET.Element:
    """The whole file as XML; damage refuses it, naming line and column."""
    try:
        return ET.fromstring(raw)
    except ET.ParseError as exc:
        line, column = exc.position
        what = _XML_DAMAGE.get(exc.code, "XML that cannot be read")
        raise ImportFailed(RowProblem(path.name, line, None, f"{what} (column {column + 1})",
                                      "an ELAN .eaf file")) from None


def attached_tiers(root: ET.Element, elements: list[ET.Element]) -> dict[str, str]:
    """The tiers of notes and values (tier -> 'note' or 'value'): a Symbolic Association tier `<tier> :note`
    (`:value`) under `<tier>`."""
    types = {t.get("LINGUISTIC_TYPE_ID"): t for t in root.iter("LINGUISTIC_TYPE")}
    return {tier_id: kind for tier_id, attrs in ((e.get("TIER_ID", ""), e.attrib) for e in elements)
            for kind, suffix in ATTACHED.items()
            if tier_id.endswith(suffix) and attrs.get("PARENT_REF") == tier_id[:-len(suffix)]
            and types.get(attrs.get("LINGUISTIC_TYPE_REF")) is not None
            and types[attrs["LINGUISTIC_TYPE_REF"]].get("CONSTRAINTS") == "Symbolic_Association"}


def _file(path: Path, root: ET.Element, slot_ids: list[str], slot_values: list[str | None]) -> _File:
    """What reading the annotations of the document `root` needs (its time slots given as their ids and
    TIME_VALUEs, in file order, None or empty where a slot has none); a document that is no ELAN file, or
    counts time otherwise, is refused."""
    if root.tag != "ANNOTATION_DOCUMENT":
        raise _problem(path, "root element", f"<{root.tag}>", "<ANNOTATION_DOCUMENT> (an ELAN file)")
    header = root.find("HEADER")
    units = header.get("TIME_UNITS", "milliseconds") if header is not None else "milliseconds"
    if units != "milliseconds":
        raise _problem(path, "HEADER TIME_UNITS", repr(units), "'milliseconds' (the only unit ELAN writes)")
    stimulus = next((p.text for p in root.iter("PROPERTY") if p.get("NAME") == STIMULUS_PROPERTY and p.text), None)
    origin_ms = 0.0
    media = header.find("MEDIA_DESCRIPTOR") if header is not None else None
    if media is not None and media.get("TIME_ORIGIN") and stimulus is None:
        try:
            origin_ms = float(media.get("TIME_ORIGIN"))
        except ValueError:
            raise _problem(path, "MEDIA_DESCRIPTOR TIME_ORIGIN", repr(media.get("TIME_ORIGIN")),
                           "an offset in milliseconds") from None
    types = {t.get("LINGUISTIC_TYPE_ID"): t for t in root.iter("LINGUISTIC_TYPE")}
    elements = list(root.iter("TIER"))
    return _File(path, root, elements, types, attached_tiers(root, elements), stimulus, origin_ms, slot_ids,
                 _slot_times(slot_ids, slot_values, path))


# a whole number of ms below this (46 days) divided by 1000 is already the nearest double to its 9-place
# rounding: the quotient's error is under half a billionth
_WHOLE_MS = 4e9


@dataclass
class _File:
    """What every reading of one file's annotations needs: its tiers (`elements`), linguistic types, the
    tiers of notes and values (`attached`: tier -> 'note' or 'value'), and its time slots (`slot_ids` in
    TIME_ORDER, `slot_ms`: the time of each that has one)."""

    path: Path
    root: ET.Element
    elements: list[ET.Element]
    types: dict[str | None, ET.Element]
    attached: dict[str, str]
    stimulus: str | None
    origin_ms: float
    slot_ids: list[str]
    slot_ms: dict[str, float]

    @functools.cached_property
    def order(self) -> dict[str, int]:
        """Each time slot's place in TIME_ORDER."""
        return dict(zip(self.slot_ids, range(len(self.slot_ids))))

    def seconds(self, ms: float) -> float:
        """A time of the file (in ms) in the stimulus's seconds."""
        return round((ms + self.origin_ms) / 1000.0, 9)

    def all_seconds(self, ms: Iterable[float]) -> list[float]:
        """`seconds` of each of the file's slot times, computed alike: a whole number of ms (no origin to add)
        is divided alone, since rounding its quotient to 9 places gives that quotient back."""
        if self.whole_ms:
            return list(map(truediv, ms, repeat(1000.0)))
        return list(map(round, map(truediv, map(add, ms, repeat(self.origin_ms)), repeat(1000.0)), repeat(9)))

    @functools.cached_property
    def whole_ms(self) -> bool:
        """Whether every slot's time is a whole number of ms within _WHOLE_MS, and there is no origin to add."""
        times = self.slot_ms.values()
        return not self.origin_ms and all(map(float.is_integer, times)) \
            and -_WHOLE_MS < min(times, default=0.0) and max(times, default=0.0) < _WHOLE_MS

    def tier_rows(self, tier_id: str, attrs: dict[str, str]) -> tuple[TierRows, ET.Element | None]:
        """How a tier's labels are made, and its linguistic type."""
        ling = self.types.get(attrs.get("LINGUISTIC_TYPE_REF"))
        tier_meta = {"speaker": attrs.get("PARTICIPANT"), "parent_tier": attrs.get("PARENT_REF"),
                     "tier_type": ling.get("CONSTRAINTS") if ling is not None else None,
                     "linguistic_type": attrs.get("LINGUISTIC_TYPE_REF")}
        return TierRows(self.stimulus, tier_id, annotator=attrs.get("ANNOTATOR"), meta=tier_meta), ling

    def vocabulary(self, vocabularies: dict[str, list[tuple[str, str | None]]], tier_id: str,
                   ling: ET.Element | None) -> None:
        """The controlled vocabulary of a tier's linguistic type, kept in `vocabularies` under the tier's label set."""
        if ling is not None and ling.get("CONTROLLED_VOCABULARY_REF"):
            label_set = parse_tier_name(tier_id)[1] or tier_id
            vocabularies.setdefault(label_set, []).extend(
                _vocabulary(self.root, ling.get("CONTROLLED_VOCABULARY_REF")))

    def missing_slot(self, tier_id: str, number: int, slots: tuple[str, str]) -> ImportFailed:
        missing = slots[0] if slots[0] not in self.order else slots[1]
        return bad_item(Origin(self.path.name, tier_id, number), f"the time slot {missing!r}",
                        "a TIME_SLOT_ID of the file's TIME_ORDER")


def _slot_times(ids: list[str], values: list[str | None], path: Path) -> dict[str, float]:
    """The time (ms) of each TIME_SLOT (`ids`) that has one (its TIME_VALUE in `values`, None or empty where it
    has none); the first time that is no number refuses the file."""
    try:
        return dict(zip(compress(ids, values), map(float, compress(values, values))))
    except ValueError:
        slot_id, value = next((i, v) for i, v in zip(ids, values) if v and not _is_float(v))
        raise _problem(path, f"TIME_SLOT {slot_id}", repr(value), "a time in milliseconds") from None


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _element_items(element: ET.Element, attached: bool) -> Aligned | References | None:
    """A TIER element's annotations as columns: a tier of notes or values (`attached`) as the references and
    values of its annotations' first elements, when it holds no aligned annotation; any other tier as
    `Aligned`, when each ANNOTATION holds one element, an ALIGNABLE_ANNOTATION. None otherwise."""
    wrappers = element.findall("ANNOTATION")
    aligned = list(element.iter("ALIGNABLE_ANNOTATION"))
    if attached:
        if aligned:
            return None
        items = [item for item in (next(iter(wrapper), None) for wrapper in wrappers) if item is not None]
        return References([item.get("ANNOTATION_REF") for item in items],
                          [item.findtext("ANNOTATION_VALUE") or "" for item in items])
    if not set(map(len, wrappers)) <= {1} or len(aligned) != len(wrappers) \
            or not all(map(is_, map(itemgetter(0), wrappers), aligned)):
        return None
    attrs = [item.attrib for item in aligned]
    return Aligned(list(map(dict.get, attrs, repeat("ANNOTATION_ID"), repeat(""))),
                   list(map(dict.get, attrs, repeat("TIME_SLOT_REF1"), repeat(""))),
                   list(map(dict.get, attrs, repeat("TIME_SLOT_REF2"), repeat(""))),
                   list(map(methodcaller("findtext", "ANNOTATION_VALUE", ""), aligned)),
                   list(map(dict.get, attrs, repeat("CVE_REF"))), list(map(dict.get, attrs, repeat("LANG_REF"))))


def _read_aligned(file: _File, tiers: list[Aligned | References | None]) -> Reading | None:
    """Every annotation as a table, read a tier at a time (`tiers`: each of `file.elements`'s annotations as
    columns), when every annotation of every tier is aligned to two time slots with times (as ELAN writes a
    file without dependent tiers) and the tiers of notes and values hold references only; None when any is not
    (`_read_annotations` reads such a file)."""
    name = file.path.name
    table = TierTable(name)
    ids: list[str] = []
    report = TransferReport()
    vocabularies: dict[str, list[tuple[str, str | None]]] = {}
    for element, items in zip(file.elements, tiers):
        tier_id = element.get("TIER_ID", "")
        if tier_id in file.attached:
            if items is None:
                return None
            continue
        if not isinstance(items, Aligned):
            return None
        first, second = items.first, items.second
        try:
            starts, ends = list(map(file.slot_ms.__getitem__, first)), list(map(file.slot_ms.__getitem__, second))
        except KeyError:   # a slot without a time, or none of TIME_ORDER, which refuses the file
            number, slots = next(((n, slots) for n, slots in enumerate(zip(first, second), start=1)
                                  if not {*slots} <= file.order.keys()), (0, None))
            if slots is not None:
                raise file.missing_slot(tier_id, number, slots) from None
            return None
        made, ling = file.tier_rows(tier_id, element.attrib)
        meta = json.dumps(made.meta) if made.meta else None
        table.add(made, tier_id, items.values, file.all_seconds(starts), file.all_seconds(ends),
                  range(1, len(first) + 1), metas=_metas(made, items.cves, items.languages, meta))
        if file.attached:
            ids += items.ids
        report.count_read(name, tier_id, len(first))
        file.vocabulary(vocabularies, tier_id, ling)
    if file.attached:
        row_of = dict(zip(ids, range(len(ids))))
        for element, items in zip(file.elements, tiers):
            kind = file.attached.get(element.get("TIER_ID", ""))
            for reference, value in zip(*items) if kind else ():
                row = row_of.get(reference)
                if row is not None:
                    table.give(kind, row, value)
    return Reading(report=report, vocabularies=vocabularies, labels=table.frame())


def _metas(made: TierRows, cves: list[str | None], languages: list[str | None], meta: str | None) -> list[str | None]:
    """Each label's `meta` as JSON text: its tier's (`meta`), with its controlled-vocabulary entry and language
    where it has them, as `TierRows.row` makes it and the store encodes it."""
    if not any(cves) and not any(languages):
        return [meta] * len(cves)
    texts: dict[tuple[str | None, str | None], str | None] = {}
    out = []
    for cve, language in zip(cves, languages):
        key = (cve, language)
        if key not in texts:
            texts[key] = json.dumps(made.row(0.0, 0.0, "", None, {"times": None, "cve": cve, "language": language})
                                    ["meta"]) if cve or language else meta
        out.append(texts[key])
    return out


def _read_annotations(file: _File) -> Reading:
    """Every annotation of the file as a row, whatever its times depend on: each annotation an object, its
    times worked out from its slots, its tier's neighbours or its parent."""
    path, order, slot_ms, attached = file.path, file.order, file.slot_ms, file.attached
    tiers: list[_Tier] = []
    by_id: dict[str, _Annotation] = {}
    for element in file.elements:
        tier = _Tier(element.get("TIER_ID", ""), dict(element.attrib))
        for number, wrapper in enumerate(element.findall("ANNOTATION"), start=1):
            item = next(iter(wrapper), None)
            if item is None:
                continue
            attrs = item.attrib
            value = item.findtext("ANNOTATION_VALUE") or ""
            if item.tag == "ALIGNABLE_ANNOTATION":
                slots = (attrs.get("TIME_SLOT_REF1", ""), attrs.get("TIME_SLOT_REF2", ""))
                if slots[0] not in order or slots[1] not in order:
                    raise file.missing_slot(tier.id, number, slots)
                annotation = _Annotation(attrs.get("ANNOTATION_ID", ""), tier.id, number, value, slots, None, None,
                                         attrs.get("CVE_REF"), attrs.get("LANG_REF"))
            else:
                annotation = _Annotation(attrs.get("ANNOTATION_ID", ""), tier.id, number, value, None,
                                         attrs.get("ANNOTATION_REF"), attrs.get("PREVIOUS_ANNOTATION"),
                                         attrs.get("CVE_REF"), attrs.get("LANG_REF"))
            tier.annotations.append(annotation)
            by_id[annotation.id] = annotation
        tiers.append(tier)
    tier_by_id = {t.id: t for t in tiers}

    def depth(tier: _Tier, seen: frozenset[str] = frozenset()) -> int:
        parent = tier_by_id.get(tier.attrs.get("PARENT_REF", ""))
        return 0 if parent is None or parent.id in seen else 1 + depth(parent, seen | {tier.id})

    for tier in sorted(tiers, key=depth):  # a parent's times first: a child's boundary may be its parent's
        _resolve_alignable(tier, slot_ms, order, tier_by_id)
    children: dict[str, list[_Annotation]] = {}
    for annotation in by_id.values():
        if annotation.parent is not None:
            children.setdefault(annotation.parent, []).append(annotation)

    def times_of(annotation: _Annotation, seen: frozenset[str] = frozenset()) -> tuple[float, float] | None:
        if annotation.times is not None or annotation.slots is not None:
            return annotation.times
        parent = by_id.get(annotation.parent or "")
        if parent is None or annotation.id in seen:
            return None
        span = times_of(parent, seen | {annotation.id})
        if span is None:
            return None
        siblings = _in_order(children.get(parent.id, [annotation]))
        if len(siblings) == 1:
            annotation.times, annotation.how = span, "parent"
        else:
            step = (span[1] - span[0]) / len(siblings)
            for index, sibling in enumerate(siblings):
                sibling.times = (span[0] + index * step, span[0] + (index + 1) * step)
                sibling.how = "subdivision of parent"
        return annotation.times

    row_of: dict[str, dict] = {}
    reading = Reading([])
    found = reading.rows
    name = path.name
    for tier in tiers:
        if tier.id in attached:
            continue
        made, ling = file.tier_rows(tier.id, tier.attrs)
        make = made.row
        before = len(found)
        for annotation in tier.annotations:
            # an aligned annotation's times are known by now; only a reference annotation's are looked for
            span = annotation.times if annotation.slots is not None else times_of(annotation)
            origin = Origin(name, tier.id, annotation.number)
            if span is None:
                reading.report.leave_out(origin, "no time can be found for it (no aligned slot on its tier or parent)",
                                         repr(annotation.value))
                continue
            extra = {"times": annotation.how, "cve": annotation.cve, "language": annotation.language} \
                if annotation.how or annotation.cve or annotation.language else None
            row = make(file.seconds(span[0]), file.seconds(span[1]), annotation.value, origin, extra)
            found.append(row)
            if attached:
                row_of[annotation.id] = row
        reading.report.count_read(name, tier.id, len(found) - before)
        file.vocabulary(reading.vocabularies, tier.id, ling)
    for tier in tiers:
        for annotation in tier.annotations if tier.id in attached else ():
            if annotation.parent in row_of:
                row_of[annotation.parent][attached[tier.id]] = annotation.value
    return reading


def _in_order(siblings: list[_Annotation]) -> list[_Annotation]:
    """A Symbolic Subdivision's annotations in their PREVIOUS_ANNOTATION chain (file order where broken)."""
    by_previous = {s.previous: s for s in siblings}
    chain, current = [], by_previous.get(None)
    while current is not None and current not in chain:
        chain.append(current)
        current = by_previous.get(current.id)
    return chain + [s for s in siblings if s not in chain]


def _resolve_alignable(tier: _Tier, slot_ms: dict[str, float], order: dict[str, int],
                       tier_by_id: dict[str, _Tier]) -> None:
    """Times of a tier's alignable annotations; unaligned slots spaced evenly between aligned ones."""
    aligned = [a for a in tier.annotations if a.slots is not None]
    if not aligned:
        return
    if all(s in slot_ms for a in aligned for s in a.slots):  # as ELAN writes them: every boundary has its time
        for annotation in aligned:
            annotation.times = (slot_ms[annotation.slots[0]], slot_ms[annotation.slots[1]])
        return
    sequence: list[str] = []
    for annotation in sorted(aligned, key=lambda a: (order.get(a.slots[0], 0), order.get(a.slots[1], 0))):
        for slot in annotation.slots:
            if not sequence or sequence[-1] != slot:
                sequence.append(slot)
    guessed: dict[str, float] = {}
    known = [i for i, slot in enumerate(sequence) if slot in slot_ms]
    for i, slot in enumerate(sequence):
        if slot in slot_ms:
            continue
        before = max((k for k in known if k < i), default=None)
        after = min((k for k in known if k > i), default=None)
        if before is not None and after is not None:
            t0, t1 = slot_ms[sequence[before]], slot_ms[sequence[after]]
            guessed[slot] = t0 + (t1 - t0) * (i - before) / (after - before)
    parent_tier = tier_by_id.get(tier.attrs.get("PARENT_REF", ""))
    for annotation in aligned:
        start, end = (slot_ms.get(s, guessed.get(s)) for s in annotation.slots)
        if start is None or end is None:
            # no aligned neighbour on the tier: the boundary is the parent annotation's
            parent = _enclosing(annotation, parent_tier, slot_ms, guessed, order)
            if parent is not None:
                start = parent[0] if start is None else start
                end = parent[1] if end is None else end
        if start is not None and end is not None:
            annotation.times = (start, end)
            if any(s not in slot_ms for s in annotation.slots):
                annotation.how = "interpolated"


def _enclosing(annotation: _Annotation, parent_tier: _Tier | None, slot_ms: dict[str, float],
               guessed: dict[str, float], order: dict[str, int]) -> tuple[float, float] | None:
    """The span of the parent tier's annotation that holds `annotation` in the time order."""
    if parent_tier is None:
        return None
    position = order.get(annotation.slots[0], 0)
    for parent in parent_tier.annotations:
        if parent.times is not None and parent.slots is not None \
                and order.get(parent.slots[0], 0) <= position <= order.get(parent.slots[1], 0):
            return parent.times
    return None


def _vocabulary(root: ET.Element, cv_id: str) -> list[tuple[str, str | None]]:
    """(value, description) of a controlled vocabulary's entries, in EAF 2.8+ (CV_ENTRY_ML) or older form."""
    for cv in root.iter("CONTROLLED_VOCABULARY"):
        if cv.get("CV_ID") != cv_id:
            continue
        entries = []
        for entry in cv.iter("CV_ENTRY_ML"):
            value = entry.find("CVE_VALUE")
            if value is not None and value.text:
                entries.append((value.text, value.get("DESCRIPTION") or None))
        for entry in cv.iter("CV_ENTRY"):
            if entry.text:
                entries.append((entry.text, entry.get("DESCRIPTION") or None))
        return entries
    return []
