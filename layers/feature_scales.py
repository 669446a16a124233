"""What `model_inputs` standardizes the numbers a transform left unscaled with (epoch seconds, years, passthrough
counts): their mean and standard deviation over the first rows of the run's first split, as its shards hold them.

A number a transform scaled already (`Transform.unit_scale_outputs`: a z-score, [0, 1], sin and cos, a missing
indicator) is fed as it is. The statistics are constants of the model from then on: training and serving scale a
row alike, whatever rows come with it.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from skewless.config import load_config
from skewless.errors import InputError
from skewless.run_directory import RunDirectory, around_graph
from skewless.safe_names import missing_indicator_name

# Rows the statistics are taken over: enough for a mean and a deviation to a few digits, read in a second or two
SCALE_ROWS = 100_000
_BATCH = 4096


def unit_scale_features(run_dir) -> set[str] | None:
    """The transformed features of unit scale already, by the run's config; None where the config is not found
    (a graph folder alone: every number is then standardized)."""
    run = _run_of(run_dir)
    if run is None or not tf.io.gfile.exists(run.config_file):
        return None
    config = load_config(run.config_file)
    scaled = set()
    for name, feature in config.features.items():
        scaled.update(feature.transform_kind.unit_scale_outputs(name, feature))
        if feature.missing_indicator:
            scaled.add(missing_indicator_name(name))
    return scaled


def feature_scales(run_dir, spec: dict) -> dict[str, tuple[float, float]]:
    """{feature: (mean, standard deviation)} of the number features `spec` (name -> FixedLenFeature) over the first
    SCALE_ROWS rows of the run's first split, every position of a fixed shape together, in float64; a deviation of
    0 is taken as 1 (the values are then only centered)."""
    if not spec:
        return {}
    run = _run_of(run_dir)
    summary = run.read_summary_if_any() if run is not None else None
    shards = next(iter(summary.shards.values()), []) if summary is not None else []
    if not shards:
        raise InputError(f"{run_dir}: model_inputs standardizes the numbers {sorted(spec)} with their statistics over "
                         "the run's shards, and finds none (pass the run directory)")
    paths = [run.shard_file(shard.path) for shard in shards]
    compression = "GZIP" if paths[0].endswith(".gz") else ""
    records = tf.data.TFRecordDataset(paths, compression_type=compression).take(SCALE_ROWS).batch(_BATCH)
    values: dict[str, list] = {name: [] for name in spec}
    for batch in records:
        # an Example parses as a SequenceExample whose context is its features: one parse for both kinds of run
        context = tf.io.parse_sequence_example(batch, context_features=spec)[0]
        for name in spec:
            values[name].append(np.asarray(context[name], np.float64).ravel())
    scales = {}
    for name, parts in values.items():
        column = np.concatenate(parts)
        mean, deviation = (float(column.mean()), float(column.std())) if len(column) else (0.0, 1.0)
        scales[name] = (mean, deviation if deviation > 0 and np.isfinite(deviation) else 1.0)
    return scales


def _run_of(run_dir) -> RunDirectory | None:
    return next((run for run in around_graph(run_dir) if run.has_summary()), None)
