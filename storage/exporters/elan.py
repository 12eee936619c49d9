"""ELAN `.eaf` (EAF 3.0), written with xml.etree: one tier per annotator and label set, times in ms.

ELAN tiers cannot hold overlapping annotations, so overlapping labels go to extra tiers named `... #2`.
Whole-stimulus labels are a tier `annotator | set | whole` with one annotation over the whole stimulus; a
point label is a zero-length annotation. A tier read from another tool's file keeps its name, and its
speaker is the tier's PARTICIPANT. The stimulus id is kept in a header PROPERTY `thinslice:stimulus`.
Label, times (to the millisecond), annotator, label set and speaker round-trip; value, note, media role and
the rest of `meta` (a source tier's parent and constraint: every tier is written time-aligned and
independent) do not, and `unrepresentable` says so. Reading is `eaf_reader`.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from storage.exporters.common import (ExportContext, Loss, Row, build_tiers, by_stimulus, fields_lost,
                                      files_to_read, per_stimulus_targets, write_text)
from storage.exporters.eaf_reader import STIMULUS_PROPERTY, read_eaf
from storage.exporters.report import Reading

LINGUISTIC_TYPE = "default-lt"
CARRIED = ("stimulus", "annotator", "label_set", "label", "start_s", "end_s")
CARRIED_META = ("tier", "speaker")
_KEEP_CR = {"\r": "&#13;"}  # a bare carriage return would come back as a line feed
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _attrs(values: dict[str, str]) -> str:
    return "".join(f" {name}={quoteattr(value)}" for name, value in values.items())


def eaf_document(stimulus: str, rows: Sequence[Row], duration_s: float | None, file: str,
                 context: ExportContext) -> str:
    """The EAF XML of one stimulus's labels (counted in `context.report` under `file`). Written as text:
    a corpus of 100,000 labels through an element tree took seconds."""
    tiers, _ = build_tiers(rows, duration_s, by_speaker=True)
    slots: dict[int, str] = {}
    for tier in tiers:
        for start, end, _, _ in tier.intervals:
            slots.setdefault(round(start * 1000), "")
            slots.setdefault(round(end * 1000), "")
    for number, ms in enumerate(sorted(slots), start=1):
        slots[ms] = f"ts{number}"
    count = sum(len(t.intervals) for t in tiers)
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    out = ["<?xml version='1.0' encoding='UTF-8'?>",
           f'<ANNOTATION_DOCUMENT AUTHOR="" DATE="{date}" FORMAT="3.0" VERSION="3.0"'
           ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
           ' xsi:noNamespaceSchemaLocation="http://www.mpi.nl/tools/elan/EAFv3.0.xsd">',
           '  <HEADER MEDIA_FILE="" TIME_UNITS="milliseconds">',
           f'    <PROPERTY NAME="lastUsedAnnotationId">{count}</PROPERTY>',
           f'    <PROPERTY NAME="{STIMULUS_PROPERTY}">{escape(stimulus)}</PROPERTY>',
           "  </HEADER>", "  <TIME_ORDER>"]
    out += [f'    <TIME_SLOT TIME_SLOT_ID="{slots[ms]}" TIME_VALUE="{ms}"/>' for ms in sorted(slots)]
    out.append("  </TIME_ORDER>")
    annotation_number = 0
    for tier in tiers:
        attrs = {"LINGUISTIC_TYPE_REF": LINGUISTIC_TYPE, "TIER_ID": tier.name, "ANNOTATOR": tier.annotator}
        if tier.speaker:
            attrs["PARTICIPANT"] = tier.speaker
        out.append(f"  <TIER{_attrs(attrs)}>")
        context.report.count_written(file, tier.name, len(tier.intervals))
        for start, end, text, _ in tier.intervals:
            annotation_number += 1
            out.append(f'    <ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a{annotation_number}"'
                       f' TIME_SLOT_REF1="{slots[round(start * 1000)]}" TIME_SLOT_REF2="{slots[round(end * 1000)]}">'
                       f"<ANNOTATION_VALUE>{escape(text, _KEEP_CR)}</ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION>")
        out.append("  </TIER>")
    out += [f'  <LINGUISTIC_TYPE GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="{LINGUISTIC_TYPE}"'
            ' TIME_ALIGNABLE="true"/>', "</ANNOTATION_DOCUMENT>"]
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
        return broken + fields_lost([r for r in rows if id(r) not in seen], CARRIED, CARRIED_META)

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        grouped = by_stimulus(rows)
        targets = per_stimulus_targets(self, rows, out_path)
        for stimulus, target in targets.items():
            write_text(target, context, eaf_document(stimulus, grouped[stimulus], context.durations.get(stimulus),
                                                     target.name, context))
        if any(r.get("start_s") is not None and (abs(round(r["start_s"] * 1000) - r["start_s"] * 1000) > 1e-6
                                                 or abs(round(r["end_s"] * 1000) - r["end_s"] * 1000) > 1e-6)
               for r in rows):
            context.report.note("ELAN counts time in milliseconds: times were rounded to the millisecond")
        return Path(out_path)

    def read(self, path: Path) -> Reading:
        reading = Reading([])
        for file in files_to_read(path, self.extension):
            found = read_eaf(file)
            reading.rows += found.rows
            reading.report.merge(found.report)
            for name, entries in found.vocabularies.items():
                reading.vocabularies.setdefault(name, []).extend(e for e in entries
                                                                 if e not in reading.vocabularies[name])
        return reading
