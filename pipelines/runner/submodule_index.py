"""cloudpickle's search for the submodules a pickled function reaches, by a sorted index of `sys.modules`.

Pickling a function by value, Beam's vendored cloudpickle lists the loaded submodules of each package the function's
globals hold whose names the function's code can spell (`cloudpickle._find_imported_submodules`, so that they are
imported again where it is unpickled). It tests every name in `sys.modules` against each package's prefix: with
TensorFlow, tf.Transform and Beam loaded, ~5,000 names per package. A warm 1,000-row `run()` asks 690 times, 51 of
them for functions whose globals hold packages: 0.061 s of CPU against 0.009 s here, for the same calls
(2026-11-28, a 2-core machine on which that run took 2.5 s).

Here the names are sorted once per state of `sys.modules` (rebuilt whenever its keys differ from the last call's, a
comparison of two lists in C), and the submodules whose first part below the package is a name the code uses are a
range of that order for each such name: the same submodules, in the same order (`sys.modules`'), so the same pickles
(tests/pipelines/test_submodule_index.py holds the answers equal to cloudpickle's own for the functions and methods
of the libraries a job loads, and for odd `sys.modules` states).
"""

from __future__ import annotations

import bisect
import sys
import threading
import types

from apache_beam.internal.cloudpickle import cloudpickle

from skewless.pipelines.runner.shared_patch import SharedPatch

_lock = threading.Lock()
_keys: list = []  # sys.modules' keys when the index was built
_sorted: list[str] = []  # those that are strings, sorted
_position: dict[str, int] = {}  # a name -> its position in sys.modules


def _index(keys: list) -> tuple[list[str], dict[str, int]]:
    global _keys, _sorted, _position
    with _lock:
        if keys != _keys:
            names = [key for key in keys if isinstance(key, str)]
            _keys, _sorted, _position = keys, sorted(names), {name: index for index, name in enumerate(names)}
        return _sorted, _position


def find_imported_submodules(code, top_level_dependencies) -> list:
    """`cloudpickle._find_imported_submodules(code, top_level_dependencies)`: for each package among the
    dependencies, its submodules in `sys.modules` every part of whose name below the package is a name `code`
    uses, in the order of `sys.modules`. Only the names below the package that start with a name `code` uses are
    looked at (a range of the sorted names each): a package such as `tensorflow` has ~2,000 loaded submodules."""
    packages = [dependency for dependency in top_level_dependencies
                if isinstance(dependency, types.ModuleType) and getattr(dependency, "__package__", None)]
    if not packages:  # most functions a job pickles reach none
        return []
    modules = sys.modules
    ordered, position = _index(list(modules))
    used = set(code.co_names)
    found = []
    for package in packages:
        prefix = package.__name__ + "."
        names = []
        for first in used:
            name = prefix + first
            if name in position:
                names.append(name)
            # the names below `name`: from "name." up to "name/" ("/" follows "." in any order of strings)
            start = bisect.bisect_left(ordered, name + ".")
            stop = bisect.bisect_left(ordered, name + "/", start)
            names.extend(below for below in ordered[start:stop] if used.issuperset(below[len(prefix):].split(".")))
        names.sort(key=position.__getitem__)
        found.extend(modules[name] for name in names)
    return found


_PATCH = SharedPatch([(cloudpickle, "_find_imported_submodules", find_imported_submodules)])


def installed():
    """cloudpickle finds a pickled function's submodules through the index while the block runs (nested blocks and
    threads share one installation)."""
    return _PATCH.installed()
