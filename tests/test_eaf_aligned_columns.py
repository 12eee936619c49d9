"""An ELAN file whose annotations are all aligned to time slots with times is read a tier at a time, as
columns; any other is read annotation by annotation. Both readings give the same labels, times, notes,
meta, report and refusals: the same document read both ways (a stray aligned annotation on its tier of notes,
which holds no label, sends it the second way) is compared whole."""
from __future__ import annotations

import pytest

from storage.errors import ImportFailed
from storage.exporters.eaf_reader import read_eaf

SLOTS = [("ts1", "0"), ("ts2", "1500"), ("ts3", "2250"), ("ts4", "4000.5"), ("ts5", "4000.5"), ("ts6", "9000")]


def _annotation(number: int, first: str, second: str, value: str, extra: str = "") -> str:
    return (f'<ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a{number}" TIME_SLOT_REF1="{first}"'
            f' TIME_SLOT_REF2="{second}"{extra}><ANNOTATION_VALUE>{value}</ANNOTATION_VALUE>'
            "</ALIGNABLE_ANNOTATION></ANNOTATION>")


def _note(number: int, parent: int, value: str) -> str:
    return (f'<ANNOTATION><REF_ANNOTATION ANNOTATION_ID="n{number}" ANNOTATION_REF="a{parent}">'
            f"<ANNOTATION_VALUE>{value}</ANNOTATION_VALUE></REF_ANNOTATION></ANNOTATION>")


def _document(cues: list[str], *, stray: bool = False, origin: str = ' TIME_ORIGIN="250"') -> str:
    notes = [_note(1, 1, "loud"), _note(2, 3, "first"), _note(3, 3, "second"), _note(4, 99, "nobody's")]
    if stray:   # holds no label, and cannot be read as a column of references
        notes.append(_annotation(98, "ts1", "ts2", "stray"))
    slots = "".join(f'<TIME_SLOT TIME_SLOT_ID="{i}" TIME_VALUE="{v}"/>' for i, v in SLOTS)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<ANNOTATION_DOCUMENT AUTHOR="" FORMAT="3.0" VERSION="3.0">
  <HEADER MEDIA_FILE="" TIME_UNITS="milliseconds">
    <MEDIA_DESCRIPTOR MEDIA_URL="file:///corpus/rec%2001.wav" MIME_TYPE="audio/x-wav"{origin}/>
  </HEADER>
  <TIME_ORDER>{slots}<TIME_SLOT TIME_SLOT_ID="ts7"/></TIME_ORDER>
  <TIER ANNOTATOR="ana" LINGUISTIC_TYPE_REF="default" TIER_ID="ana | cues">{"".join(cues)}</TIER>
  <TIER ANNOTATOR="ana" LINGUISTIC_TYPE_REF="attached-lt" PARENT_REF="ana | cues" TIER_ID="ana | cues :note">
    {"".join(notes)}</TIER>
  <TIER LINGUISTIC_TYPE_REF="gesture" PARTICIPANT="CHI" TIER_ID="gestures">
    {_annotation(20, "ts2", "ts3", "point", ' CVE_REF="cve1"')}{_annotation(21, "ts3", "ts4", "wave", ' LANG_REF="und"')}
    {_annotation(22, "ts4", "ts6", "point", ' CVE_REF="cve1" LANG_REF="und"')}{_annotation(23, "ts1", "ts2", "")}</TIER>
  <TIER ANNOTATOR="bo" LINGUISTIC_TYPE_REF="default" TIER_ID="bo | familiarity | whole">
    {_annotation(30, "ts1", "ts6", "familiar")}</TIER>
  <TIER LINGUISTIC_TYPE_REF="default" TIER_ID="empty"></TIER>
  <LINGUISTIC_TYPE GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="default" TIME_ALIGNABLE="true"/>
  <LINGUISTIC_TYPE CONSTRAINTS="Symbolic_Association" GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="attached-lt"
    TIME_ALIGNABLE="false"/>
  <LINGUISTIC_TYPE CONTROLLED_VOCABULARY_REF="gestures" GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="gesture"
    TIME_ALIGNABLE="true"/>
  <CONTROLLED_VOCABULARY CV_ID="gestures"><CV_ENTRY_ML CVE_ID="cve1"><CVE_VALUE DESCRIPTION="index finger"
    LANG_REF="und">point</CVE_VALUE></CV_ENTRY_ML></CONTROLLED_VOCABULARY>
</ANNOTATION_DOCUMENT>
"""


CUES = [_annotation(1, "ts1", "ts2", "laugh"), _annotation(2, "ts2", "ts3", "say &quot;hi&quot; &amp; &#233;"),
        _annotation(3, "ts3", "ts3", "click"), _annotation(4, "ts4", "ts5", ""), _annotation(5, "ts5", "ts6", "sigh")]


def _read(tmp_path, text: str, name: str) -> object:
    path = tmp_path / name / "rec.eaf"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    try:
        reading = read_eaf(path)
    except ImportFailed as exc:
        return str(exc)
    return reading.rows, reading.report.lines(), reading.vocabularies, reading.media


@pytest.mark.parametrize("origin", [' TIME_ORIGIN="250"', ""])
def test_aligned_annotations_read_as_columns_read_as_one_annotation_at_a_time_reads_them(tmp_path, origin):
    columns = _read(tmp_path, _document(CUES, origin=origin), "columns")
    one_by_one = _read(tmp_path, _document(CUES, stray=True, origin=origin), "one by one")
    assert not isinstance(columns, str)
    rows = {(row["origin"].tier, row["origin"].item): row for row in columns[0]}
    assert len(rows) == 5 + 4 + 1
    assert rows[("ana | cues", 1)]["note"] == "loud" and rows[("ana | cues", 3)]["note"] == "second"
    assert rows[("ana | cues", 2)]["label"] == 'say "hi" & é'
    assert rows[("gestures", 3)]["meta"] == {"speaker": "CHI", "linguistic_type": "gesture", "tier": "gestures",
                                             "cve": "cve1", "language": "und"}
    assert rows[("gestures", 1)]["start_s"] == (1500 + (250 if origin else 0)) / 1000
    assert rows[("bo | familiarity | whole", 1)]["start_s"] is None
    assert columns == one_by_one


def test_a_slot_missing_from_the_time_order_is_refused_alike_both_ways(tmp_path):
    cues = [*CUES[:2], _annotation(3, "ts3", "ts99", "click"), *CUES[3:]]
    refused = _read(tmp_path, _document(cues), "columns")
    assert refused == _read(tmp_path, _document(cues, stray=True), "one by one")
    assert refused == ("Import failed, nothing was written: rec.eaf, tier 'ana | cues', item 3: found the time slot"
                       " 'ts99'; expected a TIME_SLOT_ID of the file's TIME_ORDER")


def test_a_time_that_is_no_number_names_its_slot(tmp_path):
    text = _document(CUES).replace('TIME_VALUE="2250"', 'TIME_VALUE="2,250"')
    assert _read(tmp_path, text, "columns") == ("Import failed, nothing was written: rec.eaf, TIME_SLOT ts3: found"
                                                " '2,250'; expected a time in milliseconds")
