"""The store's tables, as numbered migrations. A store at any older version is upgraded in place.

Version 1 is the unified model of the four benchmarks. Later versions only add; nothing is dropped,
so an old store opens without loss.
"""
from __future__ import annotations

from collections.abc import Callable

import duckdb

from storage.natural_order import natural_key_sql
from storage.outcomes import BUILD_SQL, CREATE_SQL

_V1_TABLES = ["dataset", "stimulus", "media", "segment", "model", "run", "prediction", "judgment",
              "human_rating", "label_set", "label", "annotation", "annotation_event", "trace_step",
              "goal_atom"]

V1 = "\n".join(f"CREATE SEQUENCE IF NOT EXISTS seq_{t} START 1;" for t in _V1_TABLES) + """
CREATE TABLE dataset (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_dataset'),
    name VARCHAR NOT NULL UNIQUE,
    benchmark VARCHAR NOT NULL,          -- friendbench, echomind, agentviss, ncp, exploretom, seamless, generic
    root VARCHAR NOT NULL,               -- folder that media paths are relative to
    source VARCHAR,                      -- where the files came from
    synthetic BOOLEAN NOT NULL DEFAULT false,
    importer VARCHAR,
    importer_version INTEGER,
    imported_at TIMESTAMP DEFAULT current_timestamp,
    meta JSON
);
CREATE TABLE stimulus (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_stimulus'),
    dataset_id BIGINT NOT NULL,
    external_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,               -- dyad, echomind_script, echomind_mcq, agentviss_scene, ncp_task, story, generic
    ground_truth VARCHAR,
    split VARCHAR,
    title VARCHAR,
    text VARCHAR,
    meta JSON,
    UNIQUE (dataset_id, external_id)
);
CREATE TABLE media (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_media'),
    stimulus_id BIGINT NOT NULL,
    role VARCHAR NOT NULL,
    path VARCHAR NOT NULL,               -- relative to the dataset root unless absolute was allowed
    present BOOLEAN NOT NULL DEFAULT true,
    offset_s DOUBLE NOT NULL DEFAULT 0,
    duration_s DOUBLE,
    sample_rate INTEGER,
    meta JSON
);
CREATE TABLE segment (
    id BIGINT NOT NULL DEFAULT nextval('seq_segment'),
    stimulus_id BIGINT NOT NULL,
    ord INTEGER NOT NULL,
    speaker VARCHAR,
    start_s DOUBLE,
    end_s DOUBLE,
    text VARCHAR,
    words JSON,                          -- [{word, start, end}]
    media_role VARCHAR
);
CREATE TABLE model (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_model'),
    name VARCHAR NOT NULL UNIQUE,
    organisation VARCHAR,
    meta JSON
);
CREATE TABLE run (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_run'),
    dataset_id BIGINT NOT NULL,
    model_id BIGINT NOT NULL,
    modality VARCHAR NOT NULL DEFAULT '',
    prompt_setting VARCHAR NOT NULL DEFAULT '',
    vision_mode VARCHAR NOT NULL DEFAULT '',
    context VARCHAR NOT NULL DEFAULT '',
    is_live BOOLEAN NOT NULL DEFAULT false,
    params JSON,
    created_at TIMESTAMP DEFAULT current_timestamp,
    UNIQUE (dataset_id, model_id, modality, prompt_setting, vision_mode, context)
);
-- The large tables (predictions, judgments, ratings, segments, steps, events) carry no key index: ids come from
-- sequences and upserts join on natural keys, which keeps a million-row load fast.
CREATE TABLE prediction (
    id BIGINT NOT NULL DEFAULT nextval('seq_prediction'),
    run_id BIGINT NOT NULL,
    stimulus_id BIGINT NOT NULL,
    raw_output VARCHAR,
    answer VARCHAR,
    correct BOOLEAN,
    latency_s DOUBLE,
    meta JSON
);
CREATE TABLE judgment (
    id BIGINT NOT NULL DEFAULT nextval('seq_judgment'),
    prediction_id BIGINT NOT NULL,
    judge VARCHAR NOT NULL DEFAULT '',
    criterion VARCHAR NOT NULL,
    score DOUBLE,
    scale_max DOUBLE,
    rationale VARCHAR
);
CREATE TABLE human_rating (
    id BIGINT NOT NULL DEFAULT nextval('seq_human_rating'),
    stimulus_id BIGINT NOT NULL,
    rater VARCHAR NOT NULL,
    condition VARCHAR NOT NULL DEFAULT '',
    answer VARCHAR,
    correct BOOLEAN,
    response_time_s DOUBLE
);
CREATE TABLE label_set (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_label_set'),
    name VARCHAR NOT NULL UNIQUE,
    scope VARCHAR NOT NULL DEFAULT 'both',   -- interval, whole, both
    description VARCHAR,
    source VARCHAR
);
CREATE TABLE label (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_label'),
    label_set_id BIGINT NOT NULL,
    name VARCHAR NOT NULL,
    parent VARCHAR,
    colour VARCHAR,
    shortcut VARCHAR,
    description VARCHAR,
    ord INTEGER NOT NULL DEFAULT 0,
    UNIQUE (label_set_id, name)
);
CREATE TABLE annotation (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_annotation'),
    stimulus_id BIGINT NOT NULL,
    annotator VARCHAR NOT NULL,
    label_set VARCHAR NOT NULL,
    label VARCHAR,
    start_s DOUBLE,                      -- NULL start and end: a whole-stimulus label
    end_s DOUBLE,
    value VARCHAR,
    note VARCHAR,
    media_role VARCHAR,
    revision INTEGER NOT NULL DEFAULT 1,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    deleted_at TIMESTAMP
);
CREATE TABLE annotation_event (
    id BIGINT NOT NULL DEFAULT nextval('seq_annotation_event'),
    annotation_id BIGINT NOT NULL,
    annotator VARCHAR NOT NULL,
    happened_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    action VARCHAR NOT NULL,             -- create, update, delete, restore
    before JSON,
    after JSON
);
CREATE TABLE trace_step (
    id BIGINT NOT NULL DEFAULT nextval('seq_trace_step'),
    stimulus_id BIGINT NOT NULL,
    prediction_id BIGINT,                -- NULL: the task's reference trace
    step_index INTEGER NOT NULL,
    action VARCHAR NOT NULL,
    args JSON,
    kwargs JSON
);
CREATE TABLE goal_atom (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_goal_atom'),
    stimulus_id BIGINT NOT NULL,
    ord INTEGER NOT NULL,
    holders JSON NOT NULL,               -- [] world fact, [p] first order, [p, q] second order
    entity VARCHAR NOT NULL,
    property VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    text VARCHAR
);
CREATE INDEX idx_stimulus_dataset ON stimulus(dataset_id);
CREATE INDEX idx_media_stimulus ON media(stimulus_id);
CREATE INDEX idx_segment_stimulus ON segment(stimulus_id);
CREATE INDEX idx_annotation_stimulus ON annotation(stimulus_id);
"""

# Version 2: aggregate results (leaderboards publish per-model figures without per-item outputs), and a
# checksum per media file so a moved file can be recognised.
V2 = """
CREATE SEQUENCE IF NOT EXISTS seq_aggregate_result START 1;
CREATE TABLE aggregate_result (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_aggregate_result'),
    dataset_id BIGINT NOT NULL,
    model_id BIGINT NOT NULL,
    source VARCHAR NOT NULL,
    metric_group VARCHAR NOT NULL DEFAULT '',
    metric VARCHAR NOT NULL,
    value DOUBLE,
    value_text VARCHAR
);
ALTER TABLE media ADD COLUMN checksum VARCHAR;
"""

# Version 3: live runs record what was sent and what it cost.
V3 = """
ALTER TABLE prediction ADD COLUMN prompt VARCHAR;
ALTER TABLE prediction ADD COLUMN tokens_in INTEGER;
ALTER TABLE prediction ADD COLUMN tokens_out INTEGER;
"""

# Version 4: a label keeps the other spellings a release uses for it, so a label set survives a trip
# through the store (importing annotations that use an alias, exporting the set) without losing them.
V4 = """
ALTER TABLE label ADD COLUMN aliases VARCHAR[];
"""

# Version 5: what an annotation file from another tool says about a label beyond its times and text (the ELAN
# tier's participant, parent tier and constraint, how a dependent annotation's times were found, an Audacity
# label's frequency range), so that importing a corpus and exporting it again loses none of it.
V5 = """
ALTER TABLE annotation ADD COLUMN meta JSON;
"""

# Version 6: a live answer that did not finish normally (the stream was cut off before a finish reason, or the
# answer passed the size limit) is kept apart from the predictions, with what arrived: it is never scored and
# never replaces a complete answer.
V6 = """
CREATE SEQUENCE IF NOT EXISTS seq_live_failure START 1;
CREATE TABLE live_failure (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_live_failure'),
    dataset_id BIGINT NOT NULL,
    stimulus_id BIGINT NOT NULL,
    model VARCHAR NOT NULL,
    modality VARCHAR NOT NULL DEFAULT '',
    prompt_setting VARCHAR NOT NULL DEFAULT '',
    vision_mode VARCHAR NOT NULL DEFAULT '',
    context VARCHAR NOT NULL DEFAULT '',
    status VARCHAR NOT NULL,             -- cut_off, too_large
    reason VARCHAR,                      -- the message the user was shown
    partial_output VARCHAR,              -- what arrived before the answer stopped
    prompt VARCHAR,
    latency_s DOUBLE,
    params JSON,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
"""

# Version 7: cue measures (pitch, intensity, rates, gaps, overlaps, labelled cues) per stimulus and voice,
# computed once and kept with the parameters and library versions that made them.
V7 = """
CREATE SEQUENCE IF NOT EXISTS seq_cue_run START 1;
CREATE TABLE cue_run (
    id BIGINT PRIMARY KEY DEFAULT nextval('seq_cue_run'),
    dataset_id BIGINT NOT NULL,
    params JSON NOT NULL,                -- Praat and turn-taking settings
    versions JSON NOT NULL,              -- praat-parselmouth, Praat, opensmile
    computed_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE TABLE cue_measure (
    run_id BIGINT NOT NULL,
    stimulus_id BIGINT NOT NULL,
    subject VARCHAR NOT NULL,            -- a participant or voice (A, B, target, neutral ...), or 'all'
    cue VARCHAR NOT NULL,
    value DOUBLE
);
CREATE INDEX idx_cue_measure_stimulus ON cue_measure(stimulus_id);
"""

# Version 8: every history event has one shape whatever made it. Release imports used to write action
# 'import' with a shorter `after`; those become 'create' events with the state every other event holds.
V8 = """
UPDATE annotation_event SET action = 'create', before = NULL, after = to_json(struct_pack(
    label_set := after->>'label_set', label := after->>'label',
    start_s := CAST(after->>'start_s' AS DOUBLE), end_s := CAST(after->>'end_s' AS DOUBLE),
    value := after->>'value', note := after->>'note',
    media_role := (SELECT a.media_role FROM annotation a WHERE a.id = annotation_event.annotation_id),
    revision := 1, deleted := false))
WHERE action = 'import';
"""

# Version 9: a store joined to a team project keeps the team's address (without password) and member name,
# which server label each local label is (with the server's revision it was last seen at), and the edits
# not yet on the server (made while it could not be reached), in order, until it has them.
V9 = """
CREATE TABLE team_state (
    key VARCHAR PRIMARY KEY,             -- url, member, last_event
    value VARCHAR
);
CREATE TABLE team_link (
    annotation_id BIGINT PRIMARY KEY,
    uid VARCHAR NOT NULL UNIQUE,         -- the label's id on the team server
    revision INTEGER NOT NULL            -- the server's revision this store's copy stands for
);
CREATE SEQUENCE IF NOT EXISTS seq_team_outbox START 1;
CREATE TABLE team_outbox (
    seq BIGINT PRIMARY KEY DEFAULT nextval('seq_team_outbox'),
    edit_uid VARCHAR NOT NULL UNIQUE,
    annotation_id BIGINT NOT NULL,
    body JSON NOT NULL,                  -- the edit as the server's apply_edit takes it
    queued_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
"""

# Version 10: an ExploreToM story's steps are stored once, not once for each of its questions (a release asks
# some twenty questions of each story): `story_step` holds each story's steps and `story_question` names each
# question's story. Reference traces already stored for story questions move there, one story for each set of
# questions of a dataset whose steps are the same, and leave `trace_step`, which keeps NCP tasks' traces.
V10 = """
CREATE SEQUENCE IF NOT EXISTS seq_story START 1;
CREATE TABLE story_step (
    story_id BIGINT NOT NULL,
    step_index INTEGER NOT NULL,
    action VARCHAR NOT NULL,
    args JSON,
    kwargs JSON
);
CREATE TABLE story_question (
    stimulus_id BIGINT PRIMARY KEY,
    story_id BIGINT NOT NULL
);
CREATE TEMP TABLE v10_question AS
    SELECT t.stimulus_id, s.dataset_id, list(struct_pack(i := t.step_index, a := t.action,
           g := CAST(t.args AS VARCHAR), k := CAST(t.kwargs AS VARCHAR)) ORDER BY t.step_index) AS steps
    FROM trace_step t JOIN stimulus s ON s.id = t.stimulus_id
    WHERE s.kind = 'story' AND t.prediction_id IS NULL GROUP BY t.stimulus_id, s.dataset_id;
CREATE TEMP TABLE v10_story AS
    SELECT dataset_id, steps, first, nextval('seq_story') AS story_id FROM (
        SELECT dataset_id, steps, min(stimulus_id) AS first FROM v10_question GROUP BY dataset_id, steps
        ORDER BY first);
INSERT INTO story_question SELECT q.stimulus_id, v.story_id FROM v10_question q
    JOIN v10_story v ON v.dataset_id = q.dataset_id AND v.steps = q.steps;
INSERT INTO story_step SELECT v.story_id, t.step_index, t.action, t.args, t.kwargs FROM v10_story v
    JOIN trace_step t ON t.stimulus_id = v.first AND t.prediction_id IS NULL;
DELETE FROM trace_step WHERE prediction_id IS NULL AND stimulus_id IN (SELECT stimulus_id FROM story_question);
DROP TABLE v10_question;
DROP TABLE v10_story;
"""

# Version 11: each stimulus keeps its id's natural sort key (numbers as numbers, see storage.natural_order),
# computed once when it is written: the table sorts a million stimuli by id a page at a time by this column.
V11 = f"""
ALTER TABLE stimulus ADD COLUMN sort_key VARCHAR;
UPDATE stimulus SET sort_key = {natural_key_sql('external_id')};
"""

# Version 12: a results release kept as Parquet can be read in place (storage/attached.py): `attachment` holds an
# attached dataset's column map and how each mapped column is read, `attached_file` each of its files with the size
# and modification time it had when attached. Every read of predictions goes through `prediction_all` (the stored
# predictions and the attached files' rows) or `prediction_outcome` (their runs, answers, correctness and dataset),
# which the store makes again each time it is opened for writing.
V12 = """
CREATE TABLE attachment (
    dataset_id BIGINT PRIMARY KEY,
    mapping JSON NOT NULL,               -- map field -> the files' column
    columns JSON NOT NULL,               -- column -> {type, padded}
    attached_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE TABLE attached_file (
    dataset_id BIGINT NOT NULL,
    ord INTEGER NOT NULL,
    path VARCHAR NOT NULL,               -- absolute
    size_bytes BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    rows BIGINT NOT NULL,
    PRIMARY KEY (dataset_id, ord)
);
CREATE VIEW prediction_all AS SELECT id, run_id, stimulus_id, raw_output, answer, correct, latency_s, meta, prompt,
    tokens_in, tokens_out FROM prediction;
CREATE VIEW prediction_outcome AS SELECT p.run_id, p.answer, p.correct, p.latency_s, r.dataset_id FROM prediction p
    JOIN run r ON r.id = p.run_id;
"""

# Version 13: the predictions are counted per dataset, run and correctness in a view of their own
# (`prediction_counts`), in which an attached dataset's files are counted before their runs are looked up, instead
# of a view of every row (`prediction_outcome`).
V13 = """
DROP VIEW IF EXISTS prediction_outcome;
CREATE OR REPLACE VIEW prediction_counts AS SELECT r.dataset_id, p.run_id, p.correct, count(*) AS n FROM prediction p
    JOIN run r ON r.id = p.run_id GROUP BY ALL;
"""

# Version 14: each model's outcome on each stimulus is kept (`model_outcome`, see storage/outcomes.py), so that the
# filter on a model's right or wrong answers reads a row per stimulus instead of grouping the model's predictions;
# an older store gets the rows of every stored prediction.
V14 = CREATE_SQL + BUILD_SQL


def _stimulus_made_again(version: int, id_column: str) -> str:
    """SQL making the stimulus table again as `stimulus_v<version>` with `id_column` as its id, its rows copied in id
    order: DuckDB cannot drop a constraint or an index of a table."""
    return f"""
CREATE TABLE stimulus_v{version} (
    {id_column},
    dataset_id BIGINT NOT NULL,
    external_id VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    ground_truth VARCHAR,
    split VARCHAR,
    title VARCHAR,
    text VARCHAR,
    meta JSON,
    sort_key VARCHAR
);
INSERT INTO stimulus_v{version} SELECT id, dataset_id, external_id, kind, ground_truth, split, title, text, meta,
    sort_key FROM stimulus ORDER BY id;
DROP TABLE stimulus;
ALTER TABLE stimulus_v{version} RENAME TO stimulus;
"""


# Version 15: a stimulus is no longer indexed by its dataset and external id (nor by its dataset alone): no query
# reads through those indexes (a lookup by dataset and id scans the table's zone maps either way), and keeping them
# was a third of writing a large results table's stimuli. A dataset's ids stay unique by its two writers: the import
# writer adds only ids the dataset lacks, one import at a time (one process opens a store, and within it
# `Store.import_lock` lets one import write at once), and attaching makes a new dataset of distinct ids. DuckDB
# cannot drop a constraint, so the table is made again with its rows.
V15 = _stimulus_made_again(15, "id BIGINT PRIMARY KEY DEFAULT nextval('seq_stimulus')")

# Version 16: a model's outcomes are kept only where it has several runs in a dataset and modality; where it has one,
# that run's answers are its outcomes and are read as they are (storage/outcomes.py), so the copy is dropped.
V16 = """
DELETE FROM model_outcome o WHERE (SELECT count(*) FROM run r WHERE r.dataset_id = o.dataset_id
    AND r.model_id = o.model_id AND r.modality = o.modality) < 2;
"""

# Version 17: a stimulus's id is no longer a primary key, as the large tables' ids are not (see `prediction`). Ids
# come from their sequence, and a lookup by id reads the zone maps of a table written in id order about as fast as
# the index did (0.86 against 0.79 ms among 2.5M stimuli), while keeping the index cost 0.3 s of importing 10M
# answers to 1.25M new clips (6.66 against 6.94 s).
V17 = _stimulus_made_again(17, "id BIGINT NOT NULL DEFAULT nextval('seq_stimulus')")

MIGRATIONS: list[str | Callable[[duckdb.DuckDBPyConnection], None]] = [V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11,
                                                                       V12, V13, V14, V15, V16, V17]
LATEST_VERSION = len(MIGRATIONS)


def current_version(con: duckdb.DuckDBPyConnection) -> int:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
    ).fetchall()[0][0]
    if not exists:
        return 0
    rows = con.execute("SELECT max(version) FROM schema_version").fetchall()
    return int(rows[0][0] or 0)


def migrate(con: duckdb.DuckDBPyConnection, target: int = LATEST_VERSION) -> list[int]:
    """Apply every migration above the store's version up to `target`, each in its own transaction.

    Returns the versions applied.
    """
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    applied: list[int] = []
    version = current_version(con)
    for number in range(version + 1, target + 1):
        step = MIGRATIONS[number - 1]
        con.execute("BEGIN TRANSACTION")
        try:
            if callable(step):
                step(con)
            else:
                con.execute(step)
            con.execute("INSERT INTO schema_version (version) VALUES (?)", [number])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(number)
    return applied
