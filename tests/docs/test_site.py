"""The docs site builds with warnings as errors, its generated pages (CLI, Python API) are current, its nav holds the
tutorial pages, and the config reference's code fits its box."""

import os
import re
import subprocess
import sys

import yaml

from doc_blocks import blocks
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


def test_the_nav_and_the_home_page_lead_to_the_tutorial_and_the_comparison():
    nav = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)["nav"]
    pages = {page for entry in nav for page in entry.values() if isinstance(page, str)}
    assert {"tutorial.md", "coming-from.md"} <= pages, nav
    home = (REPO / "docs" / "index.md").read_text()
    assert "(tutorial.md)" in home and "(coming-from.md)" in home


def _code_box_columns() -> int:
    """Characters a code box shows without scrolling on the full-width page, from the grid's width in
    docs/stylesheets/extra.css and Material's own sizes (its main CSS): two sidebars of 12.1rem, the content's
    margins of 1.2rem, a code block's padding of 1.1764705882em each side at code size, which is .85em of the
    text's .8rem; Roboto Mono advances 0.6em a character."""
    grid = float(re.search(r"\.md-grid\s*{[^}]*max-width:\s*([\d.]+)rem", (
        REPO / "docs" / "stylesheets" / "extra.css").read_text()).group(1))
    code_rem = 0.8 * 0.85
    box = grid - 2 * 12.1 - 2 * 1.2 - 2 * 1.1764705882 * code_rem
    return int(box / (0.6 * code_rem))


def test_config_blocks_fit_the_code_box():
    # Material's 61rem page holds 80 characters a code line: the config reference's comments were cut off
    columns = _code_box_columns()
    assert columns >= 110, columns
    long = [f"{block.where()}+{number}: {len(line)} characters" for page in (REPO / "docs").rglob("*.md")
            for block in blocks(page) if block.language == "yaml"
            for number, line in enumerate(block.code.splitlines(), start=1) if len(line) > columns]
    assert not long, f"yaml lines wider than the code box ({columns} characters): {long}"
