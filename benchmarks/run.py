"""Print every performance figure as `name value unit` (each the median of several runs).

    python benchmarks/run.py            all figures
    python benchmarks/run.py browser    only the modules whose name contains 'browser'
"""
from __future__ import annotations

import importlib
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main(argv: list[str]) -> int:
    wanted = argv[0] if argv else ""
    modules = sorted(p.stem for p in HERE.glob("bench_*.py") if wanted in p.stem)
    failed = 0
    for name in modules:
        started = time.perf_counter()
        try:
            figures = importlib.import_module(name).run()
        except Exception:  # one broken benchmark must not hide the others' figures
            failed += 1
            print(f"# {name} failed:\n" + "".join("#   " + line for line in traceback.format_exc().splitlines(True)),
                  file=sys.stderr)
            continue
        for figure, value, unit in figures:
            print(f"{figure} {value:.4g} {unit}", flush=True)
        # on the error stream, so the figures stay `name value unit`: which module makes the whole run long
        print(f"# {name} took {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # every figure is out; skip interpreter teardown, where libVLC and Qt objects left by the benchmarks
    # have been seen to crash and turn a complete run into exit code 139
    os._exit(code)
