"""Frames for analysis: one dataset's predictions, ratings, judgments and traces as polars frames.

Everything the dashboards, failure filters and slice finder compute starts here. Stimulus metadata (the
JSON `meta` column) is flattened into plain columns: every key whose values are scalars (text, numbers,
booleans) becomes a column of that type; lists and objects are left out. A few keys that importers name
differently are given one name, so a chart or slice reads the same across releases:
`site` -> `vendor`, `gender_composition` -> `gender`, an EchoMind MCQ's `subtype` -> `question_type`, and
ExploreToM's `param=story_type` -> `story_type` (its other `qprop=`/`sprop=`/`param=` keys stay out).

Read only: live answers are written by `storage.live_runs`, computed verdicts by `storage.verdicts`.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:  # the frames are made by DuckDB's `.pl()`; a stimulus's media paths need no polars
    import polars as pl


META_ALIASES = {"site": "vendor", "gender_composition": "gender", "subtype": "question_type",
                "param=story_type": "story_type"}
# Keys of the JSON meta that are bookkeeping, not properties of the stimulus worth a column.
_SKIPPED_META = {"source", "source_file", "source_interaction", "source_start_s", "case_id", "question_id",
                 "audio_dir", "answer_text", "script", "setup_steps", "context_id", "goal_id"}
_JSON_TYPES = {"VARCHAR": "VARCHAR", "BIGINT": "BIGINT", "UBIGINT": "BIGINT", "DOUBLE": "DOUBLE",
               "BOOLEAN": "BOOLEAN"}


# ----- stimulus metadata -------------------------------------------------------------------------------
def _meta_columns(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[tuple[str, str]]:
    """(key, SQL type) of the scalar meta keys this dataset's stimuli carry."""
    rows = cur.execute(
        "WITH k AS (SELECT meta, unnest(json_keys(meta)) AS key FROM stimulus"
        "           WHERE dataset_id = ? AND meta IS NOT NULL)"
        " SELECT key, list(DISTINCT json_type(meta, '$.\"' || key || '\"')) FROM k GROUP BY key ORDER BY key",
        [dataset_id]).fetchall()
    columns = []
    for key, types in rows:
        # an alias names the column, so a key spelled with other characters is safe to read
        if key in _SKIPPED_META or not (key in META_ALIASES or key.replace("_", "").isalnum()):
            continue
        kinds = {t for t in types if t not in (None, "NULL")}
        if not kinds or not kinds <= set(_JSON_TYPES):
            continue
        mapped = {_JSON_TYPES[t] for t in kinds}
        sql_type = mapped.pop() if len(mapped) == 1 else ("DOUBLE" if mapped <= {"BIGINT", "DOUBLE"} else "VARCHAR")
        columns.append((key, sql_type))
    return columns


def _meta_select(columns: list[tuple[str, str]]) -> tuple[str, list[str]]:
    names = {key for key, _ in columns}
    parts, out = [], []
    for key, sql_type in columns:
        alias = META_ALIASES.get(key, key)
        if alias != key and alias in names:
            alias = key  # both spellings present: keep each as it is
        if alias in ("stimulus_id", "external_id", "kind", "ground_truth", "title", "split"):
            alias = f"meta_{key}"
        path = f"'$.\"{key}\"'"
        expr = (f"json_extract_string(s.meta, {path})" if sql_type == "VARCHAR"
                else f"TRY_CAST(json_extract_string(s.meta, {path}) AS {sql_type})")
        parts.append(f"{expr} AS \"{alias}\"")
        out.append(alias)
    return ", ".join(parts), out


def stimuli_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """One row per stimulus: stimulus_id, external_id, kind, ground_truth, split, plus flattened meta."""
    select, _ = _meta_select(_meta_columns(cur, dataset_id))
    extra = f", {select}" if select else ""
    return cur.sql(
        "SELECT s.id AS stimulus_id, s.external_id, s.kind, s.ground_truth, s.split" + extra +
        " FROM stimulus s WHERE s.dataset_id = ? ORDER BY s.id", params=[dataset_id]).pl()


def has_stimuli_of_kind(cur: duckdb.DuckDBPyConnection, dataset_id: int, kind: str) -> bool:
    """Whether any of the dataset's stimuli is of `kind`, without reading them."""
    return bool(cur.execute("SELECT EXISTS (SELECT 1 FROM stimulus WHERE dataset_id = ? AND kind = ?)",
                            [dataset_id, kind]).fetchall()[0][0])


def predictions_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int, with_meta: bool = True,
                      modality_like: str | None = None) -> pl.DataFrame:
    """Every prediction of the dataset: prediction_id, stimulus_id, external_id, model, modality,
    prompt_setting, vision_mode, context, answer, correct, ground_truth, is_live, then (with_meta) the
    flattened stimulus meta columns. `modality_like` (a SQL LIKE pattern) keeps matching runs only."""
    where = "r.dataset_id = ?" + (" AND r.modality LIKE ?" if modality_like else "")
    params: list[Any] = [dataset_id] + ([modality_like] if modality_like else [])
    select, names = _meta_select(_meta_columns(cur, dataset_id)) if with_meta else ("", [])
    # The meta JSON is flattened once per stimulus, then joined: not once per prediction.
    extra = "".join(f', sm."{name}"' for name in names)
    flattened = (f" LEFT JOIN (SELECT s.id, {select} FROM stimulus s WHERE s.dataset_id = ?) sm"
                 " ON sm.id = p.stimulus_id") if select else ""
    return cur.sql(
        "SELECT p.id AS prediction_id, p.stimulus_id, s.external_id, m.name AS model, r.modality,"
        " r.prompt_setting, r.vision_mode, r.context, p.answer, p.correct, s.ground_truth, r.is_live" + extra +
        " FROM prediction_all p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        f" JOIN stimulus s ON s.id = p.stimulus_id{flattened} WHERE {where}",
        params=([dataset_id] if select else []) + params).pl()


def prediction_answer_counts(cur: duckdb.DuckDBPyConnection, dataset_id: int, truths: Sequence[str],
                             live_suffix: str = "") -> pl.DataFrame:
    """Predictions on stimuli whose ground truth is one of `truths`, counted per run, truth and answer in one
    GROUP BY: model (a live run's model name followed by `live_suffix`), modality, ground_truth, answer, n (Int64),
    in no particular order. A million predictions become a few hundred rows, so accuracy and signal detection
    need not read every prediction. Runs that differ only in another condition (a prompt setting) give rows with
    the same model, modality, truth and answer: a reader per model and modality sums them."""
    # Counting per run keeps the million-row aggregation on integer keys (the truth by its place in `truths`);
    # names join the small result, which is not grouped again (that second pass cost as much as a third of the
    # count).
    return _counts_frame(cur, (
        "WITH t AS (SELECT id, list_position(?, ground_truth)::UTINYINT AS truth FROM stimulus"
        "           WHERE dataset_id = ? AND list_contains(?, ground_truth)),"
        " c AS (SELECT p.run_id, t.truth, p.answer, count(*) AS n FROM prediction_all p JOIN t ON t.id = p.stimulus_id"
        "       GROUP BY ALL)"
        " SELECT CASE WHEN r.is_live THEN m.name || ? ELSE m.name END AS model, r.modality,"
        " (?::VARCHAR[])[c.truth] AS ground_truth, c.answer, c.n FROM c JOIN run r ON r.id = c.run_id"
        " JOIN model m ON m.id = r.model_id WHERE r.dataset_id = ?"),
        [list(truths), dataset_id, list(truths), live_suffix, list(truths), dataset_id],
        {"model": "String", "modality": "String", "ground_truth": "String", "answer": "String", "n": "Int64"})


def prediction_correct_counts(cur: duckdb.DuckDBPyConnection, dataset_id: int, live_suffix: str = "") -> pl.DataFrame:
    """Predictions counted per run and correctness, in one GROUP BY: model (a live run's model name followed by
    `live_suffix`), modality, correct (null: not scored), n (Int64), in no particular order; runs that differ
    only in another condition give rows with the same model, modality and correct, which a reader per model and
    modality sums."""
    return _counts_frame(cur, (
        "WITH c AS (SELECT run_id, correct, CAST(sum(n) AS BIGINT) AS n FROM prediction_counts WHERE dataset_id = ?"
        "           GROUP BY ALL)"
        " SELECT CASE WHEN r.is_live THEN m.name || ? ELSE m.name END AS model, r.modality, c.correct, c.n"
        " FROM c JOIN run r ON r.id = c.run_id JOIN model m ON m.id = r.model_id"), [dataset_id, live_suffix],
        {"model": "String", "modality": "String", "correct": "Boolean", "n": "Int64"})


def _counts_frame(cur: duckdb.DuckDBPyConnection, sql: str, params: list[Any], schema: dict[str, str]) -> pl.DataFrame:
    """A query's few hundred rows of counts as a frame of `schema` (polars type names). Fetched as rows: a
    relation's frame cost a third as much again as the million-row count itself."""
    import polars as pl

    return pl.DataFrame(cur.execute(sql, params).fetchall(), schema={c: getattr(pl, t) for c, t in schema.items()},
                        orient="row")


def predicted_stimulus_ids(cur: duckdb.DuckDBPyConnection, dataset_id: int, model: str, modality: str | None,
                           ground_truths: list[str] | None = None, live_suffix: str = "",
                           scored_only: bool = False) -> list[int]:
    """Sorted ids of the dataset's stimuli that `model` (a live run's model name followed by `live_suffix`)
    answered in `modality`; with `ground_truths`, only stimuli whose ground truth is one of them; with
    `scored_only`, only answers that are scored (correct or not)."""
    sql = ("SELECT DISTINCT p.stimulus_id FROM prediction_all p JOIN run r ON r.id = p.run_id"
           " JOIN model m ON m.id = r.model_id JOIN stimulus s ON s.id = p.stimulus_id"
           " WHERE r.dataset_id = ? AND (CASE WHEN r.is_live THEN m.name || ? ELSE m.name END) = ?"
           " AND r.modality IS NOT DISTINCT FROM ?" + (" AND p.correct IS NOT NULL" if scored_only else ""))
    params: list[Any] = [dataset_id, live_suffix, model, modality]
    if ground_truths is not None:
        sql += " AND list_contains(?, s.ground_truth)"
        params.append(list(ground_truths))
    return [int(r[0]) for r in cur.execute(sql + " ORDER BY 1", params).fetchall()]


def human_ratings_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """Human ratings: stimulus_id, rater, condition, answer, correct, response_time_s, ground_truth."""
    return cur.sql(
        "SELECT h.stimulus_id, h.rater, h.condition, h.answer, h.correct, h.response_time_s, s.ground_truth"
        " FROM human_rating h JOIN stimulus s ON s.id = h.stimulus_id WHERE s.dataset_id = ?",
        params=[dataset_id]).pl()


def judgments_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """Judge scores: prediction_id, stimulus_id, model, modality, prompt_setting, vision_mode, context,
    judge, criterion, score, scale_max, rationale."""
    return cur.sql(
        "SELECT j.prediction_id, p.stimulus_id, m.name AS model, r.modality, r.prompt_setting, r.vision_mode,"
        " r.context, j.judge, j.criterion, j.score, j.scale_max, j.rationale FROM judgment j"
        " JOIN prediction p ON p.id = j.prediction_id JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id WHERE r.dataset_id = ?", params=[dataset_id]).pl()


def asr_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """EchoMind ASR: stimulus_id, external_id, model, reference (the script text), answer (the transcript).

    The importer stores ASR outputs as predictions of modality `asr` on the script stimulus, whose
    `text` is the script."""
    return cur.sql(
        "SELECT p.stimulus_id, s.external_id, m.name AS model, s.text AS reference, p.answer"
        " FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        " JOIN stimulus s ON s.id = p.stimulus_id WHERE r.dataset_id = ? AND r.modality = 'asr'",
        params=[dataset_id]).pl()


def conversation_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """EchoMind open responses: stimulus_id, model, voice, prompt_setting, answer (response text),
    transcript (of the response audio) and reference (a reference response when the release gives one
    in the script's meta as `reference_responses.<voice>` or `reference_response`; else null)."""
    return cur.sql(
        "SELECT p.stimulus_id, m.name AS model, replace(r.modality, 'conversation:', '') AS voice,"
        " r.prompt_setting, p.answer, p.raw_output AS transcript,"
        " coalesce(json_extract_string(s.meta, '$.reference_responses.' || replace(r.modality, 'conversation:', '')),"
        "          json_extract_string(s.meta, '$.reference_response')) AS reference"
        " FROM prediction p JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        " JOIN stimulus s ON s.id = p.stimulus_id"
        " WHERE r.dataset_id = ? AND r.modality LIKE 'conversation:%'", params=[dataset_id]).pl()


def aggregate_results_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """Published per-model figures: model, source, metric_group, metric, value, value_text."""
    return cur.sql(
        "SELECT m.name AS model, a.source, a.metric_group, a.metric, a.value, a.value_text"
        " FROM aggregate_result a JOIN model m ON m.id = a.model_id WHERE a.dataset_id = ?"
        " ORDER BY a.metric_group, a.metric, m.name", params=[dataset_id]).pl()


def response_audio_paths(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> dict[int, Path]:
    """{prediction id: absolute path} of model response audio files that exist on disk."""
    rows = cur.execute(
        "SELECT p.id, json_extract_string(p.meta, '$.response_audio'),"
        " json_extract_string(p.meta, '$.response_audio_file'), d.root FROM prediction p"
        " JOIN run r ON r.id = p.run_id JOIN dataset d ON d.id = r.dataset_id WHERE p.stimulus_id = ?",
        [stimulus_id]).fetchall()
    found: dict[int, Path] = {}
    for pid, rel, name, root in rows:
        for candidate in (rel, name):
            if not candidate:
                continue
            path = Path(candidate) if Path(candidate).is_absolute() else Path(root) / candidate
            if path.is_file():
                found[pid] = path
                break
    return found
