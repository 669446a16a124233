"""A `.keras` file holding skewless layers loads after `import skewless`, which still imports neither Keras nor TF.

Keras finds a saved custom layer by its registered name ("skewless>Cast") in its registry of custom objects,
which `@keras.saving.register_keras_serializable` fills when the layer's module runs; Keras imports the module a
file names only for its own packages, so without `import skewless.layers` a load fails with Keras' generic
"could not be deserialized". Importing skewless.layers from `import skewless` would cost every command
TensorFlow's start-up, so the registry is instead made to import skewless.layers the first time Keras looks up a
"skewless>" name. That registry, `keras.src.saving.object_registration.GLOBAL_CUSTOM_OBJECTS`, is not public API:
tests/layers/test_keras_registry.py loads a file in a fresh process to check it on the installed Keras.
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata
import sys

# the module that holds Keras' registry of custom objects; when Keras is imported after skewless, the registry is
# made lazy the moment that module has run, before any layer registers itself
REGISTRY_MODULE = "keras.src.saving.object_registration"
PACKAGE_PREFIX = "skewless>"


class UnknownLayerError(LookupError):
    """A file names a skewless layer this version of skewless does not have (it was saved by another version)."""


class _LazyRegistry(dict):
    """Keras' registry of custom objects, which imports skewless.layers when asked for a "skewless>" name."""

    def __contains__(self, name) -> bool:
        if super().__contains__(name):
            return True
        if not (isinstance(name, str) and name.startswith(PACKAGE_PREFIX)):
            return False
        _import_layers(name)
        if super().__contains__(name):
            return True
        known = ", ".join(sorted(key.removeprefix(PACKAGE_PREFIX) for key in self if key.startswith(PACKAGE_PREFIX)))
        # not Keras' TypeError, which Keras wraps into a message holding the whole model config
        raise UnknownLayerError(
            f"{name}: skewless {importlib.metadata.version('skewless')} has no layer {name.removeprefix(PACKAGE_PREFIX)!r} "
            f"(it has {known}); the file was saved by another version of skewless"
        )


def _import_layers(name: str) -> None:
    """Imports skewless.layers, whose layers register themselves; a failure names what to import."""
    try:
        # here, not at module top: it imports TensorFlow and Keras, which `import skewless` must not
        import skewless.layers  # noqa: F401
    except ImportError as error:
        raise ImportError(
            f"{name} is a skewless layer: loading it needs `import skewless.layers`, which failed: {error}"
        ) from error


def _make_lazy(registration) -> None:
    if not isinstance(registration.GLOBAL_CUSTOM_OBJECTS, _LazyRegistry):
        registration.GLOBAL_CUSTOM_OBJECTS = _LazyRegistry(registration.GLOBAL_CUSTOM_OBJECTS)


class _RunThenPatch(importlib.abc.Loader):
    """Runs Keras' registry module with its own loader, then makes its registry lazy."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        _make_lazy(module)

    def __getattr__(self, name):
        # get_source, get_filename, ...: tracebacks and inspect ask the module's loader for them
        return getattr(self._loader, name)


class _RegistryWatch(importlib.abc.MetaPathFinder):
    """Finds Keras' registry module through the other finders and wraps its loader; gone once it is found."""

    def find_spec(self, fullname, path, target=None):
        if fullname != REGISTRY_MODULE:
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            spec = getattr(finder, "find_spec", lambda *_: None)(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _RunThenPatch(spec.loader)
                return spec
        return None


def register_lazily() -> None:
    """Makes Keras' registry import skewless.layers on a "skewless>" name, now or when Keras is imported."""
    registration = sys.modules.get(REGISTRY_MODULE)
    if registration is not None:
        _make_lazy(registration)
    elif not any(isinstance(finder, _RegistryWatch) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegistryWatch())
