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

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from storage.exporters.common import (ExportContext, Loss, Row, atomic_write, build_tiers, by_stimulus,
                                      fields_lost, files_to_read, per_stimulus_targets)
from storage.exporters.eaf_reader import STIMULUS_PROPERTY, read_eaf
from storage.exporters.report import Reading

LINGUISTIC_TYPE = "default-lt"
CARRIED = ("stimulus", "annotator", "label_set", "label", "start_s", "end_s")
CARRIED_META = ("tier", "speaker")


def eaf_document(stimulus: str, rows: Sequence[Row], duration_s: float | None, file: str,
                 context: ExportContext) -> ET.ElementTree:
    """The EAF XML of one stimulus's labels (counted in `context.report` under `file`)."""
    root = ET.Element("ANNOTATION_DOCUMENT", {
        "AUTHOR": "", "DATE": datetime.now(timezone.utc).isoformat(timespec="seconds"), "FORMAT": "3.0",
        "VERSION": "3.0", "xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance",
        "xsi:noNamespaceSchemaLocation": "http://www.mpi.nl/tools/elan/EAFv3.0.xsd"})
    header = ET.SubElement(root, "HEADER", {"MEDIA_FILE": "", "TIME_UNITS": "milliseconds"})
    tiers, _ = build_tiers(rows, duration_s, by_speaker=True)
    slots: dict[int, str] = {}
    for tier in tiers:
        for start, end, _, _ in tier.intervals:
            for ms in (round(start * 1000), round(end * 1000)):
                slots.setdefault(ms, "")
    for number, ms in enumerate(sorted(slots), start=1):
        slots[ms] = f"ts{number}"
    count = sum(len(t.intervals) for t in tiers)
    ET.SubElement(header, "PROPERTY", {"NAME": "lastUsedAnnotationId"}).text = str(count)
    ET.SubElement(header, "PROPERTY", {"NAME": STIMULUS_PROPERTY}).text = stimulus
    order = ET.SubElement(root, "TIME_ORDER")
    for ms in sorted(slots):
        ET.SubElement(order, "TIME_SLOT", {"TIME_SLOT_ID": slots[ms], "TIME_VALUE": str(ms)})
    annotation_number = 0
    for tier in tiers:
        attrs = {"LINGUISTIC_TYPE_REF": LINGUISTIC_TYPE, "TIER_ID": tier.name, "ANNOTATOR": tier.annotator}
        if tier.speaker:
            attrs["PARTICIPANT"] = tier.speaker
        element = ET.SubElement(root, "TIER", attrs)
        context.report.count_written(file, tier.name, len(tier.intervals))
        for start, end, text, _ in tier.intervals:
            annotation_number += 1
            wrapper = ET.SubElement(element, "ANNOTATION")
            aligned = ET.SubElement(wrapper, "ALIGNABLE_ANNOTATION", {
                "ANNOTATION_ID": f"a{annotation_number}", "TIME_SLOT_REF1": slots[round(start * 1000)],
                "TIME_SLOT_REF2": slots[round(end * 1000)]})
            ET.SubElement(aligned, "ANNOTATION_VALUE").text = text
    ET.SubElement(root, "LINGUISTIC_TYPE", {"GRAPHIC_REFERENCES": "false", "LINGUISTIC_TYPE_ID": LINGUISTIC_TYPE,
                                            "TIME_ALIGNABLE": "true"})
    tree = ET.ElementTree(root)
    ET.indent(tree)
    return tree


class ElanExporter:
    name = "eaf"
    title = "ELAN annotation file (.eaf)"
    extension = ".eaf"
    per_stimulus = True

    def unrepresentable(self, rows: Sequence[Row]) -> list[Loss]:
        return fields_lost(rows, CARRIED, CARRIED_META)

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        grouped = by_stimulus(rows)
        targets = per_stimulus_targets(self, rows, out_path)
        for stimulus, target in targets.items():
            tree = eaf_document(stimulus, grouped[stimulus], context.durations.get(stimulus), target.name, context)
            atomic_write(target, context, lambda temp, tree=tree: tree.write(temp, encoding="UTF-8",
                                                                            xml_declaration=True))
        if any(r.get("start_s") is not None and abs(round(r["start_s"] * 1000) - r["start_s"] * 1000) > 1e-6 for r in rows):
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
