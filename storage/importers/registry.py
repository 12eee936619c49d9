"""The one list of importers, shared by the GUI, the command line and the tests.

A package adds the reader of its benchmark's release through the entry-point group `thinslice.importers`
(`name = module:ImporterClass`), beside its profile in `thinslice.benchmarks`; its readers come after the
built-ins, before the generic table reader that takes whatever no other reader claims.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

from storage.errors import ImportFailed
from storage.importers.common import Importer

GROUP = "thinslice.importers"


def importers() -> list[Importer]:
    # imported here so that a broken importer module names itself instead of breaking the registry import
    from storage.importers.agentviss import AgentVissImporter
    from storage.importers.echomind import EchoMindImporter
    from storage.importers.exploretom import ExploreToMImporter, NcpImporter
    from storage.importers.friendbench import FriendBenchImporter
    from storage.importers.generic import GenericImporter
    from storage.importers.seamless import SeamlessImporter

    return [FriendBenchImporter(), SeamlessImporter(), EchoMindImporter(), AgentVissImporter(),
            ExploreToMImporter(), NcpImporter(), *_installed(), GenericImporter()]


@cache
def _installed() -> tuple[Importer, ...]:
    """The readers installed packages declare, read once per process: looking entry points up scans every
    installed distribution, and `get_importer` and `detect_importer` ask for the list on every import."""
    from importlib.metadata import entry_points

    installed: list[Importer] = []
    for point in entry_points(group=GROUP):
        importer = point.load()()
        if not all(hasattr(importer, part) for part in ("kind", "title", "detect", "plan")):
            raise ImportFailed(f"the {GROUP} entry point {point.name!r} ({point.value}) is no importer: it needs"
                               " a kind, a title, detect() and plan()")
        installed.append(importer)
    return tuple(installed)


def get_importer(kind: str) -> Importer:
    for importer in importers():
        if importer.kind == kind:
            return importer
    known = ", ".join(i.kind for i in importers())
    raise ImportFailed(f"Unknown import kind '{kind}'; known kinds: {known}, auto")


def detect_importer(path: Path) -> Importer:
    """The importer most confident that it reads `path` (the generic one as a last resort)."""
    scored = sorted(((imp.detect(path), i, imp) for i, imp in enumerate(importers())),
                    key=lambda t: (-t[0], t[1]))
    best_score, _, best = scored[0]
    if best_score <= 0:
        raise ImportFailed(f"Cannot tell what {path} is; choose a kind (thinslice import --list)")
    return best
