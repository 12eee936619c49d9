"""`thinslice ncp replay|story|answer`: the belief engine on the command line, JSON out.

    thinslice ncp replay TRACE.json          every step's world, first- and second-order state
    thinslice ncp story STORY.txt            the action trace a story structure tells (the JSON replay reads)
    thinslice ncp answer TRACE.json QUESTION the engine's answer to an ExploreToM question about the trace's end

FILE may be `-` for standard input. Exit 0 on success, 2 for input that cannot be read (naming the file and
the step, sentence or question at fault).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

from app.beliefs.questions import QuestionError, answer_question
from app.beliefs.replay import TraceError, load_trace, replay_steps
from app.beliefs.replay_json import replay_to_json
from app.beliefs.story import StoryParseError, story_trace

USAGE = "usage: thinslice ncp replay TRACE.json | ncp story STORY.txt | ncp answer TRACE.json QUESTION"


def _replay_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice ncp replay",
        description="Replay a belief-state trace ({steps: [{action, args, kwargs}], goal?}) and print one JSON "
        "array with the world, first- and second-order state after every step.",
    )
    parser.add_argument("trace", help="trace JSON file, or - for standard input")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")
    return parser


def _story_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice ncp story",
        description="Read an ExploreToM story structure (the tracker's sentences) and print its action trace "
        "as the JSON `thinslice ncp replay` reads.",
    )
    parser.add_argument("story", help="text file with the story structure, or - for standard input")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")
    return parser


def _answer_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="thinslice ncp answer",
        description="Answer an ExploreToM question from the state at the end of a trace: prints the answer, "
        "its order, the belief it read and whether that belief is a false one.",
    )
    parser.add_argument("trace", help="trace JSON file (as `ncp story` prints it), or - for standard input")
    parser.add_argument("question", help='the question, e.g. "In which container will Anne search for the ball?"')
    parser.add_argument("--params", default=None, help="the question's qprop=params, naming a state's type")
    parser.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")
    return parser


def ncp_main(argv: list[str]) -> int:
    """Dispatch `thinslice ncp SUBCOMMAND ...`; returns the exit code."""
    commands: dict[str, Callable[[list[str]], int]] = {
        "replay": ncp_replay_main, "story": ncp_story_main, "answer": ncp_answer_main}
    if not argv or argv[0] not in commands:
        print(USAGE, file=sys.stderr)
        return 2
    return commands[argv[0]](argv[1:])


def ncp_replay_main(argv: list[str]) -> int:
    """Run the replay command; returns the exit code (0 ok, 2 for an unreadable or malformed trace)."""
    options = _options(_replay_parser(), argv)
    if isinstance(options, int):
        return options
    text = _read(options.trace)
    if text is None:
        return 2
    try:
        output = replay_to_json(load_trace(text))
    except TraceError as exc:
        print(f"{options.trace}: {exc}", file=sys.stderr)
        return 2
    return _write(output, options.indent)


def ncp_story_main(argv: list[str]) -> int:
    """Run the story command; 2 names the sentence that no form fits."""
    options = _options(_story_parser(), argv)
    if isinstance(options, int):
        return options
    text = _read(options.story)
    if text is None:
        return 2
    try:
        output = story_trace(text)
    except StoryParseError as exc:
        print(f"{options.story}: {exc}", file=sys.stderr)
        return 2
    return _write(output, options.indent)


def ncp_answer_main(argv: list[str]) -> int:
    """Run the answer command; 2 for a trace that cannot be replayed or a question of no known template."""
    options = _options(_answer_parser(), argv)
    if isinstance(options, int):
        return options
    text = _read(options.trace)
    if text is None:
        return 2
    try:
        replay = replay_steps(load_trace(text))
        if not len(replay):
            raise TraceError("the trace has no steps, so there is no state to ask about")
        output = answer_question(replay, options.question, options.params).to_json()
    except TraceError as exc:
        print(f"{options.trace}: {exc}", file=sys.stderr)
        return 2
    except QuestionError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    return _write(output, options.indent)


def _options(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | int:
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage message
        return int(exc.code or 0)


def _read(source: str) -> str | None:
    try:
        return sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"{source}: cannot read the file: {exc}", file=sys.stderr)
        return None


def _write(output: Any, indent: int | None) -> int:
    try:
        sys.stdout.write(json.dumps(output, ensure_ascii=False, indent=indent) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader stopped early (e.g. `| head`); not an error of the input
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
