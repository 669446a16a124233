"""The transform graph on disk: where it is in a run directory, its label column, its feature specs.

A run directory (written by `skewless run`, `skewless.run_directory.RunDirectory`) holds the graph and
names the label column in its run summary; a bare tf.Transform output directory works too, with the label
given explicitly.
"""

from __future__ import annotations

import os

import tensorflow as tf

from skewless.errors import InputError, SchemaError
from skewless.input_formats import SYNTAX_OPTIONS, VALUE_OPTIONS
from skewless.run_directory import RUN_FILE, RunDirectory, around_graph

# The default of every `label` argument: read the label column from the run's run summary.
FROM_RUN = f"<from {RUN_FILE}>"


def find_graph_dir(directory: str | os.PathLike) -> str:
    """The tf.Transform output directory inside `directory` (a run directory) or `directory` itself."""
    directory = os.fspath(directory)
    run = RunDirectory(directory)
    if tf.io.gfile.isdir(run.transform_fn_dir):
        return run.graph_dir
    if tf.io.gfile.isdir(os.path.join(directory, "transform_fn")):
        return directory
    raise InputError(f"{directory}: not a run directory nor a transform graph (no transform_fn/ inside)")


def label_column(directory: str | os.PathLike, label: str | None = FROM_RUN) -> str | None:
    """`label`, or when it is `FROM_RUN` the raw label column named in the run summary beside the graph
    (None when there is none)."""
    if label != FROM_RUN:
        return label
    for run in around_graph(directory):
        summary = run.read_summary_if_any()
        if summary is not None:
            return summary.label_column
    return None


def label_scale(directory: str | os.PathLike, label: str | None) -> dict | None:
    """How the run beside the graph transformed its regression label column `label` (run.json's label:
    ``{"transform": ..., **statistics}``, skewless/layers/label_scale.py), or None when it did not."""
    found = _run_label(directory, label)
    return None if found is None else found.scale


def label_classes(directory: str | os.PathLike, label: str | None) -> list[str] | None:
    """The class each id of the label column `label` stands for, in id order, when the run beside the graph
    wrote it as class ids (run.json's label.classes: its map or vocabulary), else None."""
    found = _run_label(directory, label)
    return None if found is None or found.classes is None else list(found.classes)


def _run_label(directory: str | os.PathLike, label: str | None):
    """run.json's label of the run beside the graph when it is the column `label`, else None."""
    for run in around_graph(directory):
        summary = run.read_summary_if_any()
        if summary is not None:
            found = summary.label
            return found if found is not None and found.column == label else None
    return None


def reading_rules(directory: str | os.PathLike) -> dict | None:
    """How the run beside the graph read its raw values, for readers of new data (`skewless predict`):
    ``{"format": ..., its `VALUE_OPTIONS` and `SYNTAX_OPTIONS`, "lists": its list columns, "features": each
    feature's options}``, as its config.yaml says; None when no run is beside the graph."""
    for run in around_graph(directory):
        config = run.read_config()
        if config:
            source = config.get("input") or {}
            rules = {key: source[key] for key in ("format", *VALUE_OPTIONS, *SYNTAX_OPTIONS) if key in source}
            features = config.get("features") or {}
            # a feature's raw column: its `column`, else its name
            rules["lists"] = sorted({(options or {}).get("column") or name for name, options in features.items()
                                     if (options or {}).get("list")})
            # a transform's own check of raw values (a datetime's parse) quarantines rows in the job: predict too
            rules["features"] = {name: options or {} for name, options in features.items()}
            return rules
    return None


def spec_to_json(spec: tf.io.FixedLenFeature | tf.io.VarLenFeature | tf.io.RaggedFeature) -> dict:
    """A tf.io feature spec as a JSON-friendly dict (a Keras config must be plain JSON).

    Ragged features are those of SequenceExample feature lists (see `skewless.sequence_specs`): a value
    key and row-lengths partitions."""
    if isinstance(spec, tf.io.FixedLenFeature):
        default = spec.default_value
        if default is not None:
            default = tf.nest.map_structure(_plain, tf.constant(default).numpy().tolist())
        return {"kind": "fixed", "dtype": spec.dtype.name, "shape": list(spec.shape), "default": default}
    if isinstance(spec, tf.io.VarLenFeature):
        return {"kind": "var", "dtype": spec.dtype.name}
    if isinstance(spec, tf.io.RaggedFeature) and all(
        isinstance(partition, tf.io.RaggedFeature.RowLengths) for partition in spec.partitions
    ):
        return {"kind": "ragged", "dtype": spec.dtype.name, "value_key": spec.value_key,
                "row_lengths": [partition.key for partition in spec.partitions],
                "row_splits_dtype": spec.row_splits_dtype.name}
    raise SchemaError(f"feature spec {spec!r} is not supported (FixedLenFeature, VarLenFeature and RaggedFeature "
                      "with row-lengths partitions are)")


def spec_from_json(data: dict) -> tf.io.FixedLenFeature | tf.io.VarLenFeature | tf.io.RaggedFeature:
    """The inverse of `spec_to_json`."""
    dtype = tf.as_dtype(data["dtype"])
    if data["kind"] == "var":
        return tf.io.VarLenFeature(dtype)
    if data["kind"] == "ragged":
        partitions = [tf.io.RaggedFeature.RowLengths(key) for key in data["row_lengths"]]
        return tf.io.RaggedFeature(dtype, value_key=data["value_key"], partitions=partitions,
                                   row_splits_dtype=tf.as_dtype(data["row_splits_dtype"]))
    return tf.io.FixedLenFeature(data["shape"], dtype, default_value=data.get("default"))


def specs_to_json(specs: dict) -> dict:
    return {name: spec_to_json(spec) for name, spec in sorted(specs.items())}


def specs_from_json(data: dict) -> dict:
    return {name: spec_from_json(spec) for name, spec in data.items()}


def _plain(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value
