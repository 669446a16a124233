"""Finds every package under the folders pyproject.toml's package-dir maps into the `skewless` namespace.

pyproject.toml cannot list packages found under several mapped folders (its `packages.find` searches folders
but does not map them), and a hand-kept list once shipped a wheel without `skewless.report`.
"""

from pathlib import Path

from setuptools import find_packages, setup

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pyproject.toml's build-system requires tomli there
    import tomli as tomllib

here = Path(__file__).parent
package_dir = tomllib.loads((here / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
packages = [
    package
    for root, folder in package_dir.items()
    for package in [root, *(f"{root}.{found}" for found in find_packages(here / folder))]
]
setup(packages=packages)
