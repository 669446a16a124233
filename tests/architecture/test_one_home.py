"""Rules with one home each (issue 44 item 5), checked on the source (ast), so no module has to be imported:

- the split rule: a row's key (`row_keys`, the reader calls it) and the split it picks (`split_of`, the transform
  pass, the split statistics, `make_raw_dataset` and `verify` call it) are defined in reading/split_rule.py alone;
- a run's statistics are merged and written in one place: only statistics/assembly.py calls the functions that
  merge the analysis's partials and the splits' states (`summarize`, `candidate_counts`, `write_states`).
"""

from __future__ import annotations

import ast

from project_modules import MODULES

SPLIT_RULE = "skewless.pipelines.reading.split_rule"
ASSEMBLY = "skewless.pipelines.statistics.assembly"
# module -> its functions that merge statistics: only the assembly imports them
MERGING = {
    "skewless.pipelines.analyze.stats": {"summarize"},
    "skewless.pipelines.statistics.split_statistics": {"candidate_counts", "write_states"},
}


def _trees() -> dict[str, ast.Module]:
    return {module: ast.parse(path.read_text(), str(path)) for module, path in MODULES.items()}


def _defining(trees: dict[str, ast.Module], name: str) -> list[str]:
    """The modules that define a top-level function or class `name`."""
    return sorted(module for module, tree in trees.items()
                  if any(isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name for node in tree.body))


def _importing(trees: dict[str, ast.Module], source: str, names: set[str]) -> list[str]:
    """`module imports name` for each of `names` that a module imports from `source` (imports in functions too)."""
    return sorted(f"{module} imports {alias.name}" for module, tree in trees.items() for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.module == source
                  for alias in node.names if alias.name in names)


def test_the_split_rule_is_one_module():
    trees = _trees()
    for name in ("row_keys", "split_of"):
        assert _defining(trees, name) == [SPLIT_RULE], name


def test_a_runs_statistics_are_merged_in_one_module():
    trees = _trees()
    for source, names in MERGING.items():
        assert {name for name in names if _defining(trees, name) == [source]} == names, source
        outside = [found for found in _importing(trees, source, names) if not found.startswith(ASSEMBLY + " ")]
        assert not outside, "merge statistics through statistics/assembly.py's assemble_statistics:\n" + "\n".join(
            outside)


def test_the_checks_find_a_second_home():
    trees = {"a": ast.parse("def split_of(keys, fractions): pass"), "b": ast.parse("def split_of(): pass"),
             "c": ast.parse("def f():\n    from skewless.pipelines.analyze.stats import summarize, ColumnStats")}
    assert _defining(trees, "split_of") == ["a", "b"]
    assert _importing(trees, "skewless.pipelines.analyze.stats", {"summarize"}) == ["c imports summarize"]
