"""Reading a familiar/stranger verdict out of a 4 MB reply, as scoring a big live answer does.

`friendbench_parse_4mb_mixed_ms` is the live benchmark's answer (both labels in every line: settled in the
first piece); `friendbench_parse_4mb_one_way_ms` a reply that points one way throughout, so every piece is
read; `friendbench_parse_longest_piece_ms` the longest the interpreter is held at once (one 64 KB piece), what
decides whether the window stalls. The baseline is one case-insensitive pass of a single label word over
the same 4 MB, timed in the same run.
"""
from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable

from app.benchmarks.friendbench import labels_in, parse_familiarity

SIZE = 4 * 1024 * 1024
REPEATS = 5
MIXED = "The two speakers overlap and laugh, which strangers rarely do; I say familiar.\n"
ONE_WAY = "They are not familiar with each other, and they have never met, I think.\n"


def _median_ms(work: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def run() -> list[tuple[str, float, str]]:
    mixed = MIXED * (SIZE // len(MIXED))
    one_way = ONE_WAY * (SIZE // len(ONE_WAY))
    piece = one_way[:65536]
    word = re.compile(r"\bfamiliar\b", re.IGNORECASE)
    return [
        ("friendbench_parse_4mb_mixed_ms", _median_ms(lambda: parse_familiarity(mixed)), "ms"),
        ("friendbench_parse_4mb_one_way_ms", _median_ms(lambda: parse_familiarity(one_way)), "ms"),
        ("friendbench_parse_longest_piece_ms", _median_ms(lambda: labels_in(piece)), "ms"),
        ("friendbench_one_regex_pass_baseline_4mb_ms", _median_ms(lambda: word.findall(one_way)), "ms"),
    ]


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name} {value:.2f} {unit}")
