"""`import skewless.layers` from a clone's root finds the clone's `layers/` folder, whatever install is beside it.

The design card keeps `pipelines/`, `layers/` and `schemas/` at the repository's top; pyproject.toml's package-dir
maps them into the `skewless` namespace, so an installed wheel holds them as `skewless/layers/` and so on. Python
started in a clone's root puts the current folder first on sys.path, so the clone's `skewless/` folder shadows the
installed package, and beside it there is no `skewless/layers/`: after a non-editable `pip install .`, the
README's quickstart failed there with "No module named 'skewless.layers'". An editable install maps the folders
with a finder of its own, which this one agrees with.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path

# pyproject.toml's package-dir without its root entry (tests/docs/test_clone_root.py checks that they agree)
SUBPACKAGE_FOLDERS = {"skewless.pipelines": "pipelines", "skewless.layers": "layers", "skewless.schemas": "schemas"}


class _CheckoutFolders(importlib.abc.MetaPathFinder):
    """Finds the mapped subpackages in a checkout's top folders; their own modules are then found the usual way,
    under the folder the subpackage's __path__ names."""

    def __init__(self, checkout: Path):
        self.checkout = checkout

    def find_spec(self, fullname, path=None, target=None):
        folder = SUBPACKAGE_FOLDERS.get(fullname)
        if folder is None:
            return None
        package = self.checkout / folder
        return importlib.util.spec_from_file_location(fullname, package / "__init__.py",
                                                      submodule_search_locations=[str(package)])


def map_checkout_folders(package_folder: Path) -> None:
    """When `skewless` was imported from a checkout (its subpackages are folders beside it, not inside it), make
    those folders its subpackages. An installed wheel holds them inside: nothing to do."""
    checkout = package_folder.parent
    installed = (package_folder / "layers").is_dir()
    beside = all((checkout / folder / "__init__.py").is_file() for folder in SUBPACKAGE_FOLDERS.values())
    if installed or not beside or any(isinstance(finder, _CheckoutFolders) for finder in sys.meta_path):
        return
    # first: the subpackages must come from the tree `skewless` itself came from, not from another checkout's
    # editable install whose finder is on the path too
    sys.meta_path.insert(0, _CheckoutFolders(checkout))
