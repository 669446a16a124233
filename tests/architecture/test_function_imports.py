"""A function-level import is a start-up boundary (it defers loading a module until the function runs), so one of
a module the file already imports at its top defers nothing: it only hides what the file needs (issue 44 item 1).

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


def test_the_check_finds_a_redundant_import_and_spares_a_submodule():
    source = ("import json\nfrom skewless.pipelines.output import files\n\n"
              "def f():\n    import json\n    from skewless.pipelines.output import object_store\n"
              "    from skewless.pipelines.output import files as again\n")
    assert redundant_imports(source) == [(5, "json"), (7, "skewless.pipelines.output")]


def test_no_function_imports_a_module_its_file_imports_at_the_top():
    found = [f"{path}:{line} imports {module} again" for name, path in sorted(MODULES.items())
             for line, module in redundant_imports(path.read_text(encoding="utf-8"))]
    assert found == []
