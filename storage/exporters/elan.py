"""ELAN `.eaf` (EAF 3.0), written with xml.etree: one tier per annotator and label set, times in ms.

ELAN tiers cannot hold overlapping annotations, so overlapping labels go to extra tiers named `... #2`.
Whole-stimulus labels are a tier `annotator | set | whole` with one annotation over the whole stimulus.
The stimulus id is kept in a header PROPERTY `thinslice:stimulus`. Label, times (to the millisecond),
annotator and label set round-trip; value, note and media role do not.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from storage.errors import ImportFailed, RowProblem
from storage.exporters.common import (ExportContext, Row, atomic_write, build_tiers, by_stimulus,
                                      files_to_read, per_stimulus_targets, rows_from_tier)

STIMULUS_PROPERTY = "thinslice:stimulus"
LINGUISTIC_TYPE = "default-lt"


def eaf_document(stimulus: str, rows: Sequence[Row], duration_s: float | None) -> ET.ElementTree:
    """The EAF XML of one stimulus's labels."""
    root = ET.Element("ANNOTATION_DOCUMENT", {
        "AUTHOR": "", "DATE": datetime.now(timezone.utc).isoformat(timespec="seconds"), "FORMAT": "3.0",
        "VERSION": "3.0", "xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance",
        "xsi:noNamespaceSchemaLocation": "http://www.mpi.nl/tools/elan/EAFv3.0.xsd"})
    header = ET.SubElement(root, "HEADER", {"MEDIA_FILE": "", "TIME_UNITS": "milliseconds"})
    tiers, _ = build_tiers(rows, duration_s)
    slots: dict[int, str] = {}
    for tier in tiers:
        for start, end, _ in tier.intervals:
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
        element = ET.SubElement(root, "TIER", {"LINGUISTIC_TYPE_REF": LINGUISTIC_TYPE, "TIER_ID": tier.name,
                                               "ANNOTATOR": tier.annotator})
        for start, end, text in tier.intervals:
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

    def export(self, rows: Sequence[Row], out_path: Path, context: ExportContext) -> Path:
        grouped = by_stimulus(rows)
        targets = per_stimulus_targets(self, rows, out_path)
        for stimulus, target in targets.items():
            tree = eaf_document(stimulus, grouped[stimulus], context.durations.get(stimulus))
            atomic_write(target, context, lambda temp, tree=tree: tree.write(temp, encoding="UTF-8",
                                                                            xml_declaration=True))
        return Path(out_path)

    def read(self, path: Path) -> list[Row]:
        rows: list[Row] = []
        for file in files_to_read(path, self.extension):
            rows += read_eaf(file)
        return rows


def read_eaf(path: Path) -> list[Row]:
    """Labels of one `.eaf` file; the stimulus is the header property, else the file name."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise ImportFailed(RowProblem(path.name, None, None, f"<not readable as ELAN XML: {exc}>",
                                      "an ELAN .eaf file")) from None
    stimulus = path.stem
    for prop in root.iter("PROPERTY"):
        if prop.get("NAME") == STIMULUS_PROPERTY and prop.text:
            stimulus = prop.text
    slots = {}
    for slot in root.iter("TIME_SLOT"):
        if slot.get("TIME_VALUE") is not None:
            slots[slot.get("TIME_SLOT_ID")] = int(slot.get("TIME_VALUE")) / 1000.0
    rows: list[Row] = []
    for tier in root.iter("TIER"):
        intervals = []
        for aligned in tier.iter("ALIGNABLE_ANNOTATION"):
            start, end = slots.get(aligned.get("TIME_SLOT_REF1")), slots.get(aligned.get("TIME_SLOT_REF2"))
            if start is None or end is None:
                continue  # an unaligned slot: ELAN interpolates it, we cannot place the label
            intervals.append((start, end, aligned.findtext("ANNOTATION_VALUE") or ""))
        tier_rows = rows_from_tier(stimulus, tier.get("TIER_ID", ""), intervals)
        for row in tier_rows:
            row["annotator"] = row["annotator"] or tier.get("ANNOTATOR") or None
        rows += tier_rows
    return rows
