"""Every module of the package imports, and every name a module imports from the package (inside functions
too) exists: the import-rule checks read the source, so a name removed in one branch while a caller of it
was merged from another shows only here."""

import subprocess
import sys

from example_job import REPO

IMPORT_ALL = """
import importlib, pkgutil, sys
failed = []
for name in ("skewless", "skewless.pipelines", "skewless.layers", "skewless.schemas"):
    for module in pkgutil.walk_packages(importlib.import_module(name).__path__, name + "."):
        if module.name.endswith("__main__"):  # runs the command line
            continue
        try:
            importlib.import_module(module.name)
        except Exception as error:
            failed.append(f"{module.name}: {error!r}")
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


NAMES_EXIST = """
import ast, importlib, pathlib, sys, tomllib
root = pathlib.Path(sys.argv[1])
missing = []
for folder in tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values():
    for path in sorted((root / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("skewless")):
                continue
            module = importlib.import_module(node.module)
            for alias in node.names:
                if hasattr(module, alias.name):
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    missing.append(f"{path.relative_to(root)}:{node.lineno}: {node.module} has no {alias.name}")
print("\\n".join(missing))
sys.exit(1 if missing else 0)
"""


def test_every_module_of_the_package_imports():
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def test_every_name_imported_from_the_package_exists():
    done = subprocess.run([sys.executable, "-c", NAMES_EXIST, str(REPO)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
