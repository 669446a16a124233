"""mkdocs hook: lays out the `skewless` package as it is installed, for mkdocstrings to read its source.

pyproject.toml's package-dir maps folders beside `skewless/` into it (pipelines/ is skewless.pipelines); griffe,
which reads the source without importing it (no TensorFlow at build time), finds only `skewless/` itself. The
hook builds build/api-src/skewless/ of symlinks: every entry of skewless/, plus each mapped subpackage.
"""

import shutil
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / "build" / "api-src"


def on_startup(command, dirty):
    # on_startup: before mkdocstrings reads its `paths` (at on_config), which must exist by then
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    shutil.rmtree(TREE, ignore_errors=True)
    for package, folder in sorted(package_dir.items()):
        target = TREE.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for entry in (ROOT / folder).iterdir():
            if entry.name != "__pycache__" and not target.joinpath(entry.name).exists():
                target.joinpath(entry.name).symlink_to(entry)
