"""Stores with stimuli of known durations, and annotation files written in the exact shapes other tools write."""
from __future__ import annotations

import struct
from pathlib import Path

from storage.annotations import AnnotationStore
from storage.store import Store

# one dataset per benchmark, with the kinds of ids each release uses (EchoMind's hold a '/')
BENCHMARK_STIMULI = {
    "friendbench": [("fb-001", 20.0), ("fb-002", 20.0)],
    "echomind": [("synthesis/901", 12.5), ("human/17", 9.0)],
    "agentviss": [("scene_0042", 30.0), ("scene_0043", 30.0)],
    "ncp": [("goal-3/context-1", 60.0), ("goal-3/context-2", 60.0)],
}


def make_store(db: Path, root: Path, stimuli: dict[str, list[tuple[str, float | None]]] | None = None) -> Store:
    """A store with one dataset per benchmark named after it; each stimulus has an audio medium of its duration."""
    store = Store.open(db)
    cur = store.cursor()
    for benchmark, items in (stimuli or BENCHMARK_STIMULI).items():
        folder = root / benchmark
        folder.mkdir(parents=True, exist_ok=True)
        dataset = cur.execute("INSERT INTO dataset (name, benchmark, root) VALUES (?, ?, ?) RETURNING id",
                              [benchmark, benchmark, str(folder)]).fetchone()[0]
        for external, duration in items:
            sid = cur.execute("INSERT INTO stimulus (dataset_id, external_id, kind) VALUES (?, ?, 'generic')"
                              " RETURNING id", [dataset, external]).fetchone()[0]
            if duration is not None:
                cur.execute("INSERT INTO media (stimulus_id, role, path, duration_s) VALUES (?, 'audio', ?, ?)",
                            [sid, f"audio/{external}.wav", duration])
    return store


def stored(store: Store, dataset: str) -> list[tuple]:
    """(stimulus, annotator, label set, label, start, end, media role) of a dataset's live labels, times to
    the ms, sorted."""
    notes = AnnotationStore(store)
    ids = notes.stimulus_ids(notes.dataset(dataset).id)
    return sorted((ids[a.stimulus_id], a.annotator, a.label_set, a.label,
                   None if a.start_s is None else round(a.start_s, 3),
                   None if a.end_s is None else round(a.end_s, 3), a.media_role or "") for a in notes.for_stimuli(ids))


# -- ELAN: a child-language recording with every kind of dependent tier ------------------------------
def eaf_text(version: str = "3.0", time_origin: int = 500, stimulus_property: str | None = None) -> str:
    """An EAF as ELAN writes it: an utterance tier (participant CHI) with a Time Subdivision word tier whose
    inner boundaries are unaligned, a Symbolic Subdivision morpheme tier, a Symbolic Association translation,
    an Included In gesture tier with a controlled vocabulary (EAF 2.8 on: CV_ENTRY_ML; before: CV_ENTRY), and an
    empty utterance."""
    if version >= "2.8":
        cv = ('<CONTROLLED_VOCABULARY CV_ID="gestures"><DESCRIPTION LANG_REF="und"/>'
              '<CV_ENTRY_ML CVE_ID="cveid1"><CVE_VALUE DESCRIPTION="index finger" LANG_REF="und">point</CVE_VALUE>'
              '</CV_ENTRY_ML><CV_ENTRY_ML CVE_ID="cveid2"><CVE_VALUE DESCRIPTION="" LANG_REF="und">wave</CVE_VALUE>'
              '</CV_ENTRY_ML></CONTROLLED_VOCABULARY>')
        language = '<LANGUAGE LANG_DEF="http://cdb.iso.org/lg/CDB-00130975-001" LANG_ID="und" LANG_LABEL="undetermined (und)"/>'
        cve = ' CVE_REF="cveid1"'
    else:
        cv = ('<CONTROLLED_VOCABULARY CV_ID="gestures" DESCRIPTION="">'
              '<CV_ENTRY DESCRIPTION="index finger">point</CV_ENTRY><CV_ENTRY DESCRIPTION="">wave</CV_ENTRY>'
              '</CONTROLLED_VOCABULARY>')
        language, cve = "", ""
    prop = f'<PROPERTY NAME="thinslice:stimulus">{stimulus_property}</PROPERTY>' if stimulus_property else ""
    origin = f' TIME_ORIGIN="{time_origin}"' if time_origin else ""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<ANNOTATION_DOCUMENT AUTHOR="" DATE="2024-05-01T10:00:00+01:00" FORMAT="{version}" VERSION="{version}"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:noNamespaceSchemaLocation="http://www.mpi.nl/tools/elan/EAFv{version}.xsd">
    <HEADER MEDIA_FILE="" TIME_UNITS="milliseconds">
        <MEDIA_DESCRIPTOR MEDIA_URL="file:///corpus/rec01.wav" MIME_TYPE="audio/x-wav"
            RELATIVE_MEDIA_URL="./rec01.wav"{origin}/>
        <PROPERTY NAME="URN">urn:nl-mpi-tools-elan-eaf:6e5e0a6e-1111-2222-3333-444455556666</PROPERTY>
        <PROPERTY NAME="lastUsedAnnotationId">9</PROPERTY>{prop}
    </HEADER>
    <TIME_ORDER>
        <TIME_SLOT TIME_SLOT_ID="ts1" TIME_VALUE="1000"/>
        <TIME_SLOT TIME_SLOT_ID="ts7" TIME_VALUE="1500"/>
        <TIME_SLOT TIME_SLOT_ID="ts2"/>
        <TIME_SLOT TIME_SLOT_ID="ts8" TIME_VALUE="2500"/>
        <TIME_SLOT TIME_SLOT_ID="ts3"/>
        <TIME_SLOT TIME_SLOT_ID="ts4" TIME_VALUE="4000"/>
        <TIME_SLOT TIME_SLOT_ID="ts5" TIME_VALUE="5000"/>
        <TIME_SLOT TIME_SLOT_ID="ts6" TIME_VALUE="6000"/>
    </TIME_ORDER>
    <TIER ANNOTATOR="maria" LINGUISTIC_TYPE_REF="utterance" PARTICIPANT="CHI" TIER_ID="utt@CHI">
        <ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a1" TIME_SLOT_REF1="ts1" TIME_SLOT_REF2="ts4">
            <ANNOTATION_VALUE>more juice please</ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION>
        <ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a2" TIME_SLOT_REF1="ts5" TIME_SLOT_REF2="ts6">
            <ANNOTATION_VALUE></ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION>
    </TIER>
    <TIER ANNOTATOR="maria" LINGUISTIC_TYPE_REF="words" PARENT_REF="utt@CHI" PARTICIPANT="CHI" TIER_ID="words@CHI">
        <ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a3" TIME_SLOT_REF1="ts1" TIME_SLOT_REF2="ts2">
            <ANNOTATION_VALUE>more</ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION>
        <ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a4" TIME_SLOT_REF1="ts2" TIME_SLOT_REF2="ts3">
            <ANNOTATION_VALUE>juice</ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION>
        <ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a5" TIME_SLOT_REF1="ts3" TIME_SLOT_REF2="ts4">
            <ANNOTATION_VALUE>please</ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION>
    </TIER>
    <TIER LINGUISTIC_TYPE_REF="morph" PARENT_REF="words@CHI" PARTICIPANT="CHI" TIER_ID="morph@CHI">
        <ANNOTATION><REF_ANNOTATION ANNOTATION_ID="a7" ANNOTATION_REF="a5" PREVIOUS_ANNOTATION="a6">
            <ANNOTATION_VALUE>se</ANNOTATION_VALUE></REF_ANNOTATION></ANNOTATION>
        <ANNOTATION><REF_ANNOTATION ANNOTATION_ID="a6" ANNOTATION_REF="a5">
            <ANNOTATION_VALUE>plea</ANNOTATION_VALUE></REF_ANNOTATION></ANNOTATION>
    </TIER>
    <TIER LINGUISTIC_TYPE_REF="translation" PARENT_REF="utt@CHI" PARTICIPANT="CHI" TIER_ID="eng@CHI">
        <ANNOTATION><REF_ANNOTATION ANNOTATION_ID="a8" ANNOTATION_REF="a1">
            <ANNOTATION_VALUE>more juice, please</ANNOTATION_VALUE></REF_ANNOTATION></ANNOTATION>
    </TIER>
    <TIER LINGUISTIC_TYPE_REF="gesture" PARENT_REF="utt@CHI" PARTICIPANT="CHI" TIER_ID="gesture@CHI">
        <ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a9" TIME_SLOT_REF1="ts7" TIME_SLOT_REF2="ts8"{cve}>
            <ANNOTATION_VALUE>point</ANNOTATION_VALUE></ALIGNABLE_ANNOTATION></ANNOTATION>
    </TIER>
    <LINGUISTIC_TYPE GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="utterance" TIME_ALIGNABLE="true"/>
    <LINGUISTIC_TYPE CONSTRAINTS="Time_Subdivision" GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="words" TIME_ALIGNABLE="true"/>
    <LINGUISTIC_TYPE CONSTRAINTS="Symbolic_Subdivision" GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="morph" TIME_ALIGNABLE="false"/>
    <LINGUISTIC_TYPE CONSTRAINTS="Symbolic_Association" GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="translation" TIME_ALIGNABLE="false"/>
    <LINGUISTIC_TYPE CONSTRAINTS="Included_In" CONTROLLED_VOCABULARY_REF="gestures" GRAPHIC_REFERENCES="false" LINGUISTIC_TYPE_ID="gesture" TIME_ALIGNABLE="true"/>
    {language}
    <CONSTRAINT DESCRIPTION="Time subdivision of parent annotation's time interval, no time gaps allowed within this interval" STEREOTYPE="Time_Subdivision"/>
    <CONSTRAINT DESCRIPTION="Symbolic subdivision of a parent annotation. Annotations refering to the same parent are ordered" STEREOTYPE="Symbolic_Subdivision"/>
    <CONSTRAINT DESCRIPTION="1-1 association with a parent annotation" STEREOTYPE="Symbolic_Association"/>
    <CONSTRAINT DESCRIPTION="Time alignable annotations within the parent annotation's time interval, gaps are allowed" STEREOTYPE="Included_In"/>
    {cv}
</ANNOTATION_DOCUMENT>
"""


# what ELAN shows for that file (seconds, TIME_ORIGIN 500 ms added): tier -> [(start, end, value)]
EAF_EXPECTED = {
    "utt@CHI": [(1.5, 4.5, "more juice please"), (5.5, 6.5, "")],
    "words@CHI": [(1.5, 2.5, "more"), (2.5, 3.5, "juice"), (3.5, 4.5, "please")],
    "morph@CHI": [(3.5, 4.0, "plea"), (4.0, 4.5, "se")],
    "eng@CHI": [(1.5, 4.5, "more juice, please")],
    "gesture@CHI": [(2.0, 3.0, "point")],
}


# -- Praat ----------------------------------------------------------------------------------------
def praat_binary(xmin: float, xmax: float, tiers: list[tuple[str, str, list[tuple]]]) -> bytes:
    """A binary TextGrid as Praat writes it: tiers are (class, name, items), an interval item (start, end,
    text), a point item (time, mark); non-ASCII strings in UTF-16."""
    def string(text: str) -> bytes:
        if text.isascii():
            return struct.pack(">H", len(text)) + text.encode("ascii")
        units = text.encode("utf-16-be")
        return struct.pack(">HH", 0xFFFF, len(units) // 2) + units

    out = b"ooBinaryFile" + bytes([8]) + b"TextGrid" + struct.pack(">dd", xmin, xmax) + b"\x01"
    out += struct.pack(">i", len(tiers))
    for kind, name, items in tiers:
        out += bytes([len(kind)]) + kind.encode("ascii") + string(name) + struct.pack(">ddi", xmin, xmax, len(items))
        for item in items:
            out += struct.pack(">dd", item[0], item[1]) + string(item[2]) if kind == "IntervalTier" \
                else struct.pack(">d", item[0]) + string(item[1])
    return out
