"""The docs site builds with warnings as errors, and its generated CLI page is the commands' current help."""

import os
import re
import subprocess
import sys

from example_job import REPO
from skewless import api_reference, cli_reference


def test_the_cli_reference_page_is_generated_from_the_current_commands():
    committed = (REPO / "docs" / "cli.md").read_text()
    assert committed == cli_reference.markdown(), "docs/cli.md is stale: python -m skewless.cli_reference > docs/cli.md"


def test_the_api_page_is_generated_from_the_public_names():
    committed = (REPO / "docs" / "api.md").read_text()
    assert committed == api_reference.markdown(), "docs/api.md is stale: python -m skewless.api_reference > docs/api.md"


def test_every_page_is_in_the_nav_and_the_site_builds_strictly(tmp_path):
    # mkdocs, mkdocs-material and mkdocstrings-python come with the test extra (and the docs extra)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    # a page left out of the nav is only an INFO line, even in strict mode
    assert "not included in the \"nav\"" not in done.stderr, done.stderr
    # the API page holds the docstrings, not only the headings
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "shuffle_buffer" in api and "TransformLayer" in api
    # headed by the public names, not by the modules that define them
    assert '<h3 id="skewlesspipelinesrun"' in api
    headings = [re.sub(r"<[^>]+>", "", text) for text in re.findall(r"<h\d[^>]*>(.*?)</h\d>", api, re.DOTALL)]
    assert not [text for text in headings if "commands." in text], headings
