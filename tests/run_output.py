"""A run's output read back by the tests: a split's transformed rows (by column, or with its records in order),
the bytes of its files, its quarantined rows; the smallest run summary."""

import collections
import glob
import json
import os

import numpy as np

from skewless.run_directory import RunDirectory
from skewless.run_summary import SCHEMA_VERSION


def forget_kept_graphs():
    """What a fresh process has: no tf.Transform SavedModel kept for a rerun, no transform graph kept loaded."""
    # imported here: the helpers above read outputs without importing tf.Transform
    from skewless.pipelines.analyze import saved_model_reuse
    from skewless.pipelines.write import loaded_graph

    saved_model_reuse.forget()
    loaded_graph.forget()


def read_split(result, split):
    import tensorflow as tf
    import tensorflow_transform as tft

    spec = tft.TFTransformOutput(result.graph_dir).transformed_feature_spec()
    files = sorted(glob.glob(os.path.join(result.output_dir, "data", f"{split}-*.tfrecord.gz")))
    rows = collections.defaultdict(list)
    for batch in tf.data.TFRecordDataset(files, compression_type="GZIP").batch(4096):
        for name, value in tf.io.parse_example(batch, spec).items():
            rows[name].append(value.numpy())
    return {name: np.concatenate(values) for name, values in rows.items()}


def files_of(run_dir, parts=("data", "transform_graph", "statistics")) -> dict[str, bytes]:
    """Every file of the run directory's `parts` (folders), by path relative to the run directory."""
    found = {}
    for part in parts:
        for folder, _, names in os.walk(os.path.join(run_dir, part)):
            for name in names:
                path = os.path.join(folder, name)
                with open(path, "rb") as handle:
                    found[os.path.relpath(path, run_dir)] = handle.read()
    return found


def read_rows(output_dir, split):
    """The split's rows in input order (shards in unit order), parsed with the output's own graph."""
    import tensorflow as tf
    import tensorflow_transform as tft

    spec = tft.TFTransformOutput(os.path.join(output_dir, "transform_graph")).transformed_feature_spec()
    paths = sorted(glob.glob(os.path.join(output_dir, "data", f"{split}-*.tfrecord.gz")))
    records = list(tf.data.TFRecordDataset(paths, compression_type="GZIP"))
    parsed = tf.io.parse_example(tf.stack(records), spec)
    return {name: value.numpy() for name, value in parsed.items()}, records


def minimal_summary() -> dict:
    """The smallest run.json a RunSummary reads: one feature, one shard."""
    return {
        "schema_version": SCHEMA_VERSION, "name": "t", "rows": {"read": 3, "written": {"train": 2}, "quarantined": 1},
        "features": {"age": {"transform": "z_score", "mean": 1.5}}, "label": None,
        "shards": {"train": [{"path": "data/train-00000-of-00001.tfrecord.gz", "rows": 2, "bytes": 10}]},
        "compression": "gzip", "format": "example", "analysis": {"datasets": 1, "analyzed": 1, "cache_dir": None},
        "seconds": {"total": 1.0}, "versions": {"skewless": "0.1.0"},
        "platform": {"machine": "x86_64", "cpus": 2, "python": "3.11.0"},
    }


def quarantine_rows(output_dir) -> list[dict]:
    """Every quarantined row (source, line, reason, raw text), file by file in unit order."""
    rows = []
    for path in RunDirectory.of(output_dir).quarantine_files:
        with open(path, encoding="utf-8") as handle:
            rows.extend(json.loads(line) for line in handle if line.strip())
    return rows


def quarantined(output_dir) -> dict[int, str]:
    """{line: reason} of every quarantined row (for a run of one input file, whose lines are unique)."""
    return {row["line"]: row["reason"] for row in quarantine_rows(output_dir)}