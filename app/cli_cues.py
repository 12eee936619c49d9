"""`thinslice cues compute|compare`: measure the voices and turn-taking of a dataset's stimuli once and
store them, then set every cue against who got each stimulus right.

    thinslice cues compute [--db PATH [--create]] [--dataset NAME] [--force] [--pitch-floor HZ] [--pitch-ceiling HZ]
                           [--time-step S] [--formants] [--no-egemaps]
    thinslice cues compare [--db PATH] [--dataset NAME] [--correction holm|bh] [--egemaps] [--json | --methods]

Progress goes to stderr; Ctrl+C stops the computation and keeps the stimuli already measured.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading

from app.benchmarks import profile_for
from app.cli_store import db_argument, open_cli_store
from app.cues.acoustics import PraatSettings
from app.cues.compare import compare_dataset, dataset_json, methods_paragraph
from app.cues.measures import CueSettings
from app.cues.service import CueDatasetNotFound, CuesCancelled, compute_cues
from app.cues.stats import CORRECTIONS
from storage.lookups import datasets as list_datasets
from storage.store import Store


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="thinslice cues", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    compute = sub.add_parser("compute", help="measure and store every stimulus's cues")
    compare = sub.add_parser("compare", help="set every cue against who got each stimulus right")
    for p in (compute, compare):
        db_argument(p)
        p.add_argument("--dataset", help="only this dataset (by name)")
    defaults = PraatSettings()
    compute.add_argument("--force", action="store_true", help="measure again even if already stored")
    compute.add_argument("--pitch-floor", type=float, default=defaults.pitch_floor_hz,
                         help="Praat's pitch floor in Hz (default %(default)s)")
    compute.add_argument("--pitch-ceiling", type=float, default=defaults.pitch_ceiling_hz,
                         help="Praat's pitch ceiling in Hz (default %(default)s)")
    compute.add_argument("--time-step", type=float, default=None,
                         help="Praat's time step in s (default: Praat's automatic choice)")
    compute.add_argument("--formants", action="store_true", help="also measure F1 and F2 (Praat's Burg method)")
    compute.add_argument("--no-egemaps", action="store_true", help="leave out openSMILE's eGeMAPS set")
    compare.add_argument("--correction", choices=sorted(CORRECTIONS), default="holm",
                         help="; ".join(f"{k} = {v}" for k, v in CORRECTIONS.items()))
    compare.add_argument("--egemaps", action="store_true", help="compare the eGeMAPS features too")
    compare.add_argument("--json", action="store_true", help="print one JSON document")
    compare.add_argument("--methods", action="store_true",
                         help="print each dataset's methods as a paragraph for a paper's methods section")
    return parser


def _write(text: str) -> None:
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (e.g. `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _compute(args: argparse.Namespace, store: Store) -> int:
    settings = CueSettings(PraatSettings(pitch_floor_hz=args.pitch_floor, pitch_ceiling_hz=args.pitch_ceiling,
                                         time_step_s=args.time_step),
                           formants=args.formants, egemaps=not args.no_egemaps)
    stop = threading.Event()
    try:
        summaries = compute_cues(store, args.dataset, settings,
                                 progress=lambda f, m: print(f"{f:4.0%} {m}", file=sys.stderr),
                                 should_cancel=stop.is_set, force=args.force)
    except KeyboardInterrupt:
        stop.set()
        print("thinslice cues: stopped; stimuli measured so far are kept", file=sys.stderr)
        return 130
    except CuesCancelled as exc:
        print(f"thinslice cues: {exc}", file=sys.stderr)
        return 130
    _write(json.dumps({"computed": [{"dataset": s.dataset, "run": s.run_id, "measured": s.measured,
                                     "already_stored": s.skipped, "failed": list(s.failed),
                                     "seconds": round(s.seconds, 3)} for s in summaries]}, indent=2))
    return 0


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def format_comparisons(doc: dict) -> str:
    """The comparison tables as readable text: one block per dataset, one line per judge and cue."""
    lines = []
    for ds in doc["datasets"]:
        lines.append(f"== {ds['dataset']} ({ds['benchmark']})")
        if not ds["measured"]:
            lines += ["  no cue measures stored: run `thinslice cues compute` first", ""]
            continue
        lines += [f"  {k}: {v}" for k, v in ds["methods"].items() if isinstance(v, str)]
        lines.append("  n: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in ds["methods"]["n"].items()))
        header = (f"  {'judge':<32} {'cue':<34} {'n r/w':>7} {'delta':>7} {'95% CI':>15} {'p adj':>7}"
                  f" {'rho':>7} {'p adj':>7}  note")
        lines += ["", header, "  " + "-" * (len(header) - 2)]
        for c in ds["comparisons"]:
            ci = (f"[{_number(c['ci_low'], 2)}, {_number(c['ci_high'], 2)}]" if c["ci_low"] is not None
                  else "-" if c["flag"] == "does not vary" else "none")
            lines.append(f"  {c['judge'][:32]:<32} {c['cue'][:34]:<34} {len(c['right']):>3}/{len(c['wrong']):<3}"
                         f" {_number(c['delta'], 2):>7} {ci:>15} {_number(c['p_adjusted']):>7}"
                         f" {_number(c['rho'], 2):>7} {_number(c['rho_p_adjusted']):>7}  {c['flag']}")
        if ds["voices"]:
            lines += ["", "  target voice against the neutral and alternative voices of the same script"]
            for v in ds["voices"]:
                if v["expected"]:
                    verdict = {True: "as expected", False: "NOT as expected", None: "-"}[v["as_expected"]]
                    lines.append(f"  {v['script']:<16} {v['attribute']:<12} {v['cue']:<22} target"
                                 f" {_number(v['target'], 2):>8} neutral {_number(v['neutral'], 2):>8}"
                                 f" alternative {_number(v['alternative'], 2):>8}  {verdict}")
        lines.append("")
    return "\n".join(lines)


def _compare(args: argparse.Namespace, store: Store) -> int:
    datasets = list_datasets(store.cursor())
    if args.dataset is not None:
        chosen = [d for d in datasets if d.name == args.dataset]
        if not chosen:
            raise CueDatasetNotFound(args.dataset, [d.name for d in datasets])
        datasets = chosen
    results = [compare_dataset(store, d.id, args.correction, args.egemaps) for d in datasets
               if args.dataset is not None or profile_for(d.benchmark).has_voices]
    if args.methods:
        _write("\n\n".join(methods_paragraph(r) for r in results))
        return 0
    doc = {"datasets": [dataset_json(r) for r in results]}
    _write(json.dumps(doc, indent=2, ensure_ascii=False) if args.json else format_comparisons(doc))
    return 0


def cues_main(argv: list[str]) -> int:
    """Run the command; 0 on success, 1 for an unknown dataset, 2 for bad arguments, 130 when stopped."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    store = open_cli_store(args.db, create=args.create, read_only=args.action == "compare")
    try:
        if args.action == "compute":
            return _compute(args, store)
        return _compare(args, store)
    except CueDatasetNotFound as exc:
        print(f"thinslice cues: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
