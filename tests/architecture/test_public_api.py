"""The public API is what the package's faces export (issue 44 item 7): the `__all__` of `skewless`,
`skewless.pipelines`, `skewless.layers` and `skewless.schemas`. Every such name exists, the API page documents it
under that name, and the docs' code imports nothing else of the package (the rest is internal)."""

import ast
import importlib
import inspect
import re

import pytest

from doc_blocks import blocks, pages
from example_job import REPO
from skewless.api_reference import FACES

API_PAGE = REPO / "docs" / "api.md"
PUBLIC = {face: set(importlib.import_module(face).__all__) for face in FACES}


@pytest.mark.parametrize("face", FACES)
def test_every_exported_name_exists_and_the_api_page_documents_it_under_that_name(face):
    module = importlib.import_module(face)
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, f"{face}.__all__ names what it does not have: {missing}"
    assert len(set(module.__all__)) == len(module.__all__), f"{face}.__all__ repeats a name"
    # the page renders each one's docstring: a class or function without its own would be a bare heading
    bare = [name for name in module.__all__ if (inspect.isclass(getattr(module, name)) or inspect.isfunction(
        getattr(module, name))) and not (getattr(module, name).__doc__ or "").strip()]
    assert not bare, f"{face}: public names without a docstring: {bare}"
    headings = set(re.findall(r"^### (\S+)$", API_PAGE.read_text(), re.MULTILINE))
    undocumented = sorted(f"{face}.{name}" for name in module.__all__ if f"{face}.{name}" not in headings)
    assert not undocumented, f"not in docs/api.md (python -m skewless.api_reference > docs/api.md): {undocumented}"


def test_the_api_page_heads_only_public_names():
    headings = re.findall(r"^### (\S+)$", API_PAGE.read_text(), re.MULTILINE)
    public = {f"{face}.{name}" for face, names in PUBLIC.items() for name in names}
    assert headings and not set(headings) - public, sorted(set(headings) - public)


def _package_names_used(code: str) -> list[tuple[int, str]]:
    """(line, dotted name) for each name of the package a python block imports or reads by its full path."""
    used = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "skewless":
            used += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            used += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("skewless.")]
        elif isinstance(node, ast.Attribute):
            parts = []
            inner = node
            while isinstance(inner, ast.Attribute):
                parts.insert(0, inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == "skewless":
                used.append((node.lineno, ".".join(["skewless", *parts])))
    return used


def _is_public(dotted: str) -> bool:
    if dotted in FACES:
        return True
    # the longest face the name starts with, then one public name of it (its attributes after it are its own)
    for face in sorted(FACES, key=len, reverse=True):
        if dotted.startswith(face + "."):
            return dotted.removeprefix(face + ".").split(".")[0] in PUBLIC[face]
    return False


def test_the_docs_code_uses_only_public_names():
    internal = []
    for page in pages():
        for block in blocks(page):
            if block.language != "python":
                continue
            for line, dotted in _package_names_used(block.code):
                if not _is_public(dotted):
                    internal.append(f"{page.relative_to(REPO)}:{block.line + line}: {dotted}")
    internal = list(dict.fromkeys(internal))  # `skewless.a.b` is also seen as `skewless.a`: each line once
    assert not internal, "the docs' code must use names in a face's __all__ (docs/api.md): " + "; ".join(internal)


@pytest.mark.parametrize("dotted, public", [
    ("skewless.pipelines.run", True), ("skewless.pipelines", True), ("skewless.layers.TransformLayer.call", True),
    ("skewless.pipelines.commands.run.run", False), ("skewless.config.load_config", False),
    ("skewless.load_config", True), ("skewless.pipelines.tfdata.raw_dataset.make_raw_dataset", False),
])
def test_what_counts_as_public(dotted, public):
    assert _is_public(dotted) is public
