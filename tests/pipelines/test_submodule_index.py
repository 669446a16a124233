"""cloudpickle's submodule search by a sorted index (pipelines/runner/submodule_index.py) answers as cloudpickle's own
does: for a fifth of the functions and methods of the libraries a job loads, for odd states of `sys.modules`, and
after `sys.modules` changes; a job's pipeline pickles through it, and Beam is as shipped outside a job."""

import concurrent.futures  # noqa: F401  (a submodule a function below reaches through its package)
import inspect
import sys
import types
import xml.etree.ElementTree  # noqa: F401

import apache_beam as beam
import pytest
from apache_beam.internal import pickler
from apache_beam.internal.cloudpickle import cloudpickle
from apache_beam.options.pipeline_options import PipelineOptions

from skewless.pipelines.runner import runners, submodule_index

SHIPPED = cloudpickle._find_imported_submodules


def _module_dependencies(function) -> list:
    """All of a function's globals' values: more than cloudpickle passes (the globals its code names), so more
    packages searched."""
    return list(function.__globals__.values())


def _functions_of_loaded_modules(prefixes: tuple[str, ...]):
    """The functions, and the methods of the classes, defined in the loaded modules named with these prefixes."""
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(prefixes):
            continue
        for _, value in vars(module).copy().items():
            if getattr(value, "__module__", None) != name:
                continue
            if inspect.isfunction(value):
                yield value
            elif inspect.isclass(value):
                yield from (method for method in vars(value).values() if inspect.isfunction(method))


def test_the_same_submodules_as_cloudpickle_for_a_fifth_of_the_jobs_library_functions():
    import skewless.pipelines.commands.run  # noqa: F401  (what a job loads)

    functions = list(_functions_of_loaded_modules(("skewless", "tensorflow_transform", "apache_beam", "tfx_bsl")))
    assert len(functions) > 5000
    functions = functions[::5]  # cloudpickle's own search takes ~4 ms a function here: a fifth of them, all kinds
    found_any = 0
    for function in functions:
        dependencies = _module_dependencies(function)
        expected = SHIPPED(function.__code__, dependencies)
        assert submodule_index.find_imported_submodules(function.__code__, dependencies) == expected, function
        found_any += bool(expected)
    assert found_any > 20  # the search found submodules for many of them, not only empty lists


def _reaches_submodules():
    return concurrent.futures.ThreadPoolExecutor, xml.etree.ElementTree.Element


def _fake_module(name: str, package: str | None) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__package__ = package
    return module


@pytest.mark.parametrize("entries, dependencies, code_names", [
    # a submodule whose parent is not loaded, one whose name only starts like the package's, a None entry
    ({"fakepkg": _fake_module("fakepkg", "fakepkg"),
      "fakepkg.sub.deep": _fake_module("fakepkg.sub.deep", "fakepkg.sub"),
      "fakepkgx.sub": _fake_module("fakepkgx.sub", "fakepkgx"), "fakepkg.gone": None},
     ["fakepkg"], ("sub", "deep", "gone")),
    # a name the code does not use among the parts; a package listed twice; a module without a package
    ({"fakepkg": _fake_module("fakepkg", "fakepkg"), "fakepkg.a.b": _fake_module("fakepkg.a.b", "fakepkg.a"),
      "fakepkg.a": _fake_module("fakepkg.a", "fakepkg"), "lonely": _fake_module("lonely", "")},
     ["fakepkg", "fakepkg", "lonely", 42], ("a",)),
    # names that sort around the package's prefix ("." sorts before letters, "/" after it)
    ({"fakepkg": _fake_module("fakepkg", "fakepkg"), "fakepkg-x": _fake_module("fakepkg-x", ""),
      "fakepkg/y": _fake_module("fakepkg/y", ""), "fakepkg.z": _fake_module("fakepkg.z", "fakepkg")},
     ["fakepkg"], ("z", "x", "y")),
])
def test_the_same_submodules_as_cloudpickle_for_odd_states_of_sys_modules(entries, dependencies, code_names,
                                                                          monkeypatch):
    for name, module in entries.items():
        monkeypatch.setitem(sys.modules, name, module)
    code = (lambda: None).__code__.replace(co_names=code_names)
    resolved = [entries.get(item, item) if isinstance(item, str) else item for item in dependencies]
    assert submodule_index.find_imported_submodules(code, resolved) == SHIPPED(code, resolved)


def test_the_index_follows_sys_modules(monkeypatch):
    dependencies = _module_dependencies(_reaches_submodules)
    before = submodule_index.find_imported_submodules(_reaches_submodules.__code__, dependencies)
    assert sys.modules["concurrent.futures"] in before and sys.modules["xml.etree.ElementTree"] in before
    added = _fake_module("concurrent.ThreadPoolExecutor", "concurrent")
    monkeypatch.setitem(sys.modules, "concurrent.ThreadPoolExecutor", added)
    after = submodule_index.find_imported_submodules(_reaches_submodules.__code__, dependencies)
    assert added in after and after == SHIPPED(_reaches_submodules.__code__, dependencies)
    monkeypatch.delitem(sys.modules, "concurrent.ThreadPoolExecutor")
    assert submodule_index.find_imported_submodules(_reaches_submodules.__code__, dependencies) == before


def test_a_jobs_pipeline_pickles_through_the_index_and_beam_is_as_shipped_outside():
    seen = []

    class Probe(beam.PTransform):
        def expand(self, pcoll):
            seen.append(cloudpickle._find_imported_submodules)
            return pcoll | beam.Map(lambda row: concurrent.futures.ThreadPoolExecutor.__name__ + str(row))

    with runners.pipeline(PipelineOptions(["--runner=DirectRunner"])) as pipeline:
        _ = pipeline | beam.Create([1, 2]) | Probe()
    assert seen == [submodule_index.find_imported_submodules]
    assert cloudpickle._find_imported_submodules is SHIPPED
    function = pickler.loads(pickler.dumps(lambda: concurrent.futures.wait))
    assert function() is concurrent.futures.wait
