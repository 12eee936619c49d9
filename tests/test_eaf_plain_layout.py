"""An ELAN file laid out as ELAN writes it is read without making an element of every annotation
(`storage.exporters.eaf_plain`); any other is parsed whole as XML. Both readings give the same labels: each
document below is read as it is and again with a comment in its header, which sends it to the whole parse,
and the two are compared whole (labels, times, notes, meta, report, vocabularies, media). Files in the odd but
valid shapes ELAN files take (slots without times, reference annotations, CDATA, entities, a DOCTYPE, several
tiers, UTF-8 names, Windows line ends) read as pympi-ling reads them, and damage in the middle of a tier is
refused as before, in one line naming file, line and column."""
from __future__ import annotations

import re

import pympi
import pytest

from annotation_files_fixtures import make_store, stored
from app.export_service import import_annotations
from storage.errors import ImportFailed
from storage.exporters.eaf_plain import plain_document
from storage.exporters.eaf_reader import attached_tiers, read_eaf

SLOTS = [("ts1", "0"), ("ts2", "1500"), ("ts3", "2250"), ("ts4", "4000"), ("ts5", "4000"), ("ts6", "9000")]


def _aligned(number: int, first: str, second: str, value: str | None, extra: str = "", *, elan: bool = False,
             extra_first: bool = False) -> str:
    """An ALIGNABLE_ANNOTATION, on one line (as pympi-ling and our export write it) or over several (as ELAN
    does); `extra` attributes after the slots, or (as ELAN orders them) before; a None value is empty."""
    ids = f'ANNOTATION_ID="a{number}"' + (extra if extra_first else "")
    slots = f'TIME_SLOT_REF1="{first}" TIME_SLOT_REF2="{second}"' + ("" if extra_first else extra)
    shown = "<ANNOTATION_VALUE/>" if value is None else f"<ANNOTATION_VALUE>{value}</ANNOTATION_VALUE>"
    if elan:
        return (f"        <ANNOTATION>\n            <ALIGNABLE_ANNOTATION {ids}\n                {slots}>\n"
                f"                {shown}\n            </ALIGNABLE_ANNOTATION>\n        </ANNOTATION>\n")
    return f"<ANNOTATION><ALIGNABLE_ANNOTATION {ids} {slots}>{shown}</ALIGNABLE_ANNOTATION></ANNOTATION>"


def _note(number: int, parent: int, value: str, extra: str = "") -> str:
    return (f'<ANNOTATION><REF_ANNOTATION ANNOTATION_ID="n{number}" ANNOTATION_REF="a{parent}"{extra}>'
            f"<ANNOTATION_VALUE>{value}</ANNOTATION_VALUE></REF_ANNOTATION></ANNOTATION>")


def document(*, elan: bool = False, extra_first: bool = False, declaration: str = '<?xml version="1.0" encoding="UTF-8"?>',
             header_extra: str = "", slots: list[tuple[str, str | None]] = SLOTS, cues: str | None = None,
             closed_empty: bool = True) -> str:
    """A recording's tiers: cues with notes (their empty value written `<ANNOTATION_VALUE/>`, or not), a
    speaker's gestures with vocabulary entries and languages, a tier with a UTF-8 name, a whole-stimulus tier
    and two empty ones."""
    a = {"elan": elan, "extra_first": extra_first}
    timed = "".join(f'<TIME_SLOT TIME_SLOT_ID="{i}" TIME_VALUE="{v}"/>' if v is not None
                    else f'<TIME_SLOT TIME_SLOT_ID="{i}"/>' for i, v in slots)
    if cues is None:
        cues = "".join([_aligned(1, "ts1", "ts2", "laugh &amp; cry", **a),
                        _aligned(2, "ts2", "ts3", 'say &quot;hi&quot; &lt;b&gt; &apos;x&apos; ] ]] >', **a),
                        _aligned(3, "ts3", "ts3", "click", **a), _aligned(4, "ts4", "ts5", None if closed_empty else "", **a),
                        _aligned(5, "ts5", "ts6", "two\nlines\tand a tab", **a)])
    return f"""{declaration}
<ANNOTATION_DOCUMENT AUTHOR="" FORMAT="3.0" VERSION="3.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:noNamespaceSchemaLocation="http://www.mpi.nl/tools/elan/EAFv3.0.xsd">
    <HEADER MEDIA_FILE="" TIME_UNITS="milliseconds">{header_extra}
        <MEDIA_DESCRIPTOR MEDIA_URL="file:///corpus/Aufnahme%20%C3%BC.wav" MIME_TYPE="audio/x-wav" TIME_ORIGIN="250"/>
        <PROPERTY NAME="lastUsedAnnotationId">40</PROPERTY>
    </HEADER>
    <TIME_ORDER>
        {timed}
    </TIME_ORDER>
    <TIER ANNOTATOR="ana" LINGUISTIC_TYPE_REF="default-lt" TIER_ID="ana | cues">
{cues}
    </TIER>
    <TIER ANNOTATOR="ana" LINGUISTIC_TYPE_REF="attached-lt" PARENT_REF="ana | cues" TIER_ID="ana | cues :note">
        {_note(1, 1, "loud")}{_note(2, 3, "first", ' CVE_REF="c9"')}{_note(3, 3, "second &amp; last")}{_note(4, 99, "nobody's")}
    </TIER>
    <TIER LINGUISTIC_TYPE_REF="gesture" PARTICIPANT="CHI" TIER_ID="gestures">
{_aligned(20, "ts2", "ts3", "point", ' CVE_REF="cve1"', **a)}{_aligned(21, "ts3", "ts4", "wave", ' LANG_REF="und" EXT_REF="e1"', **a)}
{_aligned(22, "ts4", "ts6", "point", ' CVE_REF="cve1" LANG_REF="und"', **a)}
    </TIER>
    <TIER LINGUISTIC_TYPE_REF="default-lt" PARTICIPANT="Jürgen" TIER_ID="Äußerung@KIND">
{_aligned(30, "ts1", "ts6", "größer als «das»", **a)}
    </TIER>
    <TIER ANNOTATOR="bo" LINGUISTIC_TYPE_REF="default-lt" TIER_ID="bo | familiarity | whole">
{_aligned(31, "ts1", "ts6", "familiar", **a)}
    </TIER>
    <TIER LINGUISTIC_TYPE_REF="default-lt" TIER_ID="empty"></TIER>
    <TIER LINGUISTIC_TYPE_REF="default-lt" TIER_ID="closed"/>
    <LINGUISTIC_TYPE GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="default-lt" TIME_ALIGNABLE="true"/>
    <LINGUISTIC_TYPE CONSTRAINTS="Symbolic_Association" GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="attached-lt"
        TIME_ALIGNABLE="false"/>
    <LINGUISTIC_TYPE CONTROLLED_VOCABULARY_REF="gestures" GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="gesture"
        TIME_ALIGNABLE="true"/>
    <CONSTRAINT DESCRIPTION="1-1 association with a parent annotation" STEREOTYPE="Symbolic_Association"/>
    <CONTROLLED_VOCABULARY CV_ID="gestures"><CV_ENTRY_ML CVE_ID="cve1"><CVE_VALUE DESCRIPTION="index finger"
        LANG_REF="und">point</CVE_VALUE></CV_ENTRY_ML></CONTROLLED_VOCABULARY>
</ANNOTATION_DOCUMENT>
"""


def _write(tmp_path, name: str, text: str, *, newline: str = "\n", bom: bool = False) -> object:
    path = tmp_path / name / "rec.eaf"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.replace("\n", newline).encode("utf-8"))
    return path


def _reading(path) -> object:
    try:
        reading = read_eaf(path)
    except ImportFailed as exc:
        return str(exc)
    return reading.rows, reading.report.lines(), reading.vocabularies, reading.media


def _laid_out_plainly(path) -> bool:
    return plain_document(path.read_bytes(), attached_tiers) is not None


LAYOUTS = {"one line each": {}, "as ELAN writes": {"elan": True, "extra_first": True},
           "several lines, attributes after": {"elan": True}}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("newline, bom", [("\n", False), ("\r\n", True)])
@pytest.mark.parametrize("closed_empty", [True, False], ids=["one item written otherwise", "items alike"])
def test_a_file_laid_out_plainly_reads_as_the_whole_parse_reads_it(tmp_path, layout, newline, bom, closed_empty):
    shape = {**LAYOUTS[layout], "closed_empty": closed_empty}
    plain = _write(tmp_path, "plain", document(**shape), newline=newline, bom=bom)
    parsed = _write(tmp_path, "parsed", document(**shape, header_extra="<!-- parse me whole -->"),
                    newline=newline, bom=bom)
    assert _laid_out_plainly(plain) and not _laid_out_plainly(parsed)
    ours = _reading(plain)
    assert ours == _reading(parsed)
    rows = {(row["origin"].tier, row["origin"].item): row for row in ours[0]}
    assert len(rows) == 5 + 3 + 1 + 1
    assert rows[("ana | cues", 1)]["label"] == "laugh & cry" and rows[("ana | cues", 1)]["note"] == "loud"
    assert rows[("ana | cues", 2)]["label"] == "say \"hi\" <b> 'x' ] ]] >"
    assert rows[("ana | cues", 3)]["note"] == "second & last"
    assert rows[("ana | cues", 4)]["label"] == "" and rows[("ana | cues", 5)]["label"] == "two\nlines\tand a tab"
    assert rows[("gestures", 2)]["meta"] == {"speaker": "CHI", "linguistic_type": "gesture", "tier": "gestures",
                                             "language": "und"}
    assert rows[("gestures", 3)]["meta"]["cve"] == "cve1" and rows[("gestures", 1)]["start_s"] == 1.75
    assert rows[("Äußerung@KIND", 1)]["label"] == "größer als «das»"
    assert rows[("Äußerung@KIND", 1)]["meta"]["speaker"] == "Jürgen"
    assert rows[("bo | familiarity | whole", 1)]["start_s"] is None
    assert ours[3] == ["Aufnahme ü.wav"]


def _pympi_spans(path, tier: str) -> list[tuple]:
    eaf = pympi.Elan.Eaf(str(path))
    return sorted((start, end, value) for start, end, value, *_ in eaf.get_annotation_data_for_tier(tier)
                  if start is not None and end is not None)


def _our_spans(rows, tier: str) -> list[tuple]:
    return sorted((round(r["start_s"] * 1000) - 250, round(r["end_s"] * 1000) - 250, r["label"])
                  for r in rows if r["origin"].tier == tier and r["meta"].get("times") is None)


ODD = {  # shapes ELAN files take that are not read as laid out; each reads as the whole parse (and pympi) reads it
    "CDATA": ("<ANNOTATION_VALUE>laugh &amp; cry</ANNOTATION_VALUE>",
              "<ANNOTATION_VALUE><![CDATA[laugh & <cry>]]></ANNOTATION_VALUE>"),
    "character reference": ("<ANNOTATION_VALUE>click</ANNOTATION_VALUE>", "<ANNOTATION_VALUE>cl&#233;ck</ANNOTATION_VALUE>"),
    "comment in a tier": ("<ANNOTATION_VALUE>click</ANNOTATION_VALUE>",
                          "<ANNOTATION_VALUE>click</ANNOTATION_VALUE><!-- checked -->"),
    "entity of the DOCTYPE": ("<ANNOTATION_VALUE>click</ANNOTATION_VALUE>", "<ANNOTATION_VALUE>&who;</ANNOTATION_VALUE>"),
    "attribute in single quotes": ('ANNOTATION_ID="a3"', "ANNOTATION_ID='a3'"),
    "slot refs in another order": ('TIME_SLOT_REF1="ts3" TIME_SLOT_REF2="ts3"', 'TIME_SLOT_REF2="ts3" TIME_SLOT_REF1="ts3"'),
    "slots without times": ('<TIME_SLOT TIME_SLOT_ID="ts2" TIME_VALUE="1500"/>', '<TIME_SLOT TIME_SLOT_ID="ts2"/>'),
}


@pytest.mark.parametrize("shape", list(ODD))
def test_odd_but_valid_files_read_as_pympi_reads_them(tmp_path, shape):
    old, new = ODD[shape]
    text = document()
    if shape == "entity of the DOCTYPE":
        text = text.replace("<ANNOTATION_DOCUMENT ", '<!DOCTYPE ANNOTATION_DOCUMENT [<!ENTITY who "Ana">]>\n'
                                                      "<ANNOTATION_DOCUMENT ", 1)
    assert old in text
    path = _write(tmp_path, "odd", text.replace(old, new, 1))
    assert not _laid_out_plainly(path) or shape == "slots without times"
    rows = read_eaf(path).rows
    for tier in ("ana | cues", "gestures", "Äußerung@KIND"):
        assert _our_spans(rows, tier) == _pympi_spans(path, tier), tier
    labels = {row["label"] for row in rows}
    assert {"CDATA": "laugh & <cry>", "character reference": "cléck", "entity of the DOCTYPE": "Ana"}.get(
        shape, "click") in labels


DAMAGE = {  # (found in a tier's body, what the refusal says was found there)
    "an entity the file does not define": ("<ANNOTATION_VALUE>click</ANNOTATION_VALUE>",
                                           "<ANNOTATION_VALUE>cl&nbsp;ck</ANNOTATION_VALUE>", "&nbsp;"),
    "a closing tag that does not match its opening one": ("</ALIGNABLE_ANNOTATION></ANNOTATION><ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID=\"a4\"",
                                                          "</ALIGNABLE_ANNOTATION></ANOTATION><ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID=\"a4\"",
                                                          "</ANOTATION>"),
    "a character or mark XML does not allow": ("<ANNOTATION_VALUE>click</ANNOTATION_VALUE>",
                                               "<ANNOTATION_VALUE>cl\x01ck</ANNOTATION_VALUE>", "\x01"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damage_inside_a_tier_is_refused_naming_line_and_column_and_nothing_is_written(tmp_path, damage):
    old, new, mark = DAMAGE[damage]
    text = document().replace(old, new, 1)
    path = _write(tmp_path, "damaged", text)
    line = text[:text.index(mark)].count("\n") + 1
    with pytest.raises(ImportFailed, match=rf"rec\.eaf:{line}: found {damage} \(column \d+\); expected an ELAN \.eaf file"):
        read_eaf(path)
    store = make_store(tmp_path / "t.duckdb", tmp_path / "data", {"corpus": [("rec", 20.0)]})
    try:
        with pytest.raises(ImportFailed) as refused:
            import_annotations(store, "eaf", path, "corpus", annotator="x")
        assert len(str(refused.value).splitlines()) == 1 and stored(store, "corpus") == []
    finally:
        store.close()


def test_a_file_cut_short_inside_a_tier_is_refused_as_the_end_of_the_file(tmp_path):
    text = document()
    cut = text[:text.index("</ANNOTATION_VALUE>", text.index('ANNOTATION_ID="a3"'))]
    path = _write(tmp_path, "cut", cut)
    with pytest.raises(ImportFailed, match=rf"rec\.eaf:{cut.count(chr(10)) + 1}: found the end of the file"):
        read_eaf(path)
