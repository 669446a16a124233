"""`lazy_import` (skewless/lazy_imports.py): the module loads when an attribute is first read, not before, and a
proxy travels through Beam's pickling (cloudpickle) as its module's name."""

import ast
import importlib.util
import os
import pickle
import subprocess
import sys

import cloudpickle
import pytest

from project_modules import MODULES, lazily_imported

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


def _attributes_read(source: str) -> dict[str, set[str]]:
    """{module a `NAME = lazy_import(module)` names: the attributes the source reads as `NAME.attribute`}."""
    tree = ast.parse(source)
    proxies = {target.id: lazily_imported(node.value) for node in tree.body if isinstance(node, ast.Assign)
               for target in node.targets if isinstance(target, ast.Name) and lazily_imported(node.value)}
    read: dict[str, set[str]] = {module: set() for module in proxies.values()}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in proxies:
            read[proxies[node.value.id]].add(node.attr)
    return read


def _is_submodule(module: str, attribute: str) -> bool:
    try:
        return importlib.util.find_spec(f"{module}.{attribute}") is not None
    except (ImportError, ValueError):
        return False


def test_every_submodule_read_through_a_proxy_is_there_after_importing_its_module_alone():
    """A proxy imports only the module it names: `coders = lazy_import("tfx_bsl.coders")` then
    `coders.sequence_example_coder` works only where something else imported that submodule first (it failed in
    one test file's process and passed in another's). Each module whose submodules are read through a proxy is
    imported alone in a fresh interpreter (any other attribute is the module's own, there once it is imported)."""
    wanted: dict[str, set[str]] = {}
    for path in MODULES.values():
        for module, attributes in _attributes_read(path.read_text(encoding="utf-8")).items():
            wanted.setdefault(module, set()).update(a for a in attributes if _is_submodule(module, a))
    probe = ("import importlib, sys\nloaded = importlib.import_module(sys.argv[1])\n"
             "print(' '.join(a for a in sys.argv[2:] if not hasattr(loaded, a)))\n")
    missing = []
    for module, submodules in sorted(wanted.items()):
        if submodules:
            done = subprocess.run([sys.executable, "-c", probe, module, *sorted(submodules)], capture_output=True,
                                  text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
            assert done.returncode == 0, done.stderr[-2000:]
            missing += [f"{module}.{name}" for name in done.stdout.split()]
    assert missing == [], ("read through a lazy proxy of the package, but importing the package alone does not load "
                           "them (lazy_import the submodule itself): " + ", ".join(missing))


def test_the_attribute_check_sees_a_submodule_read_through_its_package():
    source = "from skewless.lazy_imports import lazy_import\ncoders = lazy_import('tfx_bsl.coders')\n" \
             "def f():\n    return coders.sequence_example_coder.Decoder\n"
    assert _attributes_read(source) == {"tfx_bsl.coders": {"sequence_example_coder"}}
