"""Start Thinslice: a command-line verb, a screenshot, or the app."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from app.cli import dispatch
    code = dispatch(argv)
    if code is not None:
        return code
    from widgets.gui import run_gui
    return run_gui(argv)


if __name__ == "__main__":
    sys.exit(main())
