"""Every public class and function (docs/api.md) carries a `>>>` example, and it runs (issue 32); NO_EXAMPLE_YET lists
the few that do not yet.

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
from skewless.api_reference import FACES, public_names

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


# public names documented without a `>>>` example yet (a test below fails once one has it: take it off)
NO_EXAMPLE_YET = {
    "skewless.ConfigError", "skewless.InputError", "skewless.JobConfig", "skewless.NotPortableError",
    "skewless.OutputError", "skewless.OutputExistsError", "skewless.RunnerError", "skewless.SchemaError",
    "skewless.SkewlessError", "skewless.TooManyBadRowsError",
    "skewless.layers.NativeFeatureCheck", "skewless.layers.PreprocessorCheck", "skewless.layers.encoding_plan",
    "skewless.layers.export_keras_preprocessor", "skewless.layers.keras_layer_name",
    "skewless.layers.parse_raw_examples", "skewless.layers.raw_feature_batch",
    "skewless.layers.signature_argument_name", "skewless.layers.transform_raw_rows",
    "skewless.layers.transform_raw_rows_dense", "skewless.layers.transform_raw_rows_exported",
    "skewless.pipelines.ApplyResult", "skewless.pipelines.PredictResult", "skewless.pipelines.VerifyResult",
    "skewless.schemas.load_schema", "skewless.schemas.schema_types", "skewless.schemas.write_schema",
}


def _api_page() -> list[str]:
    """The public classes and functions docs/api.md documents (its `### name` headings; constants have no
    docstring of their own)."""
    return [name for face in FACES for name in public_names(face) if callable(_resolve(name))]


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


DOCUMENTED = [name for name in _api_page() if name not in NO_EXAMPLE_YET]


def test_the_list_holds_the_api_page_and_the_layers():
    assert {"skewless.pipelines.run", "skewless.layers.TransformLayer", "skewless.layers.Cast",
            "skewless.layers.NativePreprocessor", "skewless.load_config", "skewless.render_report",
            "skewless.RunDirectory"} <= set(DOCUMENTED)
    layers = [f"skewless.layers.{name}" for name in skewless.layers.__all__
              if isinstance(getattr(skewless.layers, name), type)
              and issubclass(getattr(skewless.layers, name), keras.layers.Layer)]
    assert set(layers) <= set(DOCUMENTED), "every public Keras layer carries an example"
    assert NO_EXAMPLE_YET <= set(_api_page()), sorted(NO_EXAMPLE_YET - set(_api_page()))


@pytest.mark.parametrize("name", sorted(NO_EXAMPLE_YET))
def test_a_name_without_an_example_yet_has_none(name):
    assert ">>>" not in (inspect.getdoc(_resolve(name)) or ""), f"{name} has an example now: take it off NO_EXAMPLE_YET"


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
