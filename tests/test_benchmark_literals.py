"""A benchmark is one module: outside `app/benchmarks/` and the readers in `storage/importers/`, nothing
compares against a benchmark's or a kind of stimulus's name (==, !=, in, not in, match/case). The rest of the
app asks the profile (`app.benchmarks.profile_for`, `kind_profile`) instead, so a fifth benchmark needs no
edit elsewhere. Checked on the source's syntax trees, without importing Qt."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from app.benchmarks import kinds, profiles

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "widgets", "storage")
HOMES = (Path("app/benchmarks"), Path("storage/importers"))
# Media roles share the media kinds' names (`storage.importers.generic.media_role`): `m.role == "audio"` is no
# kind's rule, so these count only where the comparison speaks of kinds.
MEDIA_ROLES = frozenset({"audio", "video"})


def names() -> tuple[set[str], set[str]]:
    """(the registered kinds' names, the registered benchmarks' names)."""
    return {k.name for k in kinds()}, set(profiles())


def _strings(node: ast.AST) -> list[str]:
    """The string constants a compared operand is, or holds (a tuple, list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for element in node.elts for s in _strings(element)]
    return []


def _pattern_strings(pattern: ast.pattern) -> list[str]:
    if isinstance(pattern, ast.MatchValue):
        return _strings(pattern.value)
    if isinstance(pattern, ast.MatchOr):
        return [s for p in pattern.patterns for s in _pattern_strings(p)]
    return []


def _named(literals: list[str], others: list[ast.AST], kind_names: set[str], benchmark_names: set[str]) -> list[str]:
    """The literals that name a kind, or a benchmark where what they are compared with speaks of benchmarks
    (a CLI verb may share a benchmark's name: `verb == "ncp"` is no benchmark's rule)."""
    texts = [ast.unparse(o).lower() for o in others]
    about_benchmarks = any("bench" in t for t in texts)
    about_kinds = any("kind" in t for t in texts)
    return [s for s in literals if (s in kind_names and (s not in MEDIA_ROLES or about_kinds))
            or (s in benchmark_names and about_benchmarks)]


def comparisons(source: str, kind_names: set[str], benchmark_names: set[str]) -> Iterator[tuple[int, str]]:
    """(line, text) of each comparison in `source` against a kind's or a benchmark's name."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                found = _named(_strings(operand), [o for o in operands if o is not operand], kind_names,
                               benchmark_names)
                if found:
                    yield node.lineno, ast.unparse(node)
                    break
        elif isinstance(node, ast.Match):
            for case in node.cases:
                if _named(_pattern_strings(case.pattern), [node.subject], kind_names, benchmark_names):
                    yield case.pattern.lineno, f"match {ast.unparse(node.subject)}: case {ast.unparse(case.pattern)}"


def offending(root: Path = ROOT) -> list[str]:
    """Every comparison against a kind's or a benchmark's name outside their homes, as "path:line: text"."""
    kind_names, benchmark_names = names()
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if any(relative.is_relative_to(home) for home in HOMES):
                continue
            for line, text in comparisons(path.read_text(encoding="utf-8"), kind_names, benchmark_names):
                found.append(f"{relative}:{line}: {text}")
    return found


def test_no_benchmark_or_kind_name_is_compared_outside_the_benchmarks_and_their_readers():
    assert offending() == []


def test_a_planted_comparison_of_each_form_is_found():
    kind_names, benchmark_names = names()
    planted = ('if detail.kind == "echomind_mcq":\n    pass\n'
               'shown = kind in ("ncp_task", "story")\n'
               'if dataset.benchmark != "friendbench":\n    pass\n'
               'match detail.kind:\n    case "agentviss_scene" | "dyad":\n        pass\n'
               'if verb == "ncp":\n    pass\n'
               'if event.kind == "play_state":\n    pass\n'
               'if m.role == "audio" or kind == "video":\n    pass\n')
    assert sorted(line for line, _ in comparisons(planted, kind_names, benchmark_names)) == [1, 3, 4, 7, 13]


def test_a_comparison_planted_in_a_copy_of_the_tree_is_named_by_file_and_line(tmp_path):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "widgets" / "planted.py").write_text('def shown(detail):\n    return detail.kind == "echomind_script"\n')
    (tmp_path / "app" / "benchmarks").mkdir()
    (tmp_path / "app" / "benchmarks" / "home.py").write_text('def mine(detail):\n    return detail.kind == "echomind_script"\n')
    assert offending(tmp_path) == ["widgets/planted.py:2: detail.kind == 'echomind_script'"]
