"""Train vs eval, per feature, from the run's per-split statistics protos (RUN_DIR/statistics/Split-*/): the
shares drawn side by side and the distance between the splits, measured by skewless.drift as `skewless
validate` measures it (the report shows that number, it does not compute its own). A numeric feature's shares
are drawn over the splits' STANDARD histograms cut at their common boundaries (`histogram_masses`).

Protobuf and NumPy only: no TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skewless.drift import SKEW, FeatureDistance, Thresholds, feature_distance
from skewless.statistics_files import feature_name, read_statistics, statistics_splits


@dataclass(frozen=True)
class NumericShares:
    """Each split's share of rows per common bin: `edges` bound the interval bins, `points` are single values
    (0 among them when a split has zeros), drawn as bars of their own."""

    edges: list[float]
    points: list[float]
    shares: dict[str, list[float]]  # split -> interval shares then point shares
    zeros: dict[str, tuple[int, int]]  # split -> (num_zeros, rows with a value)


@dataclass(frozen=True)
class SplitView:
    feature: str
    splits: list[str]
    distance: FeatureDistance | None  # the first split against the second; None with one split
    counts: dict[str, list[tuple[str, int]]] | None  # categorical: split -> its top values
    values: dict[str, int]  # split -> rows with a value (what the shares are of)
    numeric: NumericShares | None


def split_views(run_dir: str, splits: list[str]) -> dict[str, SplitView]:
    """feature -> its view over the run's splits with statistics (in `splits`' order); {} without statistics."""
    present = set(statistics_splits(run_dir))
    splits = [split for split in splits if split in present]
    if not splits:
        return {}
    datasets = {split: {feature_name(f): f for f in read_statistics(run_dir, split).features} for split in splits}
    views = {}
    for name in datasets[splits[0]]:
        per_split = {split: datasets[split][name] for split in splits if name in datasets[split]}
        shown = list(per_split)
        kind = per_split[shown[0]].WhichOneof("stats")
        if kind not in ("string_stats", "num_stats"):
            continue  # images (bytes_stats): no distribution to draw
        distance = None
        if len(shown) > 1:
            distance = feature_distance(per_split[shown[0]], per_split[shown[1]], Thresholds(), SKEW)
        values = {split: int(getattr(f, kind).common_stats.num_non_missing) for split, f in per_split.items()}
        if kind == "string_stats":
            counts = {split: [(top.value, int(top.frequency)) for top in f.string_stats.top_values]
                      for split, f in per_split.items()}
            views[name] = SplitView(name, shown, distance, counts, values, None)
        else:
            views[name] = SplitView(name, shown, distance, None, values, _numeric_shares(per_split))
    return views


def _numeric_shares(per_split: dict) -> NumericShares:
    histograms = [standard_histogram(f) for f in per_split.values()]
    zero_counts = [f.num_stats.num_zeros for f in per_split.values()]
    masses = histogram_masses(histograms, zero_counts)
    edges, points = common_bins(histograms, zero_counts)
    shares, zeros = {}, {}
    for (split, feature), mass in zip(per_split.items(), masses):
        total = mass.sum()
        shares[split] = (mass / total).tolist() if total else [0.0] * len(mass)
        zeros[split] = (int(feature.num_stats.num_zeros), int(feature.num_stats.common_stats.num_non_missing))
    return NumericShares([float(e) for e in edges], [float(p) for p in points], shares, zeros)


def histogram_masses(histograms: list, zeros: list[float] | None = None) -> list[np.ndarray]:
    """Histograms (lists of (low, high, count)) -> their counts in common bins: the intervals between the union of
    their boundaries, then one bin per value of a zero-width bucket, and one for 0 when `zeros` (each histogram's
    exact count of zeros, num_zeros) has any; each bucket's other rows spread evenly over its width.

    Zeros get a bin of their own because a column of mostly zeros (capital-loss) has them all in its first
    bucket, whose width depends on the max: spread evenly they would make two samples of one distribution differ.
    """
    zeros = zeros or [0.0] * len(histograms)
    edges, points = common_bins(histograms, zeros)
    masses = []
    for buckets, zero_count in zip(histograms, zeros):
        intervals = np.zeros(max(len(edges) - 1, 0))
        at_points = dict.fromkeys(points, 0.0)
        # a value on an edge is counted in the bucket that ends there (or the first, for the minimum)
        holding_zero = next((i for i, (low, high, _) in enumerate(buckets) if low <= 0 <= high), None)
        for index, (low, high, count) in enumerate(buckets):
            if index == holding_zero and zero_count:
                moved = min(zero_count, count)
                at_points[0.0] += moved
                count -= moved
            if high > low:
                overlap = np.clip(np.minimum(edges[1:], high) - np.maximum(edges[:-1], low), 0.0, None)
                intervals += count * overlap / (high - low)
            else:
                at_points[low] += count
        masses.append(np.concatenate([intervals, list(at_points.values())]))
    return masses


def common_bins(histograms: list, zeros: list[float]) -> tuple[np.ndarray, list[float]]:
    """`histogram_masses`' bins: the union of the histograms' bucket edges, and the single values (zero-width
    buckets, and 0 when any histogram has zeros)."""
    edges = np.unique([x for buckets in histograms for low, high, _ in buckets if high > low for x in (low, high)])
    points = {low for buckets in histograms for low, high, _ in buckets if high == low}
    return edges, sorted(points | ({0.0} if any(zeros) else set()))


def standard_histogram(feature) -> list[tuple[float, float, float]]:
    from tensorflow_metadata.proto.v0 import statistics_pb2

    for histogram in feature.num_stats.histograms:
        if histogram.type == statistics_pb2.Histogram.STANDARD:
            return [(b.low_value, b.high_value, b.sample_count) for b in histogram.buckets]
    return []
