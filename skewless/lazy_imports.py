"""The one way skewless imports a module on first use: `lazy_import` for a module's own imports, `lazy_exports`
for a package face's public names.

`tf = lazy_import("tensorflow")` at a module's top names the module there, with its other imports, and imports it
the first time an attribute is read (`tf.constant`), as Keras' `LazyModule` and TFDS' `lazy_imports` do. It
is how code a light command loads (the CLI, config validation, `skewless inspect`/`report`, the tf.data readers)
names TensorFlow, Beam or a module that imports them, so `skewless --help` stays fast and a training container
never loads Beam. The proxy never touches sys.modules: a module counts as imported only once it really is (the
start-up tests check sys.modules). tests/architecture/test_import_rules.py reads a `lazy_import("M")` as an
import of M, so the rules on who imports whom see it.

A face maps each public name to the module defining it; `lazy_exports` gives it the module-level `__getattr__`
(PEP 562) that imports that module when the name is first read, so `import skewless.pipelines` stays cheap and a
training container that reads shards never loads Apache Beam. The names are the face's `__all__`, which the API
reference is generated from (skewless/api_reference.py).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from types import ModuleType


class LazyModule:
    """Stands for the module `name` until an attribute is read, then imports it and reads the attribute there."""

    __slots__ = ("_lazy_name", "_lazy_module")

    def __init__(self, name: str):
        self._lazy_name = name
        self._lazy_module: ModuleType | None = None

    def _load(self) -> ModuleType:
        if self._lazy_module is None:
            self._lazy_module = import_module(self._lazy_name)
        return self._lazy_module

    def __getattr__(self, attribute: str):
        return getattr(self._load(), attribute)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        state = "imported" if self._lazy_module is not None else "not imported yet"
        return f"<lazy module {self._lazy_name!r} ({state})>"

    def __reduce__(self):
        # Beam pickles a DoFn with the module globals it reads (cloudpickle): the proxy travels as its name, and
        # imports the module in the worker on first use there too
        return LazyModule, (self._lazy_name,)


def lazy_import(name: str) -> ModuleType:
    """The module `name`, imported when one of its attributes is first read (typed as the module it stands for)."""
    return LazyModule(name)  # type: ignore[return-value]


def lazy_exports(face: str, exports: dict[str, str], before_import: Callable[[], None] | None = None):
    """The `__getattr__` of `face`: `exports[name]` imported (after `before_import`), then its `name`."""

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        if before_import is not None:
            before_import()
        return getattr(import_module(exports[name]), name)

    return __getattr__
