"""The project's modules by name, found on disk with pyproject.toml's package-dir mapping (no module is imported):
the architecture tests read their source."""

from __future__ import annotations

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
