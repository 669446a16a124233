"""A function-level import is a start-up boundary (it defers loading a module until the function runs), so one of
a module the file already imports at its top defers nothing: it only hides what the file needs (issue 44 item 1).

A module loaded on first use is named at the file's top with `lazy_import` (skewless/lazy_imports.py); a
function-level import is left only where that cannot work, each listed in BOUNDARIES with its reason (and a comment
at the import), at most MOST_BOUNDARIES of them in the package.

Checked on the source (ast): a function's `import M` or `from M import name` where the file's module-level
imports name M is refused, unless each name is a submodule of M the top did not import (`from
skewless.pipelines.output import object_store` loads a module `from skewless.pipelines.output import files` did
not).
"""

from __future__ import annotations

import ast
import importlib.util

from project_modules import MODULES


def _module_level(tree: ast.Module) -> tuple[set[str], set[tuple[str, str]]]:
    """The modules the file imports at its top, and the (module, name) pairs of its `from` imports."""
    modules, names = set(), set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
            names |= {(node.module, alias.name) for alias in node.names}
    return modules, names


def _is_submodule(package: str, name: str) -> bool:
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):
        return False


def redundant_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of each function-level import of a module the source imports at its top."""
    tree = ast.parse(source)
    modules, names = _module_level(tree)
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                found += [(node.lineno, alias.name) for alias in node.names if alias.name in modules]
            elif isinstance(node, ast.ImportFrom) and node.module in modules and not node.level and any(
                    (node.module, alias.name) in names or not _is_submodule(node.module, alias.name)
                    for alias in node.names):
                found.append((node.lineno, node.module))
    return sorted(set(found))


# Every function-level import of the package: (module, the module it imports) -> why it cannot be a top-level
# import, eager or lazy. A lazy import loads its module when an attribute is read; these load one for what the import
# itself does, or must catch its ImportError where it happens.
BOUNDARIES = {
    ("skewless.keras_registry", "skewless.layers"):
        "imported for its side effect (the layers register with Keras) when Keras first looks up a skewless> name; "
        "at the top it would cost `import skewless` TensorFlow and Keras (several seconds)",
    ("skewless.pipelines.reading.sql", "duckdb"):
        "an optional dependency (the sql extra): a missing one is the job's one-line error, caught at the import",
    ("skewless.pipelines.reading.sql", "adbc_driver_postgresql.dbapi"):
        "an optional dependency (the sql extra): a missing one is the job's one-line error, caught at the import",
}
MOST_BOUNDARIES = 30


def function_imports(source: str) -> list[tuple[int, str, bool]]:
    """(line, module, whether a comment says why) of each import inside a function; `from . import x` by its dots."""
    lines = source.splitlines()
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = ["." * node.level + (node.module or "")]
            else:
                continue
            said = "#" in lines[node.lineno - 1] or lines[node.lineno - 2].strip().startswith("#")
            found += [(node.lineno, module, said) for module in modules]
    return sorted(set(found))


def test_the_check_finds_function_imports_and_their_comments():
    source = ("import json\n\ndef f():\n    # an optional dependency\n    import duckdb\n\n"
              "def g():\n    def inner():\n        from tensorflow import io  # why\n    import os\n")
    assert function_imports(source) == [(5, "duckdb", True), (9, "tensorflow", True), (10, "os", False)]


def test_function_level_imports_only_at_listed_boundaries_with_a_reason():
    found = {(name, module): (path, line, said) for name, path in sorted(MODULES.items())
             for line, module, said in function_imports(path.read_text(encoding="utf-8"))}
    unlisted = [f"{path}:{line} imports {module} inside a function: import it at the top, eagerly or with "
                f"lazy_import (or list it in BOUNDARIES with its reason)"
                for (name, module), (path, line, _) in found.items() if (name, module) not in BOUNDARIES]
    silent = [f"{path}:{line}: say at the import why {module} is imported there"
              for (name, module), (path, line, said) in found.items() if (name, module) in BOUNDARIES and not said]
    gone = [f"{name} no longer imports {module} inside a function: drop it from BOUNDARIES"
            for name, module in BOUNDARIES if (name, module) not in found]
    assert unlisted + silent + gone == []


def test_at_most_thirty_function_level_imports():
    count = sum(len(function_imports(path.read_text(encoding="utf-8"))) for path in MODULES.values())
    assert len(BOUNDARIES) <= MOST_BOUNDARIES and count <= MOST_BOUNDARIES, count


def test_the_check_finds_a_redundant_import_and_spares_a_submodule():
    source = ("import json\nfrom skewless.pipelines.output import files\n\n"
              "def f():\n    import json\n    from skewless.pipelines.output import object_store\n"
              "    from skewless.pipelines.output import files as again\n")
    assert redundant_imports(source) == [(5, "json"), (7, "skewless.pipelines.output")]


def test_no_function_imports_a_module_its_file_imports_at_the_top():
    found = [f"{path}:{line} imports {module} again" for name, path in sorted(MODULES.items())
             for line, module in redundant_imports(path.read_text(encoding="utf-8"))]
    assert found == []
