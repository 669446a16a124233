"""Every public layer and every object of the Python API page carries a `>>>` example, and it runs (issue 32).

The examples run as doctests, each in a scratch folder holding `configs/` and a run of configs/example.yaml in
`out/example` (conftest.py), as their docstrings say; an example's expected output is its assertion."""

import doctest
import importlib
import inspect
import shutil

import keras
import pytest

import skewless.layers
from example_job import REPO

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _api_page() -> list[str]:
    """The objects docs/api.md renders (its `::: dotted.name` lines)."""
    lines = (REPO / "docs" / "api.md").read_text().splitlines()
    return [line.removeprefix("::: ").strip() for line in lines if line.startswith("::: ")]


def _public_layers() -> list[str]:
    return [f"skewless.layers.{name}" for name in skewless.layers.__all__
            if isinstance(getattr(skewless.layers, name), type)
            and issubclass(getattr(skewless.layers, name), keras.layers.Layer)]


DOCUMENTED = list(dict.fromkeys([*_api_page(), *_public_layers()]))


def _resolve(dotted: str):
    """The object a dotted name names, as mkdocstrings reads it: `skewless.layers.raw_inputs` is the function the
    package exports, not the module of that name."""
    parts = dotted.split(".")
    found = importlib.import_module(parts[0])
    for index, part in enumerate(parts[1:], start=2):
        attribute = getattr(found, part, None)
        if index == len(parts) and attribute is not None and not inspect.ismodule(attribute):
            found = attribute
        else:
            found = importlib.import_module(".".join(parts[:index]))
    return found


def test_the_list_holds_the_api_page_and_the_layers():
    assert {"skewless.pipelines.commands.job.run", "skewless.layers.TransformLayer", "skewless.layers.Cast",
            "skewless.layers.NativePreprocessor"} <= set(DOCUMENTED)
    assert "skewless.layers.raw_inputs" in DOCUMENTED and "skewless.layers.keras_layer_name" not in DOCUMENTED


@pytest.mark.parametrize("name", DOCUMENTED)
def test_the_example_runs(name, example_run_dir, tmp_path, monkeypatch):
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    shutil.copytree(example_run_dir, tmp_path / "out" / "example")
    monkeypatch.chdir(tmp_path)
    found = doctest.DocTestFinder(recurse=False).find(_resolve(name), name, globs={})
    examples = [test for test in found if test.examples]
    assert examples, f"{name}: its docstring has no >>> example"
    failures = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in examples:
        runner.run(test, out=failures.append)
    assert runner.failures == 0, "".join(failures)
