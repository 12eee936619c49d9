"""ExploreToM and NCP imports whose stored rows are kept in `exploretom_import_rows.json.gz`, to show that a
faster import writes exactly the rows the row-by-row one wrote.

Each case is a set of input files (their text is in the snapshot, so the input never changes), the import's
options, and what the import left: every table's rows (`tests.store_rows.store_rows`, with the temporary folder
and the import's clock put as `<root>` and `<time>`, a trace step without its own id, a story question's steps
listed as its own trace steps once the story tables are found to hold each story once), the plan's notes and
the rows it skipped.

`python -m tests.exploretom_import_cases` writes the snapshot again from the importer as it is; run it only
when the rows an import writes are meant to change.
"""
from __future__ import annotations

import csv
import datetime
import gzip
import io
import json
import random
import tempfile
from pathlib import Path
from typing import Any

from app.import_service import run_import
from storage.errors import ImportFailed
from storage.importers.common import ImportOptions
from storage.store import Store
from tests.conftest import ROOT
from tests.store_rows import store_rows

SNAPSHOT = Path(__file__).with_name("exploretom_import_rows.json.gz")
NCP_SAMPLE = ROOT / "resources" / "sample" / "ncp"   # tasks and traces, and ExploreToM questions
SAMPLE_CSV = NCP_SAMPLE / "exploretom" / "questions.csv"
HEADER = ["story_structure", "infilled_story", "question", "expected_answer", "qprop=params", "qprop=nth_order",
          "is_false_belief", "param=story_type", "sprop=global_idx", "split"]


def _csv(header: list[str], rows: list[list[str]], quoting: int = csv.QUOTE_MINIMAL) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=quoting)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _generated() -> str:
    """Stories the tracker could have written, with questions of every order, as the benchmark writes them."""
    from benchmarks.bench_exploretom_import import write_csv
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated.csv"
        write_csv(path, stories=40, rows=700, seed=11)
        return path.read_text(encoding="utf-8")


def _awkward() -> str:
    """Rows of every kind of question, and rows a careful reader must refuse or keep as text."""
    kitchen = ("Anne entered the kitchen. Beth entered the kitchen. Anne moved the apple to the box, which is also "
               "located in the kitchen. Beth left the kitchen. Anne peeled the apple. Anne moved the apple to "
               "the basket, which is also located in the kitchen. Beth entered the kitchen. Anne told out loud "
               "about the party.")
    secret = ("Carl entered the hall. Dana entered the hall. Carl moved the key to the drawer, which is also located "
              "in the hall. While this action was happening, Dana got distracted and did not realize what "
              "happened, without anyone noticing the brief lack of attention, and going back to paying attention "
              "immediately after the action was finished. Dana left the hall. Carl told privately to Dana that "
              "the key is in the drawer.")
    unreadable = "Anne entered the kitchen. Anne sang a song loudly."
    rng = random.Random(5)
    rows = [
        [kitchen, "prose é ☃", "In which container will Beth search for the apple?", "box",
         "(['Beth'], 'apple', 'container_location-False')", "1", "True", "tomi", "1", "train"],
        [kitchen, "(prose)", "In which container does Anne think that Beth will search for the apple?", "basket",
         "(['Anne', 'Beth'], 'apple', 'container_location-True')", "2", "False", "tomi", "", "train"],
        [kitchen, "(prose)", "Does Beth believe that the apple peeled? Answer yes or no.", "no",
         "(['Beth'], 'apple', '<state_update> <is_peeled>-False')", "1", "true", "", "3", "test"],
        [kitchen, "(prose)", "Does Anne think that Beth believes that the apple peeled? Answer yes or no.", "no",
         "(['Anne', 'Beth'], 'apple', '<state_update> <is_peeled>-True')", "2.0", "FALSE", "", "", ""],
        [kitchen, "(prose)", "Does Beth know about the party? Answer yes or no.", "yes", "", "1", "", "", "", ""],
        [kitchen, "(prose)", "What does Anne think about Beth's belief on the party? (knows about it / does not know "
         "about it)", "knows about it", "", "2", "no", "", "", ""],
        [kitchen, "(prose)", "In which container was the apple at the beginning?", "box", "", "-1", "0", "", "", ""],
        [kitchen, "(prose)", "In which container is the apple now?", "basket", "", "-1", "f", "", "", ""],
        [kitchen, "(prose)", "In which container was the apple before Anne moved the apple to the basket?", "box", "",
         "-1", "t", "", "", ""],
        [kitchen, "(prose)", "In which room will Beth search for the apple?", "kitchen.", "", "1", "yes", "", "", ""],
        [kitchen, "", "Why did Anne peel the apple?", "hunger", "", "", "1", "", "", ""],
        [secret, "a \"quoted\"\tline\nbreak \\ back\u0001slash", "In which container will Dana search for the key?",
         "drawer", "(['Dana'], 'key', 'container_location-True')", "1", "False", "tomi", "", ""],
        [secret, "(prose)", "In which room does Dana think that Carl will search for the key?", "hall", "", "2", "", "",
         "", ""],
        [unreadable, "(prose)", "In which room will Anne search for the song?", "kitchen", "", "1", "", "", "", ""],
        [unreadable, "(prose)", "Does Anne know about the song? Answer yes or no.", "no", "", "1", "", "", "", ""],
    ]
    # more stories the reader sees only once, in no particular order
    for n in range(12):
        person, other = rng.sample(["Ivo", "Jun", "Kai", "Lea"], 2)
        story = (f"{person} entered the attic. {other} entered the attic. {person} moved the coin to the chest, "
                 f"which is also located in the attic. {other} left the attic.")
        rows.append([story, "(prose)", f"In which container will {other} search for the coin?", "chest",
                     f"(['{other}'], 'coin', 'container_location-False')", str(rng.choice([1, -1])),
                     rng.choice(["True", "False", ""]), "", str(n), rng.choice(["train", "test", ""])])
    return _csv(HEADER, rows)


def _refused() -> str:
    """Rows with no story, an order that is not a number, a flag that is not one, and repeated ids."""
    story = "Anne entered the kitchen. Beth entered the kitchen."
    rows = [
        ["q1", story, "In which room will Anne search for the cat?", "kitchen", "1", "True"],
        ["q2", "", "In which room will Beth search for the cat?", "kitchen", "1", "False"],
        ["q3", story, "", "kitchen", "1", "False"],
        ["q4", story, "In which room will Beth search for the cat?", "kitchen", "one", "False"],
        ["q5", story, "In which room will Beth search for the cat?", "kitchen", "2", "maybe"],
        ["q1", story, "In which room will Beth search for the cat?", "kitchen", "1", "False"],
        ["", story, "In which room will Beth search for the cat?", "kitchen", "1", "False"],
        ["q6", story, "In which room will Beth search for the cat?", "kitchen", "-1.0", " "],
        ["q7", "  ", "In which room will Beth search for the cat?", "kitchen", "", "TRUE"],
        ["q8", story, "   ", "", "", ""],
    ]
    return _csv(["qid", "raw_story", "question", "expected_answer", "qprop=nth_order",
                 "is_false_belief_story"], rows)


def _quoted_empty() -> str:
    """Every field quoted, so an empty one reads as empty text rather than as missing."""
    story = "Anne entered the kitchen. Anne moved the ball to the box, which is also located in the kitchen."
    rows = [
        ["a1", "(prose)", story, "", "In which container will Anne search for the ball?", "box", "", "", "", "",
         ""],
        ["a2", "(prose)", "", story, "In which room will Anne search for the ball?", "kitchen", "1", "True", "x",
         "y", "s"],
        ["a3", "(prose)", "", "", "In which room will Anne search for the ball?", "kitchen", " 2 ", " false ", "",
         "", ""],
        ["", "(prose)", story, "", "In which room will Anne search for the ball?", "kitchen", "1", "", "", "", ""],
        ["a4", "(prose)", story, "", "", "kitchen", "1", "", "", "", ""],
        ["a5", "", story, "", "In which room will Anne search for the ball?", "kitchen", "1", "", "", "", ""],
        ["a6", " ", story, story, "In which room will Anne search for the ball?", "kitchen", "", "", "", "", ""],
    ]
    return _csv(["id", "infilled_story", "story_structure", "raw_story", "question", "expected_answer",
                 "qprop=nth_order", "is_false_belief", "qprop=params", "param=x", "split"], rows, csv.QUOTE_ALL)


def _two_files() -> dict[str, str]:
    story = "Anne entered the kitchen. Anne moved the ball to the box, which is also located in the kitchen."
    header = ["raw_story", "question", "expected_answer", "param=level", "sprop=b"]
    return {"part_a.csv": _csv(header, [[story, "In which container will Anne search for the ball?", "box", "1",
                                         ""]]),
            "part_b.csv": _csv(header, [[story, "In which room will Anne search for the ball?", "kitchen", "",
                                         "x"],
                                        [story + " Anne left the kitchen.", "Is this a question?", "no", "2",
                                         ""]])}


def _cases() -> list[dict[str, Any]]:
    """Every case: name, importer, its files (name -> text), the path imported and its options."""
    return [
        {"name": "generated", "kind": "exploretom", "files": {"generated.csv": _generated()}, "path": "generated.csv",
         "options": {}},
        {"name": "awkward", "kind": "exploretom", "files": {"awkward.csv": _awkward()}, "path": "awkward.csv",
         "options": {"mapping": {"split": "split"}, "skip_bad": True}},
        {"name": "refused", "kind": "exploretom", "files": {"refused.csv": _refused()}, "path": "refused.csv",
         "options": {"mapping": {"stimulus": "qid"}, "skip_bad": True}},
        {"name": "refused_whole", "kind": "exploretom", "files": {"refused.csv": _refused()},
         "path": "refused.csv", "options": {"mapping": {"stimulus": "qid"}}},
        {"name": "quoted_empty", "kind": "exploretom", "files": {"quoted.csv": _quoted_empty()},
         "path": "quoted.csv", "options": {"mapping": {"stimulus": "id", "split": "split"}, "skip_bad": True}},
        {"name": "two_files", "kind": "exploretom", "files": _two_files(), "path": ".", "options": {}},
        {"name": "sample", "kind": "exploretom", "files": {"questions.csv": SAMPLE_CSV.read_text(encoding="utf-8")},
         "path": "questions.csv", "options": {}},
        {"name": "ncp_sample", "kind": "ncp", "path": ".", "options": {},
         "files": {str(p.relative_to(NCP_SAMPLE)): p.read_text(encoding="utf-8")
                   for p in sorted(NCP_SAMPLE.rglob("*")) if p.is_file() and "exploretom" not in p.parts}},
    ]


def _plain(value: Any, root: str) -> Any:
    """A stored value as JSON can hold it, the same from one run to the next."""
    if isinstance(value, (datetime.datetime, datetime.date)):
        return "<time>"
    if isinstance(value, str):
        return value.replace(root, "<root>")
    if isinstance(value, (list, tuple)):
        return [_plain(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v, root) for k, v in value.items()}
    return value


def run_case(case: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Import the case's files into a new store in `folder`; what the store holds and what the import said."""
    for name, text in case["files"].items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    store = Store.open(folder / "store.duckdb")
    try:
        summary = run_import(store, case["kind"], folder / case["path"],
                             ImportOptions(dataset_name=case["name"], **case["options"]))
        said = {"notes": summary.notes, "skipped": summary.skipped, "written": summary.written}
    except ImportFailed as exc:
        said = {"refused": str(exc)}
    cur = store.cursor()
    columns = {table: [c for (c,) in cur.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' AND table_name = ?"
        " ORDER BY ordinal_position", [table]).fetchall()] for table in store_rows(store)}
    rows = store_rows(store)
    question_steps = _question_steps(cur)
    store.close()
    rows = _plain(rows, str(folder))
    for table, referring in _NUMBERED:
        _renumber(rows, columns, table, referring)
    # a trace step's own id is a number no other row refers to: the step is known by its stimulus,
    # prediction and index; a story question's steps are its story's, listed as the question's own
    del rows["story_step"], rows["story_question"]
    # the models' outcomes are counted from the answers, by store ids (checked against them in
    # tests/test_model_outcomes.py)
    del rows["model_outcome"]
    rows["trace_step"] = sorted([*(row[1:] for row in rows["trace_step"]), *_plain(question_steps, str(folder))],
                                key=repr)
    return _plain({"said": said, "rows": rows}, str(folder))


def _question_steps(cur: Any) -> list[list[Any]]:
    """Each story question's steps as a reference trace step (stimulus, no prediction, index, action, args,
    kwargs), after checking that the story tables hold each story once: no two stories of a dataset with the
    same steps, and no story that no question asks about."""
    repeated = cur.execute(
        "SELECT dataset_id, count(*) FROM (SELECT s.dataset_id, list(row(t.step_index, t.action, CAST(t.args AS VARCHAR),"
        " CAST(t.kwargs AS VARCHAR)) ORDER BY t.step_index) AS steps FROM story_step t JOIN (SELECT DISTINCT"
        " q.story_id, s.dataset_id FROM story_question q JOIN stimulus s ON s.id = q.stimulus_id) s"
        " ON s.story_id = t.story_id GROUP BY t.story_id, s.dataset_id) GROUP BY dataset_id, steps"
        " HAVING count(*) > 1").fetchall()
    unasked = cur.execute("SELECT DISTINCT story_id FROM story_step WHERE story_id NOT IN"
                          " (SELECT story_id FROM story_question)").fetchall()
    assert not repeated and not unasked, (repeated, unasked)
    return [list(row) for row in cur.execute(
        "SELECT q.stimulus_id, NULL, t.step_index, t.action, t.args, t.kwargs FROM story_question q"
        " JOIN story_step t ON t.story_id = q.story_id").fetchall()]


# Tables whose ids DuckDB draws in whatever order a parallel insert reaches the rows (models and runs named by
# several traces, say), each with the columns that refer to them; in order, so each is renumbered after the
# ids its own rows hold.
_NUMBERED = (("model", (("run", "model_id"), ("aggregate_result", "model_id"))),
             ("run", (("prediction", "run_id"),)),
             ("prediction", (("trace_step", "prediction_id"), ("judgment", "prediction_id"))))


def _renumber(rows: dict[str, list], columns: dict[str, list[str]], table: str,
              referring: tuple[tuple[str, str], ...]) -> None:
    """Give `table`'s rows ids in the order of their other values, and the rows that refer to them the same."""
    if not rows.get(table):
        return
    ordered = sorted(rows[table], key=lambda row: repr(row[1:]))
    new = {row[0]: number for number, row in enumerate(ordered, start=1)}
    rows[table] = [[new[row[0]], *row[1:]] for row in ordered]
    for other, column in referring:
        at = columns[other].index(column)
        rows[other] = sorted(([*row[:at], new.get(row[at], row[at]), *row[at + 1:]] for row in rows.get(other, [])),
                             key=repr)


def load_snapshot() -> list[dict[str, Any]]:
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def write_snapshot() -> None:
    out = []
    for case in _cases():
        with tempfile.TemporaryDirectory() as tmp:
            out.append({**case, "expected": run_case(case, Path(tmp))})
    with gzip.open(SNAPSHOT, "wt", encoding="utf-8", compresslevel=9) as fh:
        json.dump(out, fh, ensure_ascii=False, sort_keys=True)


if __name__ == "__main__":
    write_snapshot()
