"""Every code block of the README and the docs site runs here, or says above it why it is not run (issue 32).

Each page's `bash` and `python` blocks run in order, as a reader would type them, in a scratch folder holding
`configs/` and a run of configs/example.yaml in `out/example` (conftest.py); `yaml` blocks must parse, and a block
whose fence names a file (`title="x.yaml"`) is written to it in its turn."""

import pytest
import yaml

from doc_blocks import NOT_CODE, PARSED, RUN, blocks, pages, runnable_blocks
from example_job import REPO

RUNNABLE_PAGES = [page for page in pages() if runnable_blocks(page)]


def test_every_block_names_its_language_and_is_run_parsed_or_marked():
    unknown = [f"{b.where()}: ```{b.language}" for page in pages() for b in blocks(page)
               if b.language not in RUN | PARSED | NOT_CODE]
    assert not unknown, "give each block one of " + ", ".join(sorted(RUN | PARSED | NOT_CODE)) + f": {unknown}"
    pointless = [b.where() for page in pages() for b in blocks(page) if b.not_run and b.language in NOT_CODE]
    assert not pointless, f"blocks that are not code need no 'not run' mark: {pointless}"


def test_the_readme_quickstart_and_the_site_run_code():
    # the pages whose code is the product's promise: the README's quickstart, training, serving
    # and the tutorial (raw CSV to a served model and drift) and the same job three ways (coming-from.md)
    names = {str(page.relative_to(REPO)) for page in RUNNABLE_PAGES}
    assert {"README.md", "docs/training.md", "docs/recipes/serving.md", "docs/tutorial.md",
            "docs/coming-from.md"} <= names, names


@pytest.mark.parametrize("page", [page for page in pages() if any(b.language in PARSED for b in blocks(page))],
                         ids=lambda page: str(page.relative_to(REPO)))
def test_yaml_blocks_parse(page):
    for block in blocks(page):
        if block.language == "yaml" and block.not_run is None:
            assert isinstance(yaml.safe_load(block.code), dict), block.where()


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_page_code_runs_in_order(page, page_run):
    _, done = page_run(page)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
