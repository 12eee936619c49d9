"""No two modules of the project import each other, directly or through others: every import points one way,
so import order never matters and a module's imports say what it needs. The graph is grimp's, built from the
source without importing it (the Qt-free run reads the widgets' imports too); it holds every import statement,
those inside functions and under `TYPE_CHECKING` included, so deferring an import does not hide a cycle."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

HERE = Path(__file__).resolve().parent

PACKAGES = ("app", "storage", "widgets", "resources")


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The graph's cycles, each the modules that reach each other through imports (a strongly connected
    component of more than one module), sorted."""
    cycles: set[tuple[str, ...]] = set()
    for module in graph.modules:
        together = graph.find_upstream_modules(module) & graph.find_downstream_modules(module)
        if together:
            cycles.add(tuple(sorted(together | {module})))
    return sorted(map(list, cycles))


def described(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    """One cycle as the imports that close it, each with its module, line and statement."""
    inside = set(cycle)
    lines = [f"{len(cycle)} modules import each other: {', '.join(cycle)}"]
    for importer in cycle:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & inside):
            for detail in graph.get_import_details(importer=importer, imported=imported):
                lines.append(f"  {importer}:{detail['line_number']} {detail['line_contents']}")
    return "\n".join(lines)


def cycles_report() -> str:
    """Every cycle among the project's modules, described; empty when there is none."""
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False)
    missing = {"app.dashboard", "app.beliefs.replay", "storage.validation", "widgets.race_view"} - graph.modules
    assert not missing, f"the graph lacks {sorted(missing)}"
    # an import inside a function (read on the worker, after the first paint) and one under TYPE_CHECKING
    assert graph.direct_import_exists(importer="app.dashboard_cache", imported="app.dashboard")
    assert graph.direct_import_exists(importer="app.benchmarks.ncp", imported="app.analysis_frames")
    return "\n".join(described(graph, cycle) for cycle in import_cycles(graph))


def test_no_import_cycle_between_the_project_s_modules():
    # built in an interpreter of its own: the Qt-free run makes the widgets package impossible to find
    script = "import sys; sys.path.insert(0, 'tests'); import test_import_cycles as t; print(t.cycles_report())"
    run = subprocess.run([sys.executable, "-c", script], cwd=HERE.parent, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "", run.stdout


def test_a_cycle_is_found_through_a_deferred_import_and_named_by_its_lines():
    # the graph as it stood before the replay's JSON moved out: the replay imported the goals inside a function
    graph = grimp.ImportGraph()
    for module in ("app.beliefs.goals", "app.beliefs.replay", "app.beliefs.engine"):
        graph.add_module(module)
    graph.add_import(importer="app.beliefs.goals", imported="app.beliefs.replay", line_number=17,
                     line_contents="from app.beliefs.replay import BeliefState")
    graph.add_import(importer="app.beliefs.replay", imported="app.beliefs.goals", line_number=302,
                     line_contents="from app.beliefs.goals import evaluate_goal")
    graph.add_import(importer="app.beliefs.goals", imported="app.beliefs.engine", line_number=16,
                     line_contents="from app.beliefs.engine import ROOM")
    [cycle] = import_cycles(graph)
    assert cycle == ["app.beliefs.goals", "app.beliefs.replay"]
    assert described(graph, cycle).splitlines()[1:] == [
        "  app.beliefs.goals:17 from app.beliefs.replay import BeliefState",
        "  app.beliefs.replay:302 from app.beliefs.goals import evaluate_goal"]
