"""Each cue against who got the stimulus right, and EchoMind's voices against each other.

For a judge (humans pooled, humans in one condition, one model in one modality) a stimulus is *right*
when more than half of the judge's verdicts on it are correct and *wrong* when fewer than half are;
a tie is left out of the two groups but kept in the correlation. For every cue (the stimulus-level value,
subject `all`) a comparison gives both groups' values (with their stimuli, to open them), Cliff's delta
of right against wrong with Newcombe's continuity-corrected score interval (app/cues/stats.py), the
Mann-Whitney p (exact for small groups without ties, as scipy's "auto"), Spearman's rho with the
per-stimulus accuracy and its p, and both p-values adjusted for the number of cues compared for that
judge (Holm by default, or Benjamini-Hochberg). A labelled cue counts 0 on a measured stimulus that has
no such label. A cue with one value on all of a judge's right and wrong stimuli "does not vary": it gets
no delta, p or interval (and its p is left out of the adjustment). A comparison with a group under
SMALL_GROUP stimuli is flagged `small_group`; a group under MIN_INTERVAL_GROUP gets no interval.

For EchoMind scripts, each cue of the target voice is set against the neutral and the alternative voice
of the same script; where the attribute implies a direction (a whisper is quieter and less voiced than
the neutral reading) the row says whether the target went that way. The target-minus-neutral
differences are also compared between scripts whose attribute a model recognised in the questions
about it and scripts where it did not.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import polars as pl

from app.benchmarks import kind_profile
from app.cues import conversation as turn_taking
from app.cues.acoustics import CHANNELS
from app.cues.measures import CUES, EGEMAPS_PREFIX, LABEL_PREFIX, WHOLE
from app.cues.stats import (CONFIDENCE, CORRECTIONS, EXACT_MAX_SMALLER, MIN_INTERVAL_GROUP, SMALL_GROUP, adjust,
                            cliffs_delta, cliffs_delta_interval, mann_whitney_p, spearman)
from storage import cues as cue_store
from storage.lookups import datasets as list_datasets
from storage.store import Store

HUMANS = "humans"
POOLED = "pooled"
VOICE_SUBJECTS = ("target", "neutral", "alternative")
# What an EchoMind attribute implies for the target voice against the neutral reading of the same script:
# cue -> +1 (higher) or -1 (lower). Attributes not listed imply nothing measurable here.
ATTRIBUTE_DIRECTIONS: dict[str, dict[str, int]] = {
    "whisper": {"intensity_mean_db": -1, "voiced_fraction": -1},
    "shout": {"intensity_mean_db": +1, "pitch_mean_hz": +1},
    "fast pace": {"duration_s": -1},
    "slow pace": {"duration_s": +1},
    "sad voice": {"pitch_mean_hz": -1, "pitch_range_st": -1},
    "happy voice": {"pitch_mean_hz": +1, "pitch_range_st": +1},
    "child": {"pitch_mean_hz": +1},
    "hoarse": {"voiced_fraction": -1},
    "breathless": {"voiced_fraction": -1},
    "sigh": {"duration_s": +1},
    "laughter": {"duration_s": +1},
    "sobbing": {"duration_s": +1},
    "rain": {"intensity_sd_db": -1},
    "sea waves": {"intensity_sd_db": -1},
    "crowd": {"intensity_sd_db": -1},
}
METHODS = {
    "effect_size": (f"Cliff's delta, P(right > wrong) - P(right < wrong) over all pairs of stimuli, with a "
                    f"{CONFIDENCE:.0%} interval by Newcombe's (2006, method 5) score interval for P(right > wrong) "
                    f"+ P(tie)/2, continuity-corrected by 1/(n_right n_wrong); it covered a known delta in at "
                    f"least 94% of simulated data sets at every pair of group sizes tried from 2 vs 2 to 30 vs 30; "
                    f"no interval for a group under {MIN_INTERVAL_GROUP}"),
    "test": (f"Mann-Whitney U, two-sided: exact distribution of U when the smaller group has at most "
             f"{EXACT_MAX_SMALLER} stimuli and no values tie, else normal approximation with tie and continuity "
             f"corrections (scipy.stats.mannwhitneyu, method 'auto')"),
    "correlation": "Spearman's rank correlation with per-stimulus accuracy, two-sided t approximation",
    "groups": "right: more than half of the judge's verdicts correct; wrong: fewer than half; ties in neither",
    "small_groups": (f"comparisons with a group under {SMALL_GROUP} stimuli are flagged small_group: "
                     f"their delta rests on few pairs and their interval is wide"),
    "constant": ("a cue with one value on all of a judge's right and wrong stimuli does not vary: "
                 "no delta, p or interval"),
}


@dataclass(frozen=True)
class Comparison:
    """One cue against one judge's correctness."""

    who: str
    condition: str
    cue: str
    right: list[float]
    wrong: list[float]
    right_stimuli: list[int]
    wrong_stimuli: list[int]
    delta: float
    ci_low: float
    ci_high: float
    p: float
    p_adjusted: float
    rho: float
    rho_p: float
    rho_p_adjusted: float
    n_stimuli: int
    varies: bool = True

    @property
    def judge(self) -> str:
        return f"{self.who} · {self.condition}"

    @property
    def small_group(self) -> bool:
        """A group under SMALL_GROUP stimuli (delta rests on few pairs)."""
        return min(len(self.right), len(self.wrong)) < SMALL_GROUP

    @property
    def flag(self) -> str:
        """What a reader must know before reading the numbers ("" when nothing)."""
        if not self.varies:
            return "does not vary"
        if self.small_group:
            return f"group under {SMALL_GROUP}"
        return ""


def _fmt(value: float, digits: int = 2) -> str:
    return "–" if not _finite(value) else f"{value:.{digits}f}"


def interval_text(c: Comparison) -> str:
    """The interval as the table, the plot and the command line show it: never a precise-looking [0, 0]
    for a cue that does not vary, and saying why there is none."""
    if not c.varies:
        return "does not vary"
    if not (_finite(c.ci_low) and _finite(c.ci_high)):
        return f"none (group under {MIN_INTERVAL_GROUP})" if c.right and c.wrong else "none (a group is empty)"
    return f"[{c.ci_low:.2f}, {c.ci_high:.2f}]"


def summary_lines(c: Comparison) -> list[str]:
    """A comparison in two lines: delta with its interval and adjusted p; n with its flag."""
    n = f"n {len(c.right)} right / {len(c.wrong)} wrong"
    if not c.varies:
        return ["does not vary: no delta, p or interval", n]
    return [f"δ = {_fmt(c.delta)} {interval_text(c)}, p adj. {_fmt(c.p_adjusted, 3)}",
            n + (f" · {c.flag}" if c.flag else "")]


def summary_text(c: Comparison) -> str:
    """A comparison in one line (see `summary_lines`)."""
    return "; ".join(summary_lines(c))


def _finite(value: Any) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def default_cues(available: list[str], include_egemaps: bool = False) -> list[str]:
    """The cues compared: the catalogue's, then labelled cue counts, then (if asked) eGeMAPS."""
    chosen = [c for c in CUES if c in available]
    chosen += sorted(c for c in available if c.startswith(LABEL_PREFIX))
    if include_egemaps:
        chosen += sorted(c for c in available if c.startswith(EGEMAPS_PREFIX))
    return chosen


def judge_accuracy(outcomes: pl.DataFrame) -> dict[tuple[str, str], dict[int, float]]:
    """(who, condition) -> stimulus -> share correct; humans also pooled over conditions."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    if outcomes.is_empty():
        return out
    for row in outcomes.iter_rows(named=True):
        out.setdefault((row["who"], row["condition"] or ""), {})[row["stimulus_id"]] = row["n_correct"] / row["n"]
    humans = outcomes.filter(pl.col("who") == HUMANS)
    if not humans.is_empty():
        pooled = humans.group_by("stimulus_id").agg(pl.col("n").sum(), pl.col("n_correct").sum())
        out[(HUMANS, POOLED)] = {r["stimulus_id"]: r["n_correct"] / r["n"] for r in pooled.iter_rows(named=True)}
    return out


def compare_cues(values: dict[str, dict[int, float]], accuracy: dict[tuple[str, str], dict[int, float]],
                 cues: list[str], correction: str = "holm") -> list[Comparison]:
    """Every cue against every judge; p-values adjusted within each judge over its cues."""
    out: list[Comparison] = []
    # humans first, pooled before each condition, then the models by name and modality
    for (who, condition), acc in sorted(accuracy.items(),
                                        key=lambda kv: (kv[0][0] != HUMANS, kv[0][1] != POOLED, kv[0])):
        rows = []
        for cue in cues:
            by_stimulus = {s: v for s, v in values.get(cue, {}).items() if _finite(v) and s in acc}
            right = sorted((s for s in by_stimulus if acc[s] > 0.5))
            wrong = sorted((s for s in by_stimulus if acc[s] < 0.5))
            xs, ys = [by_stimulus[s] for s in right], [by_stimulus[s] for s in wrong]
            ordered = sorted(by_stimulus)
            varies = len(set(xs + ys)) > 1
            nan = float("nan")
            corr = spearman([by_stimulus[s] for s in ordered], [acc[s] for s in ordered])  # NaN when constant
            if varies:
                ci = cliffs_delta_interval(xs, ys)
                numbers = [cliffs_delta(xs, ys), ci.low if ci else nan, ci.high if ci else nan,
                           mann_whitney_p(xs, ys), corr.rho, corr.p]
            else:
                numbers = [nan, nan, nan, nan, corr.rho, corr.p]
            rows.append([who, condition, cue, xs, ys, right, wrong, *numbers, len(ordered), varies])
        p_adj = adjust([r[10] for r in rows], correction)
        rho_adj = adjust([r[12] for r in rows], correction)
        for r, pa, ra in zip(rows, p_adj, rho_adj):
            out.append(Comparison(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], pa,
                                  r[11], r[12], ra, r[13], r[14]))
    return out


@dataclass(frozen=True)
class VoiceContrast:
    """One cue of an EchoMind script's target voice against its neutral and alternative voices."""

    stimulus_id: int
    script: str
    attribute: str
    cue: str
    target: float | None
    neutral: float | None
    alternative: float | None
    expected: int  # +1 higher than neutral, -1 lower, 0 nothing implied
    as_expected: bool | None


def voice_contrasts(frame: pl.DataFrame, attributes: dict[int, str], cues: list[str]) -> list[VoiceContrast]:
    """Target against neutral and alternative, per script and cue."""
    per: dict[tuple[int, str], dict[str, float | None]] = {}
    names: dict[int, str] = {}
    for row in frame.filter(pl.col("subject").is_in(VOICE_SUBJECTS)).iter_rows(named=True):
        per.setdefault((row["stimulus_id"], row["cue"]), {})[row["subject"]] = row["value"]
        names[row["stimulus_id"]] = row["external_id"]
    out = []
    for stimulus_id in sorted(names):
        attribute = attributes.get(stimulus_id, "")
        directions = ATTRIBUTE_DIRECTIONS.get(attribute, {})
        for cue in cues:
            voices = per.get((stimulus_id, cue))
            if not voices or "target" not in voices:
                continue
            target, neutral = voices.get("target"), voices.get("neutral")
            expected = directions.get(cue, 0)
            verdict = None
            if expected and _finite(target) and _finite(neutral):
                verdict = (target - neutral) * expected > 0
            out.append(VoiceContrast(stimulus_id, names[stimulus_id], attribute, cue, target, neutral,
                                     voices.get("alternative"), expected, verdict))
    return out


def recognition_comparisons(contrasts: list[VoiceContrast], recognition: pl.DataFrame, cues: list[str],
                            correction: str = "holm") -> list[Comparison]:
    """Target-minus-neutral differences of scripts a model recognised (right) against those it did not."""
    diffs: dict[str, dict[int, float]] = {}
    for c in contrasts:
        if _finite(c.target) and _finite(c.neutral):
            diffs.setdefault(c.cue, {})[c.stimulus_id] = c.target - c.neutral
    return compare_cues(diffs, judge_accuracy(recognition), [c for c in cues if c in diffs], correction)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def comparison_json(c: Comparison, names: dict[int, str]) -> dict[str, Any]:
    out = {k: _clean(v) for k, v in asdict(c).items()}
    out["judge"] = c.judge
    out["n_right"], out["n_wrong"] = len(c.right), len(c.wrong)
    out["small_group"], out["flag"] = c.small_group, c.flag
    out["right_stimuli"] = [names.get(s, str(s)) for s in c.right_stimuli]
    out["wrong_stimuli"] = [names.get(s, str(s)) for s in c.wrong_stimuli]
    out["right_ids"], out["wrong_ids"] = c.right_stimuli, c.wrong_stimuli
    return out


@dataclass(frozen=True)
class DatasetComparison:
    dataset: str
    benchmark: str
    run: cue_store.CueRun | None
    comparisons: list[Comparison]
    voices: list[VoiceContrast]
    recognition: list[Comparison]
    names: dict[int, str]
    correction: str


def compare_dataset(store: Store, dataset_id: int, correction: str = "holm",
                    include_egemaps: bool = False) -> DatasetComparison:
    """Everything the cues view and `thinslice cues compare` show for one dataset."""
    cur = store.cursor()
    ds = next(d for d in list_datasets(cur) if d.id == dataset_id)
    kinds = cue_store.stimulus_kinds(cur, dataset_id)
    names = {s: k[0] for s, k in kinds.items()}
    run = cue_store.latest_run(cur, dataset_id)
    if run is None:
        return DatasetComparison(ds.name, ds.benchmark, None, [], [], [], names, correction)
    frame = cue_store.measures_frame(cur, run.id)
    whole = frame.filter(pl.col("subject") == WHOLE)
    cues = default_cues(whole["cue"].unique().to_list(), include_egemaps)
    values: dict[str, dict[int, float]] = {}
    for row in whole.iter_rows(named=True):
        values.setdefault(row["cue"], {})[row["stimulus_id"]] = row["value"]
    measured = set(whole["stimulus_id"].to_list())
    for cue in cues:
        if cue.startswith(LABEL_PREFIX):  # a measured stimulus without that label has none of it
            values[cue] = {s: values[cue].get(s, 0.0) for s in measured}
    comparisons = compare_cues(values, judge_accuracy(cue_store.outcomes_frame(cur, dataset_id)), cues, correction)
    attributes = {s: (k[2] or "") for s, k in kinds.items() if kind_profile(k[1], ds.benchmark).voices}
    voices, recognition = [], []
    if attributes:
        voice_cues = default_cues(frame["cue"].unique().to_list(), include_egemaps)
        voices = voice_contrasts(frame.filter(pl.col("stimulus_id").is_in(list(attributes))), attributes,
                                 voice_cues)
        recognition = recognition_comparisons(voices, cue_store.script_recognition_frame(cur, dataset_id),
                                              voice_cues, correction)
    return DatasetComparison(ds.name, ds.benchmark, run, comparisons, voices, recognition, names, correction)


def methods_block(result: DatasetComparison) -> dict[str, Any]:
    """How every number of a dataset's comparison was made: each statistic's definition, the cues'
    definitions, the measuring parameters and versions, the correction and the counts behind it all."""
    compared = result.comparisons + result.recognition
    order = {c: i for i, c in enumerate(CUES)}
    cues = sorted({c.cue for c in compared}, key=lambda c: (order.get(c, len(order)), c))
    return {
        **METHODS,
        "correction": CORRECTIONS[result.correction] + ", over the cues of each judge",
        "turn_taking": turn_taking.DEFINITION,
        "audio": CHANNELS,
        "cues": {c: CUES[c][1] if c in CUES else ("count of a label per stimulus" if c.startswith(LABEL_PREFIX)
                                                   else "openSMILE eGeMAPS v02 functional") for c in cues},
        "parameters": result.run.params if result.run else None,
        "versions": result.run.versions if result.run else None,
        "n": {
            "stimuli": len({s for c in result.comparisons for s in c.right_stimuli + c.wrong_stimuli}),
            "judges": len({c.judge for c in result.comparisons}),
            "cues": len({c.cue for c in result.comparisons}),
            "comparisons": len(result.comparisons),
            "with_a_group_under_5": sum(1 for c in result.comparisons if c.varies and c.small_group),
            "not_varying": sum(1 for c in result.comparisons if not c.varies),
        },
    }


def _flat(params: Any, prefix: str = "") -> list[str]:
    if isinstance(params, dict):
        return [part for k, v in params.items() for part in _flat(v, f"{prefix}{k} ")]
    if isinstance(params, list | tuple):
        return [f"{prefix.strip()} {', '.join(map(str, params))}"]
    return [f"{prefix.strip()} {params}"]


def methods_paragraph(result: DatasetComparison) -> str:
    """The methods of one dataset's comparison as a paragraph a researcher can paste into a paper's methods
    section (the same facts as `methods_block`)."""
    if result.run is None:
        return f"{result.dataset}: no cues measured."
    m = methods_block(result)
    versions = ", ".join(f"{k} {v}" for k, v in (m["versions"] or {}).items() if v)
    n = m["n"]
    return (
        f"Cues of {result.dataset} ({result.benchmark}) were measured with {versions}, with these settings: "
        f"{'; '.join(_flat(m['parameters']))}. Cues: "
        + "; ".join(f"{k}: {v}" for k, v in m["cues"].items())
        + f". Audio: {m['audio']}. Turn-taking: {m['turn_taking']}. For each judge, stimuli were grouped as {m['groups']}. "
        f"Effect size: {m['effect_size']}. Test: {m['test']}. Correlation: {m['correlation']}. p-values were "
        f"adjusted by {m['correction']}. {n['comparisons']} comparisons of {n['cues']} cues for {n['judges']} "
        f"judges over {n['stimuli']} stimuli; {n['with_a_group_under_5']} had a group under 5 stimuli "
        f"({m['small_groups']}); in {n['not_varying']} the cue did not vary ({m['constant']})."
    )


def dataset_json(result: DatasetComparison) -> dict[str, Any]:
    return {
        "dataset": result.dataset,
        "benchmark": result.benchmark,
        "measured": result.run is not None,
        "params": result.run.params if result.run else None,
        "versions": result.run.versions if result.run else None,
        "methods": methods_block(result),
        "comparisons": [comparison_json(c, result.names) for c in result.comparisons],
        "voices": [{k: _clean(v) for k, v in asdict(v).items()} for v in result.voices],
        "voice_recognition": [comparison_json(c, result.names) for c in result.recognition],
    }


def comparisons_frame(result: DatasetComparison) -> pl.DataFrame:
    """One row per judge and cue, as the cues view's table and its CSV export show it (NaN as null)."""
    rows = []
    for c in result.comparisons:
        rows.append({"judge": c.judge, "who": c.who, "condition": c.condition, "cue": c.cue,
                     "n_right": len(c.right), "n_wrong": len(c.wrong), "cliffs_delta": _clean(c.delta),
                     "ci_low": _clean(c.ci_low), "ci_high": _clean(c.ci_high), "p": _clean(c.p),
                     "p_adjusted": _clean(c.p_adjusted), "spearman_rho": _clean(c.rho), "rho_p": _clean(c.rho_p),
                     "rho_p_adjusted": _clean(c.rho_p_adjusted), "n_stimuli": c.n_stimuli, "flag": c.flag,
                     "right_stimuli": " ".join(result.names.get(s, str(s)) for s in c.right_stimuli),
                     "wrong_stimuli": " ".join(result.names.get(s, str(s)) for s in c.wrong_stimuli),
                     "correction": result.correction})
    schema = {"judge": pl.String, "who": pl.String, "condition": pl.String, "cue": pl.String, "n_right": pl.Int64,
              "n_wrong": pl.Int64, "cliffs_delta": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
              "p": pl.Float64, "p_adjusted": pl.Float64, "spearman_rho": pl.Float64, "rho_p": pl.Float64,
              "rho_p_adjusted": pl.Float64, "n_stimuli": pl.Int64, "flag": pl.String, "right_stimuli": pl.String,
              "wrong_stimuli": pl.String, "correction": pl.String}
    return pl.DataFrame(rows, schema=schema)
