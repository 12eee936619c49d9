"""An ExploreToM story's steps, stored once for all its questions (`story_step`, `story_question`).

A release asks some twenty questions of each story, so a story's steps are one set of rows and each question
names its story. To every reader a question's steps are its reference trace, as an NCP task's are: the store's
readers of traces (`storage.queries`) ask here for the steps of the stories among the stimuli they read.
"""
from __future__ import annotations

import json

import duckdb

from storage.records import TraceStepRecord


def story_steps(cur: duckdb.DuckDBPyConnection, stimulus_ids: list[int]) -> dict[int, list[TraceStepRecord]]:
    """The steps of the story each of these stimuli asks about, in order (a stimulus that is no story
    question is left out)."""
    if not stimulus_ids:
        return {}
    out: dict[int, list[TraceStepRecord]] = {}
    for sid, idx, action, args, kwargs in cur.execute(
            "SELECT q.stimulus_id, t.step_index, t.action, t.args, t.kwargs FROM story_question q"
            " JOIN story_step t ON t.story_id = q.story_id WHERE list_contains(?, q.stimulus_id)"
            " ORDER BY q.stimulus_id, t.step_index", [stimulus_ids]).fetchall():
        out.setdefault(sid, []).append(TraceStepRecord(idx, action, _loaded(args, []), _loaded(kwargs, {})))
    return out


# Each question's story's steps as the question's own (stimulus_id, step_index, action, args, kwargs), for
# counts that name a question's steps as they name an NCP task's, and for comparing an import with the store.
QUESTION_STEPS = ("SELECT q.stimulus_id, t.step_index, t.action, t.args, t.kwargs FROM story_question q"
                  " JOIN story_step t ON t.story_id = q.story_id")


def write_story_steps(cur: duckdb.DuckDBPyConnection, steps: str, questions: str) -> int:
    """Store the plan's stories (the view `steps`: story, step_index, action, args, kwargs, its stories
    numbered within the plan) and name each question's story (the view `questions`: stimulus, story), the
    questions' store ids read from the writer's `stim_map`. Returns how many story steps were written.

    A story whose steps a story of the same dataset already has is that story (a second import of a release,
    or more questions of its stories, adds no steps); a question already naming a story with other steps
    names the new one, and a story no question names any more is dropped with its steps.
    """
    cur.execute(
        "CREATE OR REPLACE TEMP TABLE story_asked AS SELECT s.stimulus_id, q.story FROM " + questions + " q"
        " JOIN stim_map s ON s.external_id = q.stimulus")
    # the dataset's stored stories (none for a new dataset, whose stories are all new)
    cur.execute(
        "CREATE OR REPLACE TEMP TABLE story_kept AS SELECT DISTINCT q.story_id FROM story_question q"
        " JOIN stimulus s ON s.id = q.stimulus_id WHERE s.dataset_id IN (SELECT st.dataset_id FROM stimulus st"
        " JOIN story_asked a ON a.stimulus_id = st.id)")
    kept = cur.execute("SELECT count(*) FROM story_kept").fetchall()[0][0]
    if kept:
        _match_kept_stories(cur, steps)
    else:
        cur.execute("CREATE OR REPLACE TEMP TABLE story_ids AS SELECT story, nextval('seq_story') AS story_id"
                    " FROM (SELECT DISTINCT story FROM story_asked)")
    written = cur.execute(
        "INSERT INTO story_step (story_id, step_index, action, args, kwargs) SELECT m.story_id, f.step_index,"
        " f.action, f.args, f.kwargs FROM " + steps + " f JOIN story_ids m ON m.story = f.story"
        " WHERE m.story_id NOT IN (SELECT story_id FROM story_kept)").fetchall()[0][0]
    # in a dataset without stories no question names one yet: nothing to replace or drop
    cur.execute(
        f"INSERT {'OR REPLACE ' if kept else ''}INTO story_question (stimulus_id, story_id)"
        " SELECT a.stimulus_id, m.story_id FROM story_asked a JOIN story_ids m ON m.story = a.story")
    if kept:
        cur.execute("DELETE FROM story_step WHERE story_id IN (SELECT story_id FROM story_kept)"
                    " AND story_id NOT IN (SELECT story_id FROM story_question)")
    for table in ("story_asked", "story_kept", "story_ids"):
        cur.execute(f"DROP TABLE {table}")
    return int(written)


def _match_kept_stories(cur: duckdb.DuckDBPyConnection, steps: str) -> None:
    """`story_ids`: each asked story of the plan as the stored story with the same steps, else a new id."""
    cur.execute(
        "CREATE OR REPLACE TEMP TABLE story_in AS SELECT story, list(struct_pack(i := step_index, a := action,"
        " g := args, k := kwargs) ORDER BY step_index) AS steps FROM " + steps +
        " WHERE story IN (SELECT story FROM story_asked) GROUP BY story")
    cur.execute(
        "CREATE OR REPLACE TEMP TABLE story_kept_steps AS SELECT t.story_id, list(struct_pack(i := t.step_index,"
        " a := t.action, g := CAST(t.args AS VARCHAR), k := CAST(t.kwargs AS VARCHAR)) ORDER BY t.step_index)"
        " AS steps FROM story_step t WHERE t.story_id IN (SELECT story_id FROM story_kept) GROUP BY t.story_id")
    cur.execute(
        "CREATE OR REPLACE TEMP TABLE story_ids AS SELECT i.story, min(k.story_id) AS story_id FROM story_in i"
        " LEFT JOIN story_kept_steps k ON k.steps = i.steps GROUP BY i.story")
    cur.execute("UPDATE story_ids SET story_id = nextval('seq_story') WHERE story_id IS NULL")
    cur.execute("DROP TABLE story_in")
    cur.execute("DROP TABLE story_kept_steps")


def _loaded(value: str | None, default: object) -> object:
    """A stored JSON value, or `default` when there is none or it does not read (as every trace reader does)."""
    if value is None:
        return default
    try:
        return json.loads(value)
    except ValueError:
        return default
