"""An Audacity label file of plain label lines is read as columns at once; any other is read line by line.
Both readings give the same labels, times, tiers, lines and report: the same labels read both ways (a
frequency line of undefined bounds, which changes no label, sends a file the second way) are compared whole."""
from __future__ import annotations

import pytest

from storage.exporters.audacity import read_label_track

TRACKS = {
    "labels alone": "1.000000\t2.500000\tlaugh\n3.500000\t3.500000\tclick\n4\t9.25\tsay \"hi\" é\n",
    "tier names": "0.000000\t10.000000\t[ana | familiarity | whole] familiar\n"
                  "1.000000\t2.000000\t[bo | cues | role=audio:A] sigh\n1\t2\t[ | cues] nobody's\n"
                  "4\t5\t[ana | cues] \n6\t7\t[a | b]not a tier name\n",
    "ends before starts": "5\t2\tback\n0\t0\tpoint\n7.5\t-1\tto the start\n",
    "tabs, blank lines, no last line feed": "1\t2\ta\tb\tc\r\n\r\n3\t4\t\r\n5\t6\tlast",
}


def _as_read(path) -> tuple:
    reading = read_label_track(path)
    return [{**row, "origin": row["origin"]._replace(file="FILE")} for row in reading.rows], \
        [line.replace(path.name, "FILE") for line in reading.report.lines()]


@pytest.mark.parametrize("track", TRACKS)
def test_plain_label_lines_read_as_columns_read_as_line_by_line_reads_them(tmp_path, track):
    text = TRACKS[track]
    plain, by_line = tmp_path / "plain.txt", tmp_path / "by_line.txt"
    plain.write_bytes(text.encode("utf-8"))
    by_line.write_bytes((text.rstrip("\r\n") + "\n\\\t-1\t-1\n").encode("utf-8"))
    found = _as_read(plain)
    assert found[0]
    assert found == _as_read(by_line)


def test_a_label_ending_before_it_starts_is_read_from_the_earlier_time_and_named(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text(TRACKS["ends before starts"])
    rows, report = _as_read(path)
    assert [(row["start_s"], row["end_s"], row["origin"].line) for row in rows] == \
        [(2.0, 5.0, 1), (0.0, 0.0, 2), (-1.0, 7.5, 3)]
    assert "note: FILE: 2 labels end before they start (line 1, 3); read as Audacity reads them, from the earlier" \
           " time to the later" in report
