"""A transformed regression label undone: the export's signatures serve predictions in the label's own units.

With ``label: {column: price, transform: z_score}`` (or ``log``, ``scale_0_1``) the job writes the label as the
feature transform of that name writes a feature, with statistics over the whole dataset, so the model learns
and predicts transformed values. The job reads those statistics back from its graph (the very float32 constants
the graph computes with, as the native layers read theirs) into run.json's ``label``; `TransformLayer` carries
them, and `export_serving_model` adds an output named after the label column holding `original_units` of the
model's output, beside the model's own output (still in the transformed units). Each transform module says how
(`Transform.label_statistics`, `Transform.original_units`):

- ``z_score``: ``y * std + mean`` (``std`` 1 where it is 0: tf.Transform then leaves ``x - mean`` undivided);
- ``log`` (log1p, then a z-score): ``expm1(y * std + mean)``, ``mean``/``std`` those of ``log1p(x)``;
- ``scale_0_1``: ``y * (max - min) + min`` (a label of one value gives that value back).

The inverse is computed in float64 and rounded to the model output's dtype.
"""

from __future__ import annotations

import os

import tensorflow as tf

from skewless.errors import SchemaError
from skewless.layers.graph_analyzers import read_graph_features
from skewless.transforms import TRANSFORMS


def label_statistics(graph_dir: str | os.PathLike, label: str, transform: str) -> dict[str, float]:
    """The statistics the graph at `graph_dir` scales the label column `label` with (`transform`):
    ``{"mean", "std"}`` for z_score and log, ``{"min", "max"}`` for scale_0_1."""
    statistics = TRANSFORMS[transform].label_statistics(read_graph_features(graph_dir)[label])
    if statistics is None:
        raise SchemaError(f"label {label!r}: its {transform} statistics are not in the graph at {graph_dir}")
    return statistics


def original_units(value, scale: dict):
    """`value` (a prediction of the transformed label) in the label's units; `scale` is run.json's
    ``{"transform": ..., **label_statistics}``."""
    transform = TRANSFORMS.get(scale["transform"])
    if transform is None or not transform.label_transform:
        raise SchemaError(f"label transform {scale['transform']!r}: no inverse")
    return tf.cast(transform.original_units(tf.cast(value, tf.float64), scale), value.dtype)
