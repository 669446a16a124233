"""Train vs eval, per feature, from the run's per-split statistics protos (RUN_DIR/statistics/Split-*/): the
shares drawn side by side and the distance between the splits, measured by skewless.drift as `skewless
validate` measures it (the report shows that number, it does not compute its own), a numeric feature's shares
on the bins that distance is measured on.

Protobuf and NumPy only: no TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skewless.drift import (
    SKEW, FeatureDistance, Thresholds, drift_exclusions, excluded_distance, feature_distance, numeric_masses,
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
    exclude = drift_exclusions(run_dir)
    views = {}
    for name in datasets[splits[0]]:
        per_split = {split: datasets[split][name] for split in splits if name in datasets[split]}
        first, *others = per_split.values()
        distance = None
        if others:
            distance = (excluded_distance(first, Thresholds(), SKEW) if name in exclude else
                        feature_distance(first, others[0], Thresholds(), SKEW))
        view = feature_view(name, per_split, distance)
        if view is not None:
            views[name] = view
    return views


def feature_view(name: str, per_split: dict, distance: FeatureDistance | None) -> SplitView | None:
    """One feature's statistics in several datasets (label -> its FeatureNameStatistics, the baseline first)
    drawn side by side, with the distance between the first two; None for an image (no distribution to draw)."""
    shown = list(per_split)
    kind = per_split[shown[0]].WhichOneof("stats")
    if kind not in ("string_stats", "num_stats"):
        return None
    values = {split: int(getattr(f, kind).common_stats.num_non_missing) for split, f in per_split.items()}
    if kind == "string_stats":
        counts = {split: [(top.value, int(top.frequency)) for top in f.string_stats.top_values]
                  for split, f in per_split.items()}
        return SplitView(name, shown, distance, counts, values, None)
    return SplitView(name, shown, distance, None, values, _numeric_shares(per_split))


def _numeric_shares(per_split: dict) -> NumericShares | None:
    """Each split's shares of rows in the bins `skewless validate` measures the distance on (`numeric_masses`:
    the first split's deciles, a value holding a tenth of its rows and 0 as bins of their own), drawn as
    intervals and single values; the rows below and above the first split's range, bins of their own for the
    distance, are drawn in its first and last interval, stretched to every split's min and max. None when the
    splits cannot be binned (no values, statistics that predate the distribution histogram)."""
    found = numeric_masses(*per_split.values())
    if isinstance(found, str):
        return None
    edges, masses = found
    # bin i is (edges[i], edges[i + 1]]; a single value's bin runs from the float just below it
    single = [bool(edges[i] == np.nextafter(edges[i + 1], -np.inf)) for i in range(len(edges) - 1)]
    intervals = [i for i, alone in enumerate(single) if not alone]
    points = [i for i, alone in enumerate(single) if alone]
    shares, zeros = {}, {}
    for (split, feature), rows in zip(per_split.items(), masses):
        in_bins = rows[1:-1].copy()
        ends = intervals or points
        in_bins[ends[0]] += rows[0]
        in_bins[ends[-1]] += rows[-1]
        total = rows.sum()
        shares[split] = [float(in_bins[i] / total) if total else 0.0 for i in intervals + points]
        zeros[split] = (int(feature.num_stats.num_zeros), int(feature.num_stats.common_stats.num_non_missing))
    drawn = []
    if intervals:
        low = min(min(f.num_stats.min for f in per_split.values()), float(edges[intervals[0]]))
        high = max(max(f.num_stats.max for f in per_split.values()), float(edges[intervals[-1] + 1]))
        # consecutive intervals share an edge, up to the one float a single value's bin between them takes
        drawn = [low] + [float(edges[i + 1]) for i in intervals[:-1]] + [high]
    return NumericShares(drawn, [float(edges[i + 1]) for i in points], shares, zeros)
