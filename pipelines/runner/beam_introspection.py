"""Beam's per-DoFn introspection answered once per function instead of thousands of times per job.

Building and running a job's pipeline, Beam 2.77 asks the same questions over and over (issue 34, a warm
1,000-row run under cProfile):

- `get_function_args_defaults(f)`, ~39,000 times per run: every `is_stateful_dofn` / `validate_stateful_dofn`
  (while building, translating and again in every bundle processor) walks `dir(dofn)` and calls
  `inspect.signature` on each method. A function's signature is fixed by the function object (its code,
  defaults, annotations, `__wrapped__`), so the answer is kept per function, weakly: a function that goes
  away takes its entry with it.
- `PipelineOptions.view_as(cls)`, ~1,400 times per run (Beam's type checks ask `TypeOptions` for every
  transform applied): each builds a new argparse parser of `cls`'s flags and parses the same flags again.
  A view holds no state of its own (its options live in the dict all views share), so the view made for
  an options object and a class is kept for that object while its flags stay the same.

- `userstate.get_dofn_specs(dofn)`, ~1,300 times per warm 1,000-row run (`is_stateful_dofn` /
  `validate_stateful_dofn` again in every bundle processor, on a new copy of the same DoFn): each walks
  `dir(dofn)` and every bound method's defaults. The answer is the class's whenever the instance holds no bound
  method and shadows the same class attributes (`_specs_key`); it is kept per class and shadowed names. A class
  with properties (but Beam's own) or its own `__getattr__` / `__getattribute__` can answer per instance and is
  asked every time.

`memoized()` installs the three for the duration of a `with` block and restores Beam's own functions after, so
Beam behaves as shipped outside skewless's jobs. Answers are the same objects Beam computed (the lists
returned are copies, as callers may change them).
"""

from __future__ import annotations

import types
import weakref

from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.transforms import core, userstate

from skewless.pipelines.runner.shared_patch import SharedPatch

# function -> (args, defaults), for plain functions and for the functions behind bound methods
_plain: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# DoFn class -> {names the instance shadows: (state specs, timer specs)}; class -> whether its lookups are static
_specs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lookups: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# options object -> {cls: (flags, view)}; kept beside the object, not in it: Beam deep-copies and pickles
# options through their __dict__
_views: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _args_defaults(f):
    """`core.get_function_args_defaults`, remembered per function for plain functions and bound methods."""
    original = _PATCH.original(core, "get_function_args_defaults")
    if isinstance(f, types.MethodType) and isinstance(f.__func__, types.FunctionType):
        cache, key = _bound, f.__func__
    elif isinstance(f, types.FunctionType):
        cache, key = _plain, f
    else:
        return original(f)
    args, defaults = _remembered(cache, key, lambda: original(f))
    return list(args), list(defaults)


def _dofn_specs(dofn):
    """`userstate.get_dofn_specs`, remembered per DoFn class and the class attributes the instance shadows."""
    original = _PATCH.original(userstate, "get_dofn_specs")
    key = _specs_key(dofn)
    if key is None:
        return original(dofn)
    cls, shadowed = key
    state_specs, timer_specs = _remembered(_specs.setdefault(cls, {}), shadowed, lambda: original(dofn))
    return set(state_specs), set(timer_specs)


def _remembered(cache, key, answer):
    """`cache[key]`, set to `answer()` the first time."""
    found = cache.get(key)
    if found is None:
        found = answer()
        cache[key] = found
    return found


def _specs_key(dofn) -> tuple[type, frozenset] | None:
    """(the class, the names of its attributes the instance shadows), or None where the instance's own attributes
    or the class's dynamic lookups could change the answer."""
    cls = type(dofn)
    if not _static_lookup(cls):
        return None
    own = getattr(dofn, "__dict__", None)
    if own is None or any(isinstance(value, types.MethodType) for value in own.values()):
        return None
    return cls, frozenset(name for name in own if hasattr(cls, name))


def _static_lookup(cls: type) -> bool:
    """Whether `getattr` on an instance of `cls` finds class attributes as they are: no `__getattr__` or
    `__getattribute__` of its own, and no property but Beam's own (DoFn's `_process_defined` and the like, which
    answer from the class)."""
    found = _lookups.get(cls)
    if found is None:
        found = not any(
            name in ("__getattr__", "__getattribute__")
            or (isinstance(value, property) and not klass.__module__.startswith("apache_beam."))
            for klass in cls.__mro__ if klass is not object for name, value in vars(klass).items())
        _lookups[cls] = found
    return found


def _view_as(self, cls):
    """`PipelineOptions.view_as`, remembered per options object and class while the flags are unchanged."""
    views = _views.setdefault(self, {})
    flags = tuple(self._flags) if self._flags is not None else None
    found = views.get(cls)
    if found is not None and found[0] == flags:
        return found[1]
    view = _PATCH.original(PipelineOptions, "view_as")(self, cls)
    views[cls] = (flags, view)
    return view


_PATCH = SharedPatch([(core, "get_function_args_defaults", _args_defaults), (PipelineOptions, "view_as", _view_as),
                      (userstate, "get_dofn_specs", _dofn_specs)])


def memoized():
    """Beam's function signatures, options views and DoFn state specs remembered while the block runs (nested blocks and
    threads share one installation)."""
    return _PATCH.installed()
