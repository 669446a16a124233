"""`skewless inspect RUN_DIR`: what a run holds, as tables on a terminal or as JSON.

The schema (raw feature spec) and the transformed spec come from the graph's own schemas, as do the
vocabularies; statistics, shards and row counts come from
the run summary (`RunDirectory.read_summary`). Apache Beam is never imported, and
TensorFlow (seconds) only for a schema with more than plain fixed-shape and variable-length features
(feature lists, ragged or sparse tensors), whose specs tf.Transform's own conversion gives.
"""

from __future__ import annotations

import os

from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2

from skewless.errors import InputError
from skewless.lazy_imports import lazy_import
from skewless.pipelines.output import files, object_store
from skewless.report.run_files import (
    oov_rate,
    run_statistics,
    split_order,
    vocabulary_file,
)
from skewless.run_directory import RunDirectory
from skewless.safe_names import vocabulary_filename
from skewless.statistics_files import describe_statistics, read_statistics, statistics_splits

# on first use: `skewless inspect` reads a plain run from its files; only a run with lists or sequences needs
# tf.Transform
tft = lazy_import("tensorflow_transform")
transform_graph = lazy_import("skewless.layers.transform_graph")

# The statistics of run.json that `describe_run` passes through for each feature.
_STATISTICS = ("count", "missing", "missing_fraction", "mean", "std", "min", "max", "quantiles", "distinct",
               "top_values", "listed_from", "histogram", "exact", "constant", "date_range")


def describe_run(run_dir: str | os.PathLike, top: int = 10) -> dict:
    """Everything `inspect` shows, as plain JSON-ready data.

    Keys: name, run_dir, rows, label, raw_features and transformed_features (tf.io specs as
    {"kind": "fixed"|"var", "dtype", "shape", "default"}), features (transform, kind, type, the
    run.json statistics, and for vocabulary features ``vocabulary``: {file, size, num_oov_buckets,
    oov_rows, oov_rate, head: the first `top` entries, most frequent first}), shards,
    split_statistics (per split, `statistics_files.describe_statistics` of its FeatureStats.pb), compression,
    seconds, versions.
    """
    shown = os.fspath(run_dir) if not files.is_local(os.fspath(run_dir)) else os.path.abspath(run_dir)
    run_dir = object_store.local_run(run_dir)
    run = RunDirectory.of(run_dir)
    summary = run_statistics(run)
    raw_features, transformed_features = _specs(run)
    features = {}
    for name, stats in summary.features.items():
        entry = {key: stats[key] for key in ("transform", "kind", "type", "default") if key in stats}
        entry.update({key: stats[key] for key in _STATISTICS if key in stats})
        if "vocabulary_size" in stats:
            filename = stats.get("vocabulary_file") or vocabulary_filename(name)  # runs before it was recorded
            values = vocabulary_file(run, filename)
            if values is None:
                raise InputError(f"{run_dir}: the graph has no vocabulary file {filename}")
            entry["vocabulary"] = {
                "file": filename,
                "size": len(values),
                "num_oov_buckets": stats.get("num_oov_buckets"),
                "oov_rows": stats.get("oov_rows"),
                "oov_rate": oov_rate(summary, stats),
                "head": values[:top],
            }
        features[name] = entry
    splits = split_order(summary, run.read_config())
    dumped = summary.model_dump()
    rows = dict(summary.rows.model_dump(exclude_none=True),
                written={split: summary.rows.written[split] for split in splits})
    shards = dumped["shards"]
    return {
        "name": summary.name,
        "run_dir": shown,
        "rows": rows,
        # as run.json holds it: a label's transform and statistics only where it has them
        "label": summary.label.model_dump(exclude_unset=True) if summary.label is not None else None,
        "raw_features": raw_features,
        "transformed_features": transformed_features,
        "features": features,
        "shards": {split: shards[split] for split in splits if split in shards},
        # statistics/Split-*/FeatureStats.pb; {} for runs written before they existed
        "split_statistics": {split: describe_statistics(read_statistics(run_dir, split))
                             for split in splits if split in statistics_splits(run_dir)},
        "compression": summary.compression,
        "seconds": summary.seconds,
        "versions": summary.versions,
    }


def _specs(run: RunDirectory) -> tuple[dict, dict]:
    """The raw and the transformed feature specs of the run's graph, as `spec_to_json` writes them."""
    schemas = [os.path.join(folder, "schema.pbtxt") for folder in (run.raw_metadata_dir, run.transformed_metadata_dir)]
    plain = [_plain_specs(schema) for schema in schemas]
    if None not in plain:
        return plain[0], plain[1]
    if not os.path.isdir(run.transform_fn_dir):
        # said before importing TensorFlow, whose start-up lines would come before the one-line error
        raise InputError(f"{run.graph_dir}: the run's transform graph is missing (no transform_fn/ folder)")
    graph = tft.TFTransformOutput(transform_graph.find_graph_dir(run.path))
    try:
        raw_spec = graph.raw_feature_spec()
    except Exception as error:  # tf.Transform raises plain errors when metadata/ is missing or unreadable
        raise InputError(f"{run.path}: cannot read the raw schema of the graph: {error}") from None
    return transform_graph.specs_to_json(raw_spec), transform_graph.specs_to_json(graph.transformed_feature_spec())


# tf.metadata's feature types -> the dtype tf.Transform parses them as
_DTYPES = {"INT": "int64", "FLOAT": "float32", "BYTES": "string"}


def _plain_specs(schema_path: str) -> dict | None:
    """The specs of a schema whose features are all plain: a fixed shape (FixedLenFeature, no default) or
    none (VarLenFeature), as tf.Transform reads them (tests/cli/test_inspect.py compares). None for anything
    else (no file, feature lists, sparse or ragged tensors): those take tf.Transform's own conversion."""
    try:
        with open(schema_path, encoding="utf-8") as handle:
            schema = text_format.Parse(handle.read(), schema_pb2.Schema())
    except (OSError, text_format.ParseError):
        return None
    if schema.sparse_feature or schema.tensor_representation_group or schema.weighted_feature:
        return None
    specs = {}
    for feature in schema.feature:
        dtype = _DTYPES.get(schema_pb2.FeatureType.Name(feature.type))
        if dtype is None or feature.deprecated or feature.HasField("lifecycle_stage"):
            return None
        if not feature.HasField("shape"):
            specs[feature.name] = {"kind": "var", "dtype": dtype}
        elif all(dim.size >= 0 for dim in feature.shape.dim):
            specs[feature.name] = {"kind": "fixed", "dtype": dtype, "shape": [dim.size for dim in feature.shape.dim],
                                   "default": None}
        else:
            return None
    return dict(sorted(specs.items()))
