"""Finds every package under the folders pyproject.toml's package-dir maps into the `skewless` namespace, and
builds the one C extension.

pyproject.toml cannot list packages found under several mapped folders (its `packages.find` searches folders
but does not map them), and a hand-kept list once shipped a wheel without `skewless.report`.

The extension (the Example encoder and TFRecord framing, pipelines/write/_native_records.c) uses Python's limited
API of 3.10, so one wheel (tagged cp310-abi3) installs on every Python 3.10-3.13. It is optional: where no C
compiler builds it, the install goes on without it and the job encodes in Python (the same bytes, more CPU).
"""

from pathlib import Path

from setuptools import Extension, find_packages, setup

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
native_records = Extension(
    "skewless.pipelines.write._native_records",
    sources=["pipelines/write/_native_records.c"],
    define_macros=[("Py_LIMITED_API", "0x030A0000")],
    py_limited_api=True,
    optional=True,
)
setup(packages=packages, ext_modules=[native_records], options={"bdist_wheel": {"py_limited_api": "cp310"}})
