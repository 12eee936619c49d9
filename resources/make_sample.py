"""Rebuild the bundled synthetic sample in resources/sample/ (deterministic for a given seed).

    python resources/make_sample.py [--seed 7] [--only friendbench,echomind,agentviss,ncp]
"""
from __future__ import annotations

import argparse
import importlib
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

BUILDERS = ["friendbench", "echomind", "agentviss", "ncp"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default=",".join(BUILDERS))
    args = parser.parse_args(argv)
    for name in args.only.split(","):
        out = HERE / "sample" / name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        importlib.import_module(f"resources.sample_build.{name}").build(out, seed=args.seed)
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        print(f"{name}: {size / 1e6:.2f} MB in {out}")
    total = sum(p.stat().st_size for p in (HERE / "sample").rglob("*") if p.is_file())
    print(f"sample total: {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
