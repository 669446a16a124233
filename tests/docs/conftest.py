"""The run of configs/example.yaml the docs' code blocks and the docstrings' examples read as `out/example`, and
each page's code run once, for the test that it runs and the tests that read what it wrote."""

import shutil
import subprocess
import sys

import pytest
from doc_blocks import reader_environment, run_blocks, runnable_blocks
from example_job import REPO


@pytest.fixture(scope="session")
def example_run_dir(tmp_path_factory):
    """`skewless run configs/example.yaml` as the README's set-up runs it, once for every page and docstring."""
    folder = tmp_path_factory.mktemp("docs-run")
    shutil.copytree(REPO / "configs", folder / "configs")
    done = subprocess.run(["skewless", "run", "configs/example.yaml", "--output", "out/example"], cwd=folder,
                          env=reader_environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "out" / "example"


@pytest.fixture(scope="session")
def page_run(example_run_dir, tmp_path_factory):
    """`page_run(page)`: (its folder, the finished run) of the page's blocks, run once per session in order in a
    scratch folder holding `configs/` and the example run in `out/example`, as a reader would type them."""
    runs = {}

    def run(page):
        if page not in runs:
            folder = tmp_path_factory.mktemp(page.stem)
            shutil.copytree(REPO / "configs", folder / "configs")
            shutil.copytree(example_run_dir, folder / "out" / "example")
            runs[page] = folder, run_blocks(runnable_blocks(page), sys.executable, folder, reader_environment())
        return runs[page]

    return run
