"""`thinslice ncp replay TRACE.json`: replay an NCP-ExploreToM trace and print every step's state as JSON."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from app.beliefs.replay import TraceError, load_trace, replay_to_json


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice ncp replay",
        description="Replay a belief-state trace ({steps: [{action, args, kwargs}], goal?}) and print one JSON "
        "array with the world, first- and second-order state after every step.",
    )
    parser.add_argument("trace", help="trace JSON file, or - for standard input")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")
    return parser


def ncp_replay_main(argv: list[str]) -> int:
    """Run the replay command; returns the exit code (0 ok, 2 for an unreadable or malformed trace)."""
    try:
        options = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage message
        return int(exc.code or 0)
    source = options.trace
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{source}: cannot read the trace: {exc}", file=sys.stderr)
        return 2
    try:
        output = replay_to_json(load_trace(text))
    except TraceError as exc:
        print(f"{source}: {exc}", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(json.dumps(output, ensure_ascii=False, indent=options.indent) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (e.g. `| head`); not an error of the trace
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
