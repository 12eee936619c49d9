"""The command line's modules import one way: the dispatcher imports the verbs, the verbs import what they share,
and what they share imports no verb nor the dispatcher (that no module imports the dispatcher back, or any module
another that imports it, is `test_import_cycles`)."""
from __future__ import annotations

import grimp


def test_the_command_line_s_shared_part_imports_no_verb():
    graph = grimp.build_graph("app", "storage", include_external_packages=False)
    modules = sorted(m for m in graph.modules if m == "app.cli" or m.startswith("app.cli_"))
    assert {"app.cli", "app.cli_store", "app.cli_list"} <= set(modules)
    assert graph.find_modules_directly_imported_by("app.cli_store") & set(modules) == set()
