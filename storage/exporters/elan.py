"""ELAN `.eaf` (EAF 3.0): one tier per annotator and label set, times in ms.

ELAN tiers cannot hold overlapping annotations, so overlapping labels go to extra tiers named `... #2`.
Whole-stimulus labels are a tier `annotator | set | whole` with one annotation over the whole stimulus; a
point label is a zero-length annotation. A tier read from another tool's file keeps its name, and its
speaker is the tier's PARTICIPANT. The stimulus id is kept in a header PROPERTY `thinslice:stimulus`, and each of
its recordings (audio and video; ELAN plays no images) is linked by a MEDIA_DESCRIPTOR with its absolute URL, its
path relative to the file (which ELAN tries first, so a folder moved whole still opens) and its MIME type; a
recording the stimulus starts into (a 20 s window of a long session) gets that offset as its TIME_ORIGIN, so
ELAN plays the window under the labels, whose times stay the stimulus's own.
A tier read as a dependent tier is written as one again where its labels still fit (`eaf_hierarchy`).
A label's note and value go on Symbolic Association tiers `<tier> :note` and `<tier> :value` under its tier.
Label, times (to the millisecond), annotator, label set, media role (`annotator | set | role=audio:A`),
note, value, speaker, tier hierarchy and linguistic type round-trip; a label's vocabulary entry and
language do not, and
`unrepresentable` says so. Reading is `eaf_reader`.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path, PurePath
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

from storage.exporters.common import (ATTACHED, ExportContext, Loss, Row, build_tiers, by_stimulus, fields_lost,
                                      files_to_read, per_stimulus_targets, write_text)
from storage.exporters.eaf_hierarchy import (REFERRING, TIME_ALIGNABLE, carried_meta, linguistic_types,
                                              plan_hierarchy)
from storage.exporters.eaf_reader import ATTACHED_TYPE, STIMULUS_PROPERTY, read_eaf
from storage.exporters.report import Reading, merged
from storage.records import MediaRef
from storage.exporters.sniff import head_text, score

CARRIED = ("stimulus", "annotator", "label_set", "label", "start_s", "end_s", "media_role", "note", "value")
# ELAN's own descriptions of the four constraints, as it writes them into every file
CONSTRAINTS = {
    "Time_Subdivision": "Time subdivision of parent annotation's time interval, no time gaps allowed within this interval",
    "Symbolic_Subdivision": "Symbolic subdivision of a parent annotation. Annotations refering to the same parent are ordered",
    "Symbolic_Association": "1-1 association with a parent annotation",
    "Included_In": "Time alignable annotations within the parent annotation's time interval, gaps are allowed",
}
# the MIME types ELAN writes for the media it plays (its MediaDescriptor); others are its generic audio/video
MIME_TYPES = {".wav": "audio/x-wav", ".mp4": "video/mp4", ".m4v": "video/mp4", ".mpg": "video/mpeg",
              ".mpeg": "video/mpeg", ".mov": "video/quicktime"}
PLAYABLE = ("audio", "video")  # media roles ELAN can open (`audio:A`, `video`, ...); images it cannot
_KEEP_CR = {"\r": "&#13;"}  # a bare carriage return would come back as a line feed
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _attrs(values: dict[str, str]) -> str:
    return "".join(f" {name}={quoteattr(value)}" for name, value in values.items())


def media_descriptors(media: Sequence[MediaRef], folder: Path) -> list[str]:
    """The HEADER's MEDIA_DESCRIPTOR elements linking a stimulus's recordings to an EAF file in `folder`."""
    out = []
    for medium in media:
        if medium.role.split(":")[0] not in PLAYABLE:
            continue
        path = Path(medium.path).absolute()
        relative = PurePath(os.path.relpath(path, folder.absolute())).as_posix()
        attrs = {"MEDIA_URL": path.as_uri(),
                 "MIME_TYPE": MIME_TYPES.get(path.suffix.lower(), f"{medium.role.split(':')[0]}/*"),
                 "RELATIVE_MEDIA_URL": quote(relative if relative.startswith("../") else f"./{relative}")}
        if medium.offset_s:
            attrs["TIME_ORIGIN"] = str(round(medium.offset_s * 1000))
        out.append(f"    <MEDIA_DESCRIPTOR{_attrs(attrs)}/>")
    return out


def eaf_document(stimulus: str, rows: Sequence[Row], duration_s: float | None, target: Path,
                 context: ExportContext) -> str:
    """The EAF XML of one stimulus's labels, to be written to `target` (counted in `context.report` under
    its name). Written as text: a corpus of 100,000 labels through an element tree took seconds."""
    file = target.name
    tiers, _ = build_tiers(rows, duration_s, by_speaker=True)
    plan = plan_hierarchy(tiers)
    types = linguistic_types(tiers, plan)
    referring = {name for name, dependent in plan.items() if dependent.constraint in REFERRING}
    slots: dict[int, str] = {}
    for tier in tiers:
        if tier.name in referring:
            continue
        for start, end, _, _ in tier.intervals:
            slots.setdefault(round(start * 1000), "")
            slots.setdefault(round(end * 1000), "")
    for number, ms in enumerate(sorted(slots), start=1):
        slots[ms] = f"ts{number}"
    ids: dict[str, list[str]] = {}
    count = 0
    for tier in tiers:
        ids[tier.name] = [f"a{count + i}" for i in range(1, len(tier.intervals) + 1)]
        count += len(tier.intervals)
    attached = [(tier, name, [(index, str(row[name])) for index, (*_, row) in enumerate(tier.intervals)
                              if row.get(name) not in (None, "")]) for tier in tiers for name in ATTACHED]
    attached = [entry for entry in attached if entry[2]]
    last_id = count + sum(len(items) for *_, items in attached)
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    out = ["<?xml version='1.0' encoding='UTF-8'?>",
           f'<ANNOTATION_DOCUMENT AUTHOR="" DATE="{date}" FORMAT="3.0" VERSION="3.0"'
           ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
           ' xsi:noNamespaceSchemaLocation="http://www.mpi.nl/tools/elan/EAFv3.0.xsd">',
           '  <HEADER MEDIA_FILE="" TIME_UNITS="milliseconds">',
           *media_descriptors(context.media.get(stimulus, ()), target.parent),
           f'    <PROPERTY NAME="lastUsedAnnotationId">{last_id}</PROPERTY>',
           f'    <PROPERTY NAME="{STIMULUS_PROPERTY}">{escape(stimulus)}</PROPERTY>',
           "  </HEADER>", "  <TIME_ORDER>"]
    out += [f'    <TIME_SLOT TIME_SLOT_ID="{slots[ms]}" TIME_VALUE="{ms}"/>' for ms in sorted(slots)]
    out.append("  </TIME_ORDER>")
    for tier in tiers:
        dependent = plan.get(tier.name)
        attrs = {"LINGUISTIC_TYPE_REF": types[tier.name][0], "TIER_ID": tier.name, "ANNOTATOR": tier.annotator}
        if tier.speaker:
            attrs["PARTICIPANT"] = tier.speaker
        if dependent:
            attrs["PARENT_REF"] = dependent.parent
        out.append(f"  <TIER{_attrs(attrs)}>")
        context.report.count_written(file, tier.name, len(tier.intervals))
        previous: dict[int, str] = {}
        for index, (start, end, text, _) in enumerate(tier.intervals):
            value = f"<ANNOTATION_VALUE>{escape(text, _KEEP_CR)}</ANNOTATION_VALUE>"
            own = ids[tier.name][index]
            if tier.name in referring:
                owner = dependent.parents[index]
                after = previous.get(owner) if dependent.constraint == "Symbolic_Subdivision" else None
                previous[owner] = own
                link = f' PREVIOUS_ANNOTATION="{after}"' if after else ""
                out.append(f'    <ANNOTATION><REF_ANNOTATION ANNOTATION_ID="{own}"'
                           f' ANNOTATION_REF="{ids[dependent.parent][owner]}"{link}>{value}</REF_ANNOTATION></ANNOTATION>')
            else:
                out.append(f'    <ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="{own}"'
                           f' TIME_SLOT_REF1="{slots[round(start * 1000)]}" TIME_SLOT_REF2="{slots[round(end * 1000)]}">'
                           f"{value}</ALIGNABLE_ANNOTATION></ANNOTATION>")
        out.append("  </TIER>")
    for tier, name, items in attached:  # a label's note and value, as ELAN users attach them
        attrs = {"LINGUISTIC_TYPE_REF": ATTACHED_TYPE, "TIER_ID": tier.name + ATTACHED[name],
                 "ANNOTATOR": tier.annotator, "PARENT_REF": tier.name}
        out.append(f"  <TIER{_attrs(attrs)}>")
        for index, text in items:
            count += 1
            out.append(f'    <ANNOTATION><REF_ANNOTATION ANNOTATION_ID="a{count}" ANNOTATION_REF="{ids[tier.name][index]}">'
                       f"<ANNOTATION_VALUE>{escape(text, _KEEP_CR)}</ANNOTATION_VALUE></REF_ANNOTATION></ANNOTATION>")
        out.append("  </TIER>")
    definitions = set(types.values()) | ({(ATTACHED_TYPE, "Symbolic_Association")} if attached else set())
    for type_id, constraint in sorted(definitions, key=lambda t: t[0]):
        extra = f' CONSTRAINTS="{constraint}"' if constraint else ""
        alignable = "true" if constraint is None or TIME_ALIGNABLE[constraint] else "false"
        out.append(f'  <LINGUISTIC_TYPE{extra} GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID={quoteattr(type_id)}'
                   f' TIME_ALIGNABLE="{alignable}"/>')
    out += [f'  <CONSTRAINT DESCRIPTION="{description}" STEREOTYPE="{stereotype}"/>'
            for stereotype, description in CONSTRAINTS.items()]
    out.append("</ANNOTATION_DOCUMENT>")
    return "\n".join(out) + "\n"


class ElanExporter:
    name = "eaf"
    title = "ELAN annotation file (.eaf)"
    extension = ".eaf"
    per_stimulus = True

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        broken = [Loss(r, "its text holds a control character, which XML cannot hold") for r in rows
                  if _NOT_XML.search(r.get("label") or "")]
        seen = {id(loss.row) for loss in broken}
        losses = broken
        for group in by_stimulus([r for r in rows if id(r) not in seen]).values():
            tiers, _ = build_tiers(group, None, by_speaker=True)
            plan = plan_hierarchy(tiers)
            types = linguistic_types(tiers, plan)
            for tier in tiers:
                losses += fields_lost([row for *_, row in tier.intervals], CARRIED, carried_meta(tier, plan, types))
        return losses

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        grouped = by_stimulus(rows)
        targets = per_stimulus_targets(self, rows, out_path)
        for stimulus, target in targets.items():
            write_text(target, context, eaf_document(stimulus, grouped[stimulus], context.durations.get(stimulus),
                                                     target, context))
        if any(r.get("start_s") is not None and (abs(round(r["start_s"] * 1000) - r["start_s"] * 1000) > 1e-6
                                                 or abs(round(r["end_s"] * 1000) - r["end_s"] * 1000) > 1e-6)
               for r in rows):
            context.report.note("ELAN counts time in milliseconds: times were rounded to the millisecond")
        return Path(out_path)

    def read(self, path: Path) -> Reading:
        reading = merged([read_eaf(file) for file in files_to_read(path, self.extension)])
        # a vocabulary shared by several tiers or files is kept once
        reading.vocabularies = {name: list(dict.fromkeys(entries)) for name, entries in reading.vocabularies.items()}
        return reading

    def detect(self, path: Path) -> float:
        return score(path, self.extension, "<ANNOTATION_DOCUMENT" in head_text(path, 4096))
