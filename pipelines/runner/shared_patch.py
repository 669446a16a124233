"""Attributes of other libraries replaced while any job of the process runs, put back after the last one.

Beam's introspection memo (beam_introspection.py) and tf.Transform's kept analysis graph
(pipelines/analyze/saved_model_reuse.py) each swap a few functions of a library for the length of a job.
Jobs may nest or run in threads at once: the first to enter installs the replacements, the last to leave
restores the originals, and a replacement reaches the original through `original` whenever it is called.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable


class SharedPatch:
    """`replacements`: (owner, attribute name, replacement) triples; `on_restore` runs, under the lock, when the
    last block leaves, after the originals are back."""

    def __init__(self, replacements: list[tuple[object, str, object]], on_restore: Callable[[], None] | None = None):
        self._replacements = replacements
        self._on_restore = on_restore
        self._lock = threading.Lock()
        self._depth = 0
        self._originals: dict[tuple[int, str], object] = {}

    def active(self) -> bool:
        """Whether a block of `installed()` is running (in any thread)."""
        with self._lock:
            return self._depth > 0

    def original(self, owner, name: str):
        """The attribute `owner.name` had before the patch (itself while the patch is not installed)."""
        return self._originals.get((id(owner), name)) or getattr(owner, name)

    @contextmanager
    def installed(self):
        with self._lock:
            if self._depth == 0:
                for owner, name, replacement in self._replacements:
                    self._originals[(id(owner), name)] = getattr(owner, name)
                    setattr(owner, name, replacement)
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    for owner, name, _ in self._replacements:
                        setattr(owner, name, self._originals.pop((id(owner), name)))
                    if self._on_restore is not None:
                        self._on_restore()
