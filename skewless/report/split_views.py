"""Train vs eval, per feature, from the run's per-split statistics protos (RUN_DIR/statistics/Split-*/): the
shares drawn side by side and the distance between the splits, measured by skewless.drift as `skewless
validate` measures it (the report shows that number, it does not compute its own).

Protobuf and NumPy only: no TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

from skewless.drift import (
    SKEW, FeatureDistance, Thresholds, common_bins, feature_distance, histogram_masses, standard_histogram,
)
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
