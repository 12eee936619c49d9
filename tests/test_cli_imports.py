"""The command line's modules import one way: the dispatcher imports the verbs, the verbs import what they share,
and nothing imports the dispatcher back (a cycle makes import order matter and hides what a verb needs)."""
from __future__ import annotations

import grimp


def test_no_import_cycle_among_the_command_line_modules():
    graph = grimp.build_graph("app", "storage", include_external_packages=False)
    modules = sorted(m for m in graph.modules if m == "app.cli" or m.startswith("app.cli_"))
    assert {"app.cli", "app.cli_store", "app.cli_list"} <= set(modules)
    both_ways = [(a, b) for a in modules for b in modules
                 if a < b and graph.chain_exists(a, b) and graph.chain_exists(b, a)]
    assert both_ways == []
    assert graph.find_modules_directly_imported_by("app.cli_store") & set(modules) == set()
