"""The fenced code blocks of the README and the docs site, as the docs tests read them."""

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from example_job import REPO

# a block preceded by this comment (invisible on the page) is not run; the comment says why
NOT_RUN = re.compile(r"^<!-- not run: (?P<reason>.{10,}) -->$")
# code the tests run or parse; `text` (outputs, layouts, synopses) and `mermaid` (diagrams) are not code
RUN = {"bash", "python"}
PARSED = {"yaml"}
NOT_CODE = {"text", "mermaid"}
# a block whose fence names a file (```yaml title="shop.yaml"```, shown as the box's title) is that file: the
# page's runs write it, in its place among the blocks, before the blocks after it read it
OPENING = re.compile(r'^```(?P<language>\S*)(?:\s+title="(?P<file>[^"]+)")?\s*$')


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    not_run: str | None  # the reason, when marked
    file: str | None = None  # the file the block is, when its fence names one

    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def pages() -> list[Path]:
    """README.md and every page of the site (docs/hooks/ holds the site's build code, not pages)."""
    return [REPO / "README.md", *sorted(p for p in (REPO / "docs").rglob("*.md") if "hooks" not in p.parts)]


def blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = OPENING.match(lines[index])
        if opening:
            end = next(k for k in range(index + 1, len(lines)) if lines[k].startswith("```"))
            before = next((lines[k] for k in range(index - 1, -1, -1) if lines[k].strip()), "")
            marked = NOT_RUN.match(before)
            found.append(Block(page, index + 1, opening.group("language"), "\n".join(lines[index + 1:end]) + "\n",
                               marked.group("reason") if marked else None, opening.group("file")))
            index = end
        index += 1
    return found


def reader_environment() -> dict:
    """The environment a reader's shell has: the `skewless` and `saved_model_cli` installed beside this Python."""
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "SKEWLESS_DEBUG")}
    environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + environment["PATH"]
    environment["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return environment


# One interpreter per page runs its blocks in order (TensorFlow is imported once, not once per block): each
# python block in a namespace of its own, as a reader's fresh `python`, each bash block through bash.
_RUN_PAGE = """
import subprocess, sys, traceback
for where, language, code, file in BLOCKS:
    print(f"== {where}", file=sys.stderr, flush=True)
    if file:
        with open(file, "w") as written:
            written.write(code)
    elif language == "bash":
        if subprocess.run(["bash", "-euo", "pipefail", "-c", code]).returncode:
            sys.exit(f"{where} failed")
    else:
        try:
            exec(compile(code, where, "exec"), {"__name__": "__main__"})
        except BaseException:
            traceback.print_exc()
            sys.exit(f"{where} failed")
"""


def runnable_blocks(page: Path) -> list[Block]:
    return [block for block in blocks(page) if (block.language in RUN or block.file) and not block.not_run]


def run_blocks(runnable: list[Block], python, folder: Path, environment: dict) -> subprocess.CompletedProcess:
    """The blocks in order, by `python` in `folder`, as a reader would type them; stderr names each block."""
    script = f"BLOCKS = {[(b.where(), b.language, b.code, b.file) for b in runnable]!r}\n{_RUN_PAGE}"
    return subprocess.run([str(python), "-c", script], cwd=folder, env=environment, capture_output=True, text=True,
                          timeout=1100)
