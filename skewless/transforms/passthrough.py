"""`transform: passthrough`: the raw value (filled when it may be missing)."""

from __future__ import annotations

from skewless.transforms.base import Transform


class Passthrough(Transform):
    name = "passthrough"
    doc = "the raw value, unchanged"
    shapes = True
    native_ops = frozenset()
    native_layers = 'none: exactly'

    def row_wise(self, feature) -> bool:
        return True

    def transform(self, value, options: dict, vocabulary=None, columns=None):
        return value

    def native(self, plan, graph) -> str | None:
        plan.layers = []
        plan.probe = {"points": [0.0], "scale": 1.0}
        return None


TRANSFORM = Passthrough()
