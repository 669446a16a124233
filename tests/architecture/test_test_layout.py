"""The tests' own rules: grouped by the part they test, sharing fixtures through conftest and helpers through
support modules, never through another test module."""

import ast

from example_job import REPO

TESTS = REPO / "tests"
GROUPS = {"architecture", "cli", "end_to_end", "hostile", "layers", "pipelines", "schemas", "transforms"}


def _test_modules():
    return sorted(TESTS.rglob("test_*.py"))


def test_every_test_module_sits_in_a_group_folder():
    misplaced = [str(path.relative_to(TESTS)) for path in _test_modules()
                 if path.parent == TESTS or path.relative_to(TESTS).parts[0] not in GROUPS]
    assert not misplaced, f"test modules outside tests/{{{','.join(sorted(GROUPS))}}}/: {misplaced}"


def test_no_test_module_imports_another_test_module_or_a_conftest():
    offending = []
    for path in _test_modules():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            offending += [f"{path.relative_to(TESTS)}:{node.lineno} imports {name}" for name in names
                          if name.split(".")[-1].startswith("test_") or name.split(".")[-1] == "conftest"]
    assert not offending, "share fixtures through conftest.py and helpers through a support module: " + "; ".join(
        offending)


def test_test_module_names_are_unique():
    # pytest puts each folder on sys.path (no __init__.py), so two modules of one name would shadow each other
    names = [path.name for path in _test_modules()]
    assert len(names) == len(set(names)), sorted(name for name in names if names.count(name) > 1)
