"""User code named in a config (`preprocessing_fn`, `input.generator`) as ``module.path:function``.

Only the module the config names is imported, by its path, so workers import it the same way (it must be
installed there); nothing is unpickled.
"""

from __future__ import annotations

import importlib
from typing import Callable

from skewless.errors import ConfigError


def import_function(reference: str, key: str) -> Callable:
    """Imports the function `reference` names; `key` is the config key, for the error message."""
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"{key} {reference!r}: cannot import {module_name}: {error}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ConfigError(f"{key} {reference!r}: {module_name} has no function {attribute}")
    return function
