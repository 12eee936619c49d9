"""The one list of importers, shared by the GUI, the command line and the tests."""
from __future__ import annotations

from pathlib import Path

from storage.errors import ImportFailed
from storage.importers.common import Importer


def importers() -> list[Importer]:
    # imported here so that a broken importer module names itself instead of breaking the registry import
    from storage.importers.agentviss import AgentVissImporter
    from storage.importers.echomind import EchoMindImporter
    from storage.importers.exploretom import ExploreToMImporter, NcpImporter
    from storage.importers.friendbench import FriendBenchImporter
    from storage.importers.generic import GenericImporter
    from storage.importers.seamless import SeamlessImporter

    return [FriendBenchImporter(), SeamlessImporter(), EchoMindImporter(), AgentVissImporter(),
            ExploreToMImporter(), NcpImporter(), GenericImporter()]


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
