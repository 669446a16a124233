"""`lazy_import` (skewless/lazy_imports.py): the module loads when an attribute is first read, not before, and a
proxy travels through Beam's pickling (cloudpickle) as its module's name."""

import pickle
import sys

import cloudpickle
import pytest

from skewless.lazy_imports import LazyModule, lazy_import

_SOURCE = "LOADS = []\nLOADS.append(1)\n\ndef double(x):\n    return 2 * x\n"


@pytest.fixture
def module_on_path(tmp_path, monkeypatch):
    """The name of a module on sys.path that nothing has imported yet (it counts its own loads)."""
    name = f"lazy_probe_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_the_module_loads_on_the_first_attribute_read_only(module_on_path):
    probe = lazy_import(module_on_path)
    assert module_on_path not in sys.modules and "not imported yet" in repr(probe)
    assert probe.double(21) == 42
    assert sys.modules[module_on_path].LOADS == [1]
    assert probe.LOADS is sys.modules[module_on_path].LOADS
    probe.double(1)
    assert sys.modules[module_on_path].LOADS == [1]  # imported once


def test_a_missing_attribute_is_the_modules_own_error(module_on_path):
    with pytest.raises(AttributeError, match="nothing_here"):
        lazy_import(module_on_path).nothing_here


def test_a_missing_module_fails_at_first_use_not_at_import():
    probe = lazy_import("skewless_no_such_module")
    with pytest.raises(ModuleNotFoundError, match="skewless_no_such_module"):
        probe.anything


def test_a_proxy_pickles_as_its_modules_name(module_on_path):
    probe = lazy_import(module_on_path)
    probe.double(1)
    again = pickle.loads(pickle.dumps(probe))
    assert isinstance(again, LazyModule) and again.double(4) == 8


def test_a_function_reading_a_proxy_survives_beams_pickling(module_on_path):
    # as a DoFn's method reads a module global: cloudpickle pickles the function by value, the proxy by name
    namespace = {"probe": lazy_import(module_on_path)}
    exec("def apply(x):\n    return probe.double(x)\n", namespace)
    assert cloudpickle.loads(cloudpickle.dumps(namespace["apply"]))(5) == 10
