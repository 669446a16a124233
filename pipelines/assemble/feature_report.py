"""run.json's `features` of a job: each feature's transform, type and kind, its raw column's statistics, what its
transform adds from the graph (`Transform.run_fields`) and its out-of-vocabulary rows."""

from __future__ import annotations

import tensorflow_transform as tft

from skewless.config import JobConfig
from skewless.errors import InputError
from skewless.lazy_imports import lazy_import
from skewless.pipelines.write.unit_summary import UnitSummary
from skewless.run_directory import RunDirectory
from skewless.safe_names import most_frequent_filename
from skewless.transforms import TRANSFORMS

# on first use: skewless.layers imports Keras 3, which a job reads the graph back with only where a feature's
# float32 results may have overflowed (tests/cli/test_cli_startup.py checks that a run never loads it otherwise)
graph_analyzers = lazy_import("skewless.layers.graph_analyzers")


def feature_report(config: JobConfig, columns, raw_stats: dict, parts: list[UnitSummary], staging: str) -> dict:
    graph = tft.TFTransformOutput(RunDirectory(staging).graph_dir)
    kinds = {c.name: c.kind for c in columns}
    optional = {c.name for c in columns if c.optional}
    report = {}
    for name, feature in config.features.items():
        transform = feature.transform_kind
        if transform.new_output:  # no raw column of its own
            report[name] = {"transform": feature.transform, "type": "int", "kind": "categorical",
                            **transform.run_fields(name, feature, graph)}
            continue
        column = feature.raw_column(name)  # the statistics are its raw column's
        entry = {"transform": feature.transform, "type": kinds[column],
                 "kind": "categorical" if kinds[column] == "bytes" or transform.categories
                 else "numeric", **({"column": column} if column != name else {}), **raw_stats[column]}
        if transform.image:
            entry.pop("top_values", None)  # encoded image bytes, not values to show
        entry.update(transform.run_fields(name, feature, graph))
        if transform.counts_oov:
            entry["oov_rows"] = sum(p.oov[name] for p in parts)
        if feature.default is not None:
            entry["default"] = feature.default
        if feature.fill is not None:
            entry["fill"] = feature.fill
        if feature.fill == "most_frequent" and column in optional:  # a required column has nothing to fill
            entry["most_frequent_file"] = most_frequent_filename(column)
        report[name] = entry
    _check_float32(config, raw_stats, staging)
    return report


def _check_float32(config: JobConfig, raw_stats: dict, staging: str) -> None:
    """Fails naming the first feature whose tf.Transform analyzer results overflowed float32 on this data
    (`Transform.float32_problem`): the graph is read back only where the statistics say it may have
    (`float32_risk`: nothing to read for most configs), before anything is published."""
    risky = {name: feature.transform_kind for name, feature in config.features.items()
             if not feature.transform_kind.new_output
             and feature.transform_kind.float32_risk(feature, raw_stats.get(feature.raw_column(name), {}))}
    label = config.label
    if label is not None and label.transform in TRANSFORMS and TRANSFORMS[label.transform].float32_risk(
            None, raw_stats.get(label.column, {})):
        risky[label.column] = TRANSFORMS[label.transform]
    if not risky:
        return
    found = graph_analyzers.read_graph_features(RunDirectory(staging).graph_dir)
    for name, transform in risky.items():
        problem = transform.float32_problem(found[name]) if name in found else None
        if problem:
            raise InputError(f"transformed feature {name!r}: {problem}; nothing was written")

