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
check it against pympi-ling where both give times.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from storage.errors import ImportFailed, RowProblem
from storage.files import open_regular
from storage.exporters.common import ATTACHED, TierRows, parse_tier_name
from storage.exporters.report import Origin, Reading, bad_item, refused

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
        with open_regular(path) as source:
            root = ET.parse(source).getroot()
    except ET.ParseError as exc:
        line, column = exc.position
        what = _XML_DAMAGE.get(exc.code, "XML that cannot be read")
        raise ImportFailed(RowProblem(path.name, line, None, f"{what} (column {column + 1})",
                                      "an ELAN .eaf file")) from None
    except OSError as exc:
        raise ImportFailed(RowProblem(path.name, None, None, f"<{exc.strerror or exc}>", "a readable file")) from None
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

    order: dict[str, int] = {}
    slot_ms: dict[str, float] = {}
    for index, slot in enumerate(root.iter("TIME_SLOT")):
        attrs = slot.attrib
        slot_id, value = attrs.get("TIME_SLOT_ID", ""), attrs.get("TIME_VALUE")
        order[slot_id] = index
        if value:
            try:
                slot_ms[slot_id] = float(value)
            except ValueError:
                raise _problem(path, f"TIME_SLOT {slot_id}", repr(value), "a time in milliseconds") from None

    types = {t.get("LINGUISTIC_TYPE_ID"): t for t in root.iter("LINGUISTIC_TYPE")}
    tiers: list[_Tier] = []
    by_id: dict[str, _Annotation] = {}
    for element in root.iter("TIER"):
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
                    missing = slots[0] if slots[0] not in order else slots[1]
                    raise bad_item(Origin(path.name, tier.id, number), f"the time slot {missing!r}",
                                   "a TIME_SLOT_ID of the file's TIME_ORDER")
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

    attached = {tier.id: kind for tier in tiers for kind, suffix in ATTACHED.items()
                if tier.id.endswith(suffix) and tier.attrs.get("PARENT_REF") == tier.id[:-len(suffix)]
                and types.get(tier.attrs.get("LINGUISTIC_TYPE_REF")) is not None
                and types[tier.attrs["LINGUISTIC_TYPE_REF"]].get("CONSTRAINTS") == "Symbolic_Association"}
    row_of: dict[str, dict] = {}
    reading = Reading([])
    found = reading.rows
    name = path.name
    if header is not None:
        reading.media = [PurePosixPath(unquote(m.get("MEDIA_URL") or m.get("RELATIVE_MEDIA_URL") or "")).name
                         for m in header.iter("MEDIA_DESCRIPTOR")]
    for tier in tiers:
        if tier.id in attached:
            continue
        attrs = tier.attrs
        ling = types.get(attrs.get("LINGUISTIC_TYPE_REF"))
        tier_meta = {"speaker": attrs.get("PARTICIPANT"), "parent_tier": attrs.get("PARENT_REF"),
                     "tier_type": ling.get("CONSTRAINTS") if ling is not None else None,
                     "linguistic_type": attrs.get("LINGUISTIC_TYPE_REF")}
        make = TierRows(stimulus, tier.id, annotator=attrs.get("ANNOTATOR"), meta=tier_meta).row
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
            row = make(round((span[0] + origin_ms) / 1000.0, 9), round((span[1] + origin_ms) / 1000.0, 9),
                       annotation.value, origin, extra)
            found.append(row)
            if attached:
                row_of[annotation.id] = row
        reading.report.count_read(name, tier.id, len(found) - before)
        if ling is not None and ling.get("CONTROLLED_VOCABULARY_REF"):
            label_set = parse_tier_name(tier.id)[1] or tier.id
            reading.vocabularies.setdefault(label_set, []).extend(
                _vocabulary(root, ling.get("CONTROLLED_VOCABULARY_REF")))
    for tier in tiers:
        for annotation in tier.annotations if tier.id in attached else ():
            if annotation.parent in row_of:
                row_of[annotation.parent][attached[tier.id]] = annotation.value
    if origin_ms:
        reading.report.note(f"{name}: the medium's TIME_ORIGIN of {origin_ms:g} ms was added to every time")
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
