"""The cue tables: runs (parameters and library versions) and measures per stimulus and voice, and the
outcomes (who got each stimulus right) that cues are compared against."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import duckdb
import polars as pl


@dataclass(frozen=True)
class CueRun:
    id: int
    dataset_id: int
    params: dict[str, Any]
    versions: dict[str, Any]


def _canonical(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True)


def audio_stimuli(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> list[int]:
    """Stimuli of the dataset that have at least one audio track present, in id order."""
    return [r[0] for r in cur.execute(
        "SELECT DISTINCT s.id FROM stimulus s JOIN media m ON m.stimulus_id = s.id WHERE s.dataset_id = ?"
        " AND m.present AND (m.role = 'audio' OR m.role LIKE 'audio:%') ORDER BY s.id", [dataset_id]).fetchall()]


def label_counts(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> list[tuple[str | None, str, str, str, int]]:
    """(media role or None for the whole stimulus, label set, label, annotator, count) of live labels."""
    return [tuple(r) for r in cur.execute(
        "SELECT media_role, label_set, label, annotator, count(*) FROM annotation WHERE stimulus_id = ?"
        " AND deleted_at IS NULL AND label IS NOT NULL GROUP BY ALL ORDER BY ALL", [stimulus_id]).fetchall()]


def find_run(cur: duckdb.DuckDBPyConnection, dataset_id: int, params: dict[str, Any],
             versions: dict[str, Any]) -> CueRun | None:
    """The latest run of this dataset made with exactly these parameters and versions."""
    rows = cur.execute("SELECT id, params, versions FROM cue_run WHERE dataset_id = ? ORDER BY id DESC",
                       [dataset_id]).fetchall()
    for run_id, found_params, found_versions in rows:
        if (_canonical(json.loads(found_params)) == _canonical(params)
                and _canonical(json.loads(found_versions)) == _canonical(versions)):
            return CueRun(run_id, dataset_id, params, versions)
    return None


def create_run(cur: duckdb.DuckDBPyConnection, dataset_id: int, params: dict[str, Any],
               versions: dict[str, Any]) -> CueRun:
    run_id = cur.execute("INSERT INTO cue_run (dataset_id, params, versions) VALUES (?, ?, ?) RETURNING id",
                         [dataset_id, _canonical(params), _canonical(versions)]).fetchall()[0][0]
    return CueRun(run_id, dataset_id, params, versions)


def measured_stimuli(cur: duckdb.DuckDBPyConnection, run_id: int) -> set[int]:
    return {r[0] for r in cur.execute("SELECT DISTINCT stimulus_id FROM cue_measure WHERE run_id = ?",
                                      [run_id]).fetchall()}


def write_measures(cur: duckdb.DuckDBPyConnection, run_id: int, stimulus_id: int,
                   rows: list[tuple[str, str, float]]) -> None:
    """Replace the stimulus's measures in this run (one frame insert, not a row at a time)."""
    cur.execute("DELETE FROM cue_measure WHERE run_id = ? AND stimulus_id = ?", [run_id, stimulus_id])
    if not rows:
        return
    frame = pl.DataFrame({"run_id": [run_id] * len(rows), "stimulus_id": [stimulus_id] * len(rows),
                          "subject": [r[0] for r in rows], "cue": [r[1] for r in rows],
                          "value": [float(r[2]) for r in rows]},
                         schema={"run_id": pl.Int64, "stimulus_id": pl.Int64, "subject": pl.Utf8,
                                 "cue": pl.Utf8, "value": pl.Float64})
    cur.register("cue_rows", frame.to_arrow())
    try:
        cur.execute("INSERT INTO cue_measure SELECT run_id, stimulus_id, subject, cue,"
                    " CASE WHEN isnan(value) THEN NULL ELSE value END FROM cue_rows")
    finally:
        cur.unregister("cue_rows")


def drop_older_runs(cur: duckdb.DuckDBPyConnection, dataset_id: int, keep_run_id: int) -> None:
    """Forget the dataset's other runs, so one set of measures answers for it."""
    old = [r[0] for r in cur.execute("SELECT id FROM cue_run WHERE dataset_id = ? AND id <> ?",
                                     [dataset_id, keep_run_id]).fetchall()]
    for run_id in old:
        cur.execute("DELETE FROM cue_measure WHERE run_id = ?", [run_id])
        cur.execute("DELETE FROM cue_run WHERE id = ?", [run_id])


def latest_run(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> CueRun | None:
    rows = cur.execute("SELECT id, params, versions FROM cue_run WHERE dataset_id = ? ORDER BY id DESC LIMIT 1",
                       [dataset_id]).fetchall()
    if not rows:
        return None
    return CueRun(rows[0][0], dataset_id, json.loads(rows[0][1]), json.loads(rows[0][2]))


def measures_frame(cur: duckdb.DuckDBPyConnection, run_id: int) -> pl.DataFrame:
    """stimulus_id, external_id, kind, subject, cue, value (NULL where undefined) of a run."""
    return cur.sql(
        "SELECT c.stimulus_id, s.external_id, s.kind, c.subject, c.cue, c.value FROM cue_measure c"
        " JOIN stimulus s ON s.id = c.stimulus_id WHERE c.run_id = ? ORDER BY c.stimulus_id, c.subject, c.cue",
        params=[run_id]).pl()


def stimulus_measures(cur: duckdb.DuckDBPyConnection, stimulus_id: int) -> list[tuple[str, str, float | None]]:
    """(subject, cue, value) of the stimulus in its dataset's latest run."""
    return [tuple(r) for r in cur.execute(
        "SELECT c.subject, c.cue, c.value FROM cue_measure c JOIN stimulus s ON s.id = c.stimulus_id"
        " WHERE c.stimulus_id = ? AND c.run_id = (SELECT max(id) FROM cue_run r WHERE r.dataset_id = s.dataset_id)"
        " ORDER BY 1, 2", [stimulus_id]).fetchall()]


def outcomes_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """Who got each stimulus right: one row per (stimulus, judge) with n judged and n correct.

    `who` is `humans` (with `condition` the rating condition) or a model name (with `condition` the
    run's modality). Rows without a correctness verdict are left out."""
    return cur.sql(
        "SELECT h.stimulus_id, 'humans' AS who, coalesce(h.condition, '') AS condition, count(*) AS n,"
        " sum(CAST(h.correct AS INTEGER)) AS n_correct FROM human_rating h JOIN stimulus s ON s.id = h.stimulus_id"
        " WHERE s.dataset_id = ? AND h.correct IS NOT NULL GROUP BY ALL"
        " UNION ALL "
        "SELECT p.stimulus_id, m.name AS who, r.modality AS condition, count(*) AS n,"
        " sum(CAST(p.correct AS INTEGER)) AS n_correct FROM prediction_all p JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id JOIN stimulus s ON s.id = p.stimulus_id"
        " WHERE s.dataset_id = ? AND p.correct IS NOT NULL GROUP BY ALL ORDER BY 1, 2, 3",
        params=[dataset_id, dataset_id]).pl()


def script_recognition_frame(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> pl.DataFrame:
    """For EchoMind: whether each model answered the questions about a script's voice correctly.

    One row per (script stimulus, model, task) with n questions and n correct; a question names its
    script in `meta.script` (the script's external id)."""
    return cur.sql(
        "SELECT sc.id AS stimulus_id, m.name AS who, r.modality AS condition, count(*) AS n,"
        " sum(CAST(p.correct AS INTEGER)) AS n_correct FROM stimulus q"
        " JOIN stimulus sc ON sc.dataset_id = q.dataset_id AND sc.external_id = json_extract_string(q.meta, '$.script')"
        " JOIN prediction p ON p.stimulus_id = q.id JOIN run r ON r.id = p.run_id JOIN model m ON m.id = r.model_id"
        " WHERE q.dataset_id = ? AND p.correct IS NOT NULL GROUP BY ALL ORDER BY 1, 2, 3",
        params=[dataset_id]).pl()


def stimulus_kinds(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> dict[int, tuple[str, str, str | None]]:
    """id -> (external id, kind, ground truth) of the dataset's stimuli."""
    return {r[0]: (r[1], r[2], r[3]) for r in cur.execute(
        "SELECT id, external_id, kind, ground_truth FROM stimulus WHERE dataset_id = ?", [dataset_id]).fetchall()}
