"""A results table's values padded with any white-space character are stored trimmed, however far into the file
the padding is and whatever the rest of the file holds; a table without padding stores every value as written."""
from __future__ import annotations

import pytest

from storage.importers.common import ImportOptions
from storage.importers.generic import GenericImporter
from storage.importers.writer import write_plan
from storage.store import Store

MAP = {"stimulus": "clip", "model": "system", "answer": "pred", "latency": "secs"}
# every character Unicode calls white space but the line breaks (a carriage return or a line feed ends a row
# unless it is quoted)
WHITE_SPACE = "\t\x0b\x0c \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
              "\u2028\u2029\u202f\u205f\u3000"


def stored(tmp_path, text: str) -> list[tuple]:
    path = tmp_path / "answers.csv"
    path.write_text(text, encoding="utf-8")
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, GenericImporter().plan(path, ImportOptions(dataset_name="d", mapping=MAP)))
    return store.cursor().execute(
        "SELECT s.external_id, m.name, p.answer, p.latency_s FROM prediction p JOIN stimulus s ON s.id = p.stimulus_id"
        " JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id ORDER BY p.id").fetchall()


ROWS = [f"c{i},m1,yes,{i / 10}" for i in range(2000)]
EXPECTED = [(f"c{i}", "m1", "yes", i / 10) for i in range(2000)]


@pytest.mark.parametrize("space", list(WHITE_SPACE), ids=[f"U+{ord(c):04X}" for c in WHITE_SPACE])
def test_a_value_padded_in_the_last_row_is_trimmed(tmp_path, space):
    rows = ROWS[:-1] + [f"{space}c1999{space},m1,{space}yes{space},{space}199.9{space}"]
    assert stored(tmp_path, "clip,system,pred,secs\n" + "\n".join(rows) + "\n") == EXPECTED


def test_a_line_break_inside_a_quoted_value_is_trimmed(tmp_path):
    rows = ROWS[:-1] + ['c1999,m1,"yes\n",199.9']
    assert stored(tmp_path, "clip,system,pred,secs\n" + "\n".join(rows) + "\n") == EXPECTED


def test_a_table_without_padding_stores_every_value_as_written(tmp_path):
    assert stored(tmp_path, "clip,system,pred,secs\n" + "\n".join(ROWS) + "\n") == EXPECTED


LONG_ROWS = [f"clip-{i:07d},model-{i % 7},stranger,{i % 1000 / 10}" for i in range(60_000)]   # about 2 MB


@pytest.mark.parametrize("accented", [False, True], ids=["plain", "an accent early"])
@pytest.mark.parametrize("space", [" ", "\t", "\xa0", "\u3000"], ids=["U+0020", "U+0009", "U+00A0", "U+3000"])
def test_a_value_padded_only_at_the_end_of_a_long_file_is_trimmed(tmp_path, space, accented):
    # the file is searched a piece at a time: the padding lies far past the first pieces, which hold other
    # non-ASCII text in one case
    rows = list(LONG_ROWS)
    if accented:
        rows[3] = rows[3].replace("stranger", "étranger")
    rows[-1] = rows[-1].replace("stranger", f"stranger{space}")
    found = stored(tmp_path, "clip,system,pred,secs\n" + "\n".join(rows) + "\n")
    assert len(found) == len(rows) and found[-1][2] == "stranger" and found[3][2] == (
        "étranger" if accented else "stranger")
    assert {answer for _, _, answer, _ in found} == ({"stranger", "étranger"} if accented else {"stranger"})
