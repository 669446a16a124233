"""The project's modules by name, found on disk with pyproject.toml's package-dir mapping (no module is imported):
the architecture tests read their source, and with `lazily_imported` the modules it names in `lazy_import("M")`."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from example_job import REPO

PACKAGE_DIRS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]


def _project_modules() -> dict[str, Path]:
    """Module name -> source file, with the folder mapping of pyproject.toml's package-dir."""
    modules = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules.setdefault(".".join((package, *parts)), path)
    return modules


MODULES = _project_modules()


def lazily_imported(node: ast.AST) -> str | None:
    """The module a `lazy_import("M")` call names, or None for any other node."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)):
        return None
    called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
    return node.args[0].value if called == "lazy_import" and isinstance(node.args[0].value, str) else None


def module_names(module: str) -> set[str]:
    """The names a project module assigns at its top level (read from its source, not imported)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return {target.id for node in tree.body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name)}
