"""RUN_DIR/statistics/Split-{split}/FeatureStats.pb: where the job writes each split's raw statistics (TFX
StatisticsGen's layout), and reading them back for `inspect` and `validate`.

Reading needs tensorflow_metadata's protos only (protobuf, no TensorFlow), so the light commands stay light.
"""

from __future__ import annotations

import glob
import os

from google.protobuf.message import DecodeError
from tensorflow_metadata.proto.v0 import statistics_pb2

from skewless.errors import InputError
from skewless.run_directory import STATISTICS_DIR, statistics_name, statistics_split

APPROXIMATE = "approximate"  # the custom_stats entry naming a feature's statistics read from sketches
DISTRIBUTION = "distribution"  # the custom_stats histogram of a numeric feature's values that validate bins


def statistics_path(run_dir: str, split: str) -> str:
    return os.path.join(run_dir, STATISTICS_DIR, statistics_name(split))


def statistics_splits(run_dir: str) -> list[str]:
    """The splits with a statistics file, sorted; [] for a run written before they existed."""
    folder = os.path.join(run_dir, STATISTICS_DIR)
    found = glob.glob(os.path.join(glob.escape(folder), statistics_name("*")))
    return sorted(statistics_split(os.path.relpath(path, folder).replace(os.sep, "/")) for path in found)


def read_statistics(run_dir: str, split: str):
    """The split's DatasetFeatureStatistics (the one dataset of its file); InputError naming what is wrong."""
    path = statistics_path(run_dir, split)
    if not os.path.exists(path):
        known = ", ".join(statistics_splits(run_dir)) or "none"
        raise InputError(f"{path}: no statistics for split {split!r} (splits with statistics: {known})")
    statistics = statistics_pb2.DatasetFeatureStatisticsList()
    try:
        with open(path, "rb") as handle:
            statistics.ParseFromString(handle.read())
    except (OSError, DecodeError) as error:
        raise InputError(f"{path}: cannot read statistics: {error}") from None
    if len(statistics.datasets) != 1:
        raise InputError(f"{path}: holds {len(statistics.datasets)} datasets, expected one")
    return statistics.datasets[0]


def feature_name(feature) -> str:
    """A FeatureNameStatistics' name: its path's steps joined by '.', or its legacy `name`."""
    return ".".join(feature.path.step) if feature.HasField("path") else feature.name


def describe_statistics(dataset) -> dict:
    """A split's statistics as plain JSON-ready data: num_examples and, per feature, the figures people read."""
    features = {}
    for feature in dataset.features:
        kind = feature.WhichOneof("stats")
        stats = getattr(feature, kind)
        common = stats.common_stats
        entry = {"type": statistics_pb2.FeatureNameStatistics.Type.Name(feature.type),
                 "num_non_missing": common.num_non_missing, "num_missing": common.num_missing,
                 "avg_num_values": common.avg_num_values}
        if kind == "num_stats":
            entry.update(mean=stats.mean, std_dev=stats.std_dev, num_zeros=stats.num_zeros, min=stats.min,
                         median=stats.median, max=stats.max)
        elif kind == "string_stats":
            entry.update(unique=stats.unique, avg_length=stats.avg_length,
                         top_values=[[top.value, int(top.frequency)] for top in stats.top_values])
        approximate = [custom.str for custom in feature.custom_stats if custom.name == APPROXIMATE]
        if approximate:
            entry["approximate"] = approximate[0]
        features[feature_name(feature)] = entry
    return {"num_examples": dataset.num_examples, "features": features}
