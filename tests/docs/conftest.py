"""The run of configs/example.yaml the docs' code blocks and the docstrings' examples read as `out/example`."""

import shutil
import subprocess

import pytest
from doc_blocks import reader_environment
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
