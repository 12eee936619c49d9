"""Label sets as data: the bundled EchoMind taxonomy, the JSON format's round trip and its validation."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage.errors import ImportFailed
from storage.importers.common import dumps
from storage.importers.label_sets import (Label, LabelSet, add_label_set, bundled_label_set, label_set_from_frames,
                                          label_set_to_json, parse_label_set, read_label_set, write_label_set)
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.importers.writer import write_plan
from storage.resources import LABEL_SETS_DIR
from storage.store import Store

ECHOMIND = "echomind_vocal_attributes.json"


def test_echomind_taxonomy_has_three_coarse_twelve_fine_and_the_code_attributes():
    taxonomy = bundled_label_set(ECHOMIND)
    coarse = taxonomy.children(None)
    assert [c.name for c in coarse] == ["speaker", "paralinguistic", "environment"]
    fine = [f for c in coarse for f in taxonomy.children(c.name)]
    assert len(fine) == 12
    leaves = {c.name: [leaf for f in taxonomy.children(c.name) for leaf in taxonomy.children(f.name)] for c in coarse}
    assert {k: len(v) for k, v in leaves.items()} == {"speaker": 5, "paralinguistic": 19, "environment": 21}
    assert all(label.colour for label in taxonomy.labels)


@pytest.mark.parametrize("spoken_info, label, fine, coarse", [
    ("sad-toned expressive voice", "sad voice", "emotion", "paralinguistic"),
    ("breathless sound / gasping sound / heavy breathing sound", "breathless", "physiological state",
     "paralinguistic"),
    ("sound of wind blowing", "wind blowing", "weather", "environment"),
    ("Sound of Thunderstorm and Thunder", "thunderstorm", "weather", "environment"),
    ("tired", "vocal fatigue", "physiological state", "paralinguistic"),
    ("elderly", "elderly", "age", "speaker"),
    ("sound of dog(s) barking", "dog barking", "sudden sounds", "environment"),
])
def test_release_spellings_find_their_attribute_and_dimensions(spoken_info, label, fine, coarse):
    taxonomy = bundled_label_set(ECHOMIND)
    found = taxonomy.find(spoken_info)
    assert found is not None and found.name == label
    assert [x.name for x in taxonomy.lineage(found.name)] == [coarse, fine, label]


def test_write_then_read_gives_the_same_set(tmp_path):
    taxonomy = bundled_label_set(ECHOMIND)
    write_label_set(taxonomy, tmp_path / "copy.json")
    assert read_label_set(tmp_path / "copy.json") == taxonomy


def test_a_set_written_to_the_store_comes_back_from_its_rows(tmp_path):
    taxonomy = bundled_label_set(ECHOMIND)
    plan = ImportPlan(DatasetInfo("labels only", "generic", tmp_path, "test"), importer="test")
    add_label_set(plan, taxonomy)
    store = Store.open(tmp_path / "t.duckdb")
    write_plan(store, plan)
    cur = store.cursor()
    sets = pl.from_arrow(cur.sql("SELECT name, scope, description, source FROM label_set").to_arrow_table())
    labels = pl.from_arrow(cur.sql("SELECT ls.name AS label_set, l.name, l.parent, l.colour, l.shortcut,"
                                   " l.description, l.ord, l.aliases"
                         " FROM label l JOIN label_set ls ON ls.id = l.label_set_id").to_arrow_table())
    back = label_set_from_frames(sets, labels, taxonomy.name)
    assert [(x.name, x.parent, x.colour, x.shortcut, x.aliases) for x in back.labels] == \
        [(x.name, x.parent, x.colour, x.shortcut, x.aliases) for x in taxonomy.labels]
    assert any(x.aliases for x in back.labels)
    with pytest.raises(ImportFailed, match="No label set named 'nope'"):
        label_set_from_frames(sets, labels, "nope")


def _doc(labels, **top):
    return {"name": "demo", "scope": "both", "description": None, "source": None, "labels": labels, **top}


@pytest.mark.parametrize("document, field, expected", [
    (_doc([{"name": "a", "parent": "zzz"}]), "labels[1].parent", "the name of another label"),
    (_doc([{"name": "a", "parent": "b"}, {"name": "b", "parent": "a"}]), "labels[1].parent", "does not loop"),
    (_doc([{"name": "a"}, {"name": "A"}]), "labels[2].name", "not already used by label 'a'"),
    (_doc([{"name": "a", "colour": "red"}]), "labels[1].colour", "a colour like"),
    (_doc([{"name": "a", "shortcut": "k"}, {"name": "b", "shortcut": "k"}]), "labels[2].shortcut", "not already used"),
    (_doc([{"name": "a", "color": "#ffffff"}]), "labels[1].color", "one of name, parent"),
    (_doc([{"name": "a"}], scope="timeline"), "scope", "one of interval, whole, both"),
    (_doc("a, b"), "labels", "a non-empty list"),
    (_doc([{"name": 3}]), "labels[1].name", "a non-empty name"),
    (_doc([{"name": "a", "aliases": "x"}]), "labels[1].aliases", "a list of non-empty strings"),
    (_doc([{"name": "a", "aliases": ["b"]}, {"name": "b"}]), "labels[2].name", "not already used"),
])
def test_bad_documents_fail_naming_file_label_and_field(document, field, expected):
    with pytest.raises(ImportFailed) as caught:
        parse_label_set(document, "my_set.json")
    message = str(caught.value)
    assert "my_set.json" in message and f"field '{field}'" in message and expected in message


def test_truncated_file_fails_with_its_line(tmp_path):
    text = json.dumps(label_set_to_json(bundled_label_set(ECHOMIND)), indent=1)
    path = tmp_path / "broken.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ImportFailed, match=r"broken\.json:\d+: found <invalid JSON"):
        read_label_set(path)


label_entries = st.fixed_dictionaries(
    {"name": st.one_of(st.sampled_from(["a", "b", "c", "d"]), st.integers(), st.none())},
    optional={"parent": st.one_of(st.none(), st.sampled_from(["a", "b", "c", "x"]), st.integers()),
              "colour": st.one_of(st.none(), st.sampled_from(["#abc", "#12ab34", "blue", "#12345"])),
              "shortcut": st.one_of(st.none(), st.sampled_from(["q", "w", "", "Ctrl+Shift+Alt+Meta+F12"])),
              "aliases": st.one_of(st.lists(st.sampled_from(["x", "y", "a", ""]), max_size=2), st.text(max_size=2)),
              "description": st.one_of(st.none(), st.text(max_size=5), st.integers())})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labels=st.lists(label_entries, min_size=0, max_size=5),
       scope=st.sampled_from(["both", "whole", "interval", "all"]))
def test_any_document_parses_or_fails_clearly(labels, scope):
    try:
        parsed = parse_label_set(_doc(labels, scope=scope), "gen.json")
    except ImportFailed as exc:
        assert "gen.json" in str(exc) and exc.problems
        return
    # what parses is consistent: unique names, parents exist, and it round-trips through a file
    names = [label.name for label in parsed.labels]
    assert len(set(n.lower() for n in names)) == len(names)
    assert all(label.parent in names for label in parsed.labels if label.parent)
    with tempfile.TemporaryDirectory() as tmp:
        write_label_set(parsed, Path(tmp) / "x.json")
        assert read_label_set(Path(tmp) / "x.json") == parsed


def test_label_set_is_plain_data():
    small = LabelSet("s", labels=(Label("a"), Label("b", parent="a", aliases=("bee",))))
    assert small.find(" BEE ").name == "b"
    assert [x.name for x in small.lineage("b")] == ["a", "b"]
    assert json.loads(dumps(label_set_to_json(small)))["labels"][1]["aliases"] == ["bee"]


@pytest.mark.parametrize("path", sorted(LABEL_SETS_DIR.glob("*.json")), ids=lambda p: p.name)
def test_every_bundled_label_set_is_valid(path):
    assert read_label_set(path).labels
