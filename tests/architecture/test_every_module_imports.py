"""Every module of the package imports: the import-rule checks read the source, so a name a module imports
from another that no longer has it (a rename in one branch, a caller merged from another) shows only here."""

import subprocess
import sys

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


def test_every_module_of_the_package_imports():
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
