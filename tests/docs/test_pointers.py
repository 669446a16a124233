"""What the README and the quickstart notebook point a newcomer to is still there (issue 42, item 10): every docs
page is in the README's list, the README's run layout is a clean run's (a folder written only sometimes says
when), and the notebook's outline, commands, options and paths are the current ones."""

import json
import os
import re

import pytest
import typer

from example_job import REPO
from skewless.cli import app

README = (REPO / "README.md").read_text()
NOTEBOOK = json.loads((REPO / "notebooks" / "quickstart.ipynb").read_text())
# what the notebook says to a reader, its markdown cells
NOTEBOOK_TEXT = "\n\n".join("".join(cell["source"]) for cell in NOTEBOOK["cells"] if cell["cell_type"] == "markdown")


def _section(markdown: str, heading: str) -> str:
    return re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", markdown, re.S | re.M).group(1)


def test_the_readme_lists_every_docs_page():
    listed = set(re.findall(r"\]\((docs/[^)#]+\.md)", _section(README, "Documentation")))
    pages = {os.path.relpath(os.path.join(folder, name), REPO) for folder, _, names in os.walk(REPO / "docs")
             for name in names if name.endswith(".md") and name != "index.md"}  # index.md: the site's home
    assert pages - listed == set(), "docs pages the README's Documentation list leaves out"
    assert listed - pages == set(), "README links to docs pages that do not exist"


def _layout_entries(section: str) -> dict[str, str]:
    """The names in the README's tree of a run directory (the lines under its first), each with its line: a folder
    and what it holds, or a line of file names."""
    tree = re.search(r"```text\n(.*?)```", section, re.S).group(1).splitlines()[1:]
    entries = {}
    for line in (line for line in tree if re.match(r"  \S", line)):
        first = line.split()[0]
        for name in [first] if first.endswith("/") else line.split():
            entries[name.rstrip("/")] = line
    return entries


def test_the_readme_layout_is_a_clean_runs(example_run):
    entries = _layout_entries(_section(README, "What a run writes"))
    written = set(os.listdir(example_run.output_dir)) | {"report.html"}  # the CLI renders the page after the job
    assert written - set(entries) == set(), "written by a clean run, not in the README's layout"
    for name in set(entries) - written:
        assert "only when" in entries[name], f"{name}/ is not written by a clean run: the README must say when"


def _commands(group=typer.main.get_command(app), path=()):
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


COMMANDS = {" ".join(path): command for path, command in _commands()}


def test_the_notebooks_outline_names_each_section():
    outline = re.findall(r"^(\d+)\. ", NOTEBOOK_TEXT.split("\n## ")[0], re.M)
    sections = re.findall(r"^## (\d+)\. ", NOTEBOOK_TEXT, re.M)
    assert outline == sections, "the first cell's numbered outline and the numbered sections differ"


@pytest.mark.parametrize("span", sorted(set(re.findall(r"`(skewless [^`]+)`", NOTEBOOK_TEXT))))
def test_the_notebooks_commands_and_options_are_current(span):
    words = span.split()[1:]
    path = next((name for name in sorted(COMMANDS, key=len, reverse=True) if words[:len(name.split())] ==
                 name.split()), None)
    assert path, f"{span}: no such command"
    options = {param: [name for name in param.opts if name.startswith("--")] for param in COMMANDS[path].params}
    for flag in (word for word in words if word.startswith("--")):
        named = [names for names in options.values() if flag in names]
        assert named, f"{span}: {flag} is no option of skewless {path}"
        assert flag == named[0][0], f"{span}: {flag} is a former name, kept for scripts: say {named[0][0]}"


def test_the_paths_the_notebook_names_exist():
    for path in re.findall(r"\b((?:docs|configs|notebooks)/[\w./-]+\w)", NOTEBOOK_TEXT):
        assert (REPO / path).exists(), path
