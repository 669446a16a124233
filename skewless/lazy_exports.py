"""The one way a package face (`skewless`, `skewless.pipelines`) exports names it imports only on first use.

A face maps each public name to the module defining it; `lazy_exports` gives it the module-level `__getattr__`
(PEP 562) that imports that module when the name is first read, so `import skewless.pipelines` stays cheap and a
training container that reads shards never loads Apache Beam. The names are the face's `__all__`, which the API
reference is generated from (skewless/api_reference.py).
"""

from collections.abc import Callable
from importlib import import_module


def lazy_exports(face: str, exports: dict[str, str], before_import: Callable[[], None] | None = None):
    """The `__getattr__` of `face`: `exports[name]` imported (after `before_import`), then its `name`."""

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        if before_import is not None:
            before_import()
        return getattr(import_module(exports[name]), name)

    return __getattr__
