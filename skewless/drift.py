"""`skewless validate`: drift between runs and skew between splits, from the runs' statistics protos,
measured as TFDV's comparators measure them.

- A string feature, or a categorical int (statistics with string_stats): the L-infinity distance between the
  two normalized value distributions (its rank_histogram: up to 1,000 values), the largest difference in the
  share of rows of any one value.
- A numeric feature: the Jensen-Shannon divergence (log base 2, so within [0, 1]) between the two
  STANDARD histograms, approximate: both are cut at the union of their bucket boundaries, each bucket's rows
  spread evenly over its width (zeros, counted exactly, and a bucket of zero width, a single value, are bins
  of their own).

A threshold per feature comes from a `--threshold name=X` flag, else from the schema's comparator for that
feature (`drift_comparator` between runs, `skew_comparator` between the splits of a run: its
`infinity_norm.threshold` or `jensen_shannon_divergence.threshold`; a string feature whose comparator sets
only the latter is measured by Jensen-Shannon over its values), else from `--threshold X`. Without one the
distance is shown and not judged. Reads protos only: no TensorFlow.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from skewless.errors import ConfigError
from skewless.statistics_files import feature_name, read_statistics

INFINITY_NORM = "L-infinity"
JENSEN_SHANNON = "Jensen-Shannon"
DRIFT = "drift_comparator"  # between two runs
SKEW = "skew_comparator"  # between the splits of one run


@dataclass(frozen=True)
class FeatureDistance:
    feature: str
    measure: str
    distance: float | None  # None: a side has no values to compare
    threshold: float | None

    @property
    def verdict(self) -> str:
        if self.distance is None:
            return "no values"
        if self.threshold is None:
            return "no threshold"
        return "CROSSED" if self.distance > self.threshold else "ok"


@dataclass(frozen=True)
class Comparison:
    """One pair of datasets compared: the baseline's statistics against the tested ones."""

    base: str  # "RUN_DIR:split"
    test: str
    comparator: str  # DRIFT or SKEW: which schema comparator gave the thresholds
    features: list[FeatureDistance]

    @property
    def crossed(self) -> list[FeatureDistance]:
        return [f for f in self.features if f.verdict == "CROSSED"]

    def to_json(self) -> dict:
        return {"base": self.base, "test": self.test, "comparator": self.comparator,
                "features": [dict(asdict(f), verdict=f.verdict) for f in self.features]}


@dataclass(frozen=True)
class Thresholds:
    """Where a feature's threshold comes from: a per-feature flag, the schema's comparator, the default flag."""

    default: float | None = None
    per_feature: dict | None = None
    schema: object = None  # a tf.metadata Schema, or None

    @classmethod
    def from_flags(cls, flags: list[str], schema=None) -> "Thresholds":
        """`flags`: "0.1" (every feature) or "name=0.05" (one feature; the last '=' separates the value)."""
        default, per_feature = None, {}
        for flag in flags:
            name, _, value = flag.rpartition("=")
            try:
                threshold = float(value)
            except ValueError:
                threshold = math.nan
            if not threshold >= 0:
                raise ConfigError(f"--threshold {flag}: not a distance >= 0 (give 0.1, or feature=0.1)")
            if name:
                per_feature[name] = threshold
            else:
                default = threshold
        return cls(default, per_feature, schema)

    def comparator(self, name: str, comparator: str):
        for feature in self.schema.feature if self.schema is not None else ():
            if feature.name == name and feature.HasField(comparator):
                return getattr(feature, comparator)
        return None

    def threshold(self, name: str, measure: str, comparator: str) -> float | None:
        if name in (self.per_feature or {}):
            return self.per_feature[name]
        schema_comparator = self.comparator(name, comparator)
        field = "infinity_norm" if measure == INFINITY_NORM else "jensen_shannon_divergence"
        if schema_comparator is not None and schema_comparator.HasField(field):
            return getattr(schema_comparator, field).threshold
        return self.default


def value_distribution(feature) -> dict[str, float]:
    """A string feature's values -> their share of the counted rows (its rank histogram)."""
    counts = {bucket.label: bucket.sample_count for bucket in feature.string_stats.rank_histogram.buckets}
    total = sum(counts.values())
    return {value: count / total for value, count in counts.items()} if total else {}


def infinity_norm(base: dict[str, float], test: dict[str, float]) -> float:
    return max(abs(base.get(value, 0.0) - test.get(value, 0.0)) for value in base.keys() | test.keys())


def jensen_shannon(base: np.ndarray, test: np.ndarray) -> float:
    """Of two distributions over the same bins (each summing to 1), log base 2."""
    middle = (base + test) / 2

    def kullback_leibler(p: np.ndarray) -> float:
        present = p > 0
        return float(np.sum(p[present] * np.log2(p[present] / middle[present])))

    return 0.5 * kullback_leibler(base) + 0.5 * kullback_leibler(test)


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


def _normalized(masses: list[np.ndarray]) -> list[np.ndarray] | None:
    totals = [m.sum() for m in masses]
    return None if min(totals) <= 0 else [m / total for m, total in zip(masses, totals)]


def feature_distance(base, test, thresholds: Thresholds, comparator: str) -> FeatureDistance:
    """The distance between one feature's statistics in two datasets, with its threshold."""
    name = feature_name(test)
    if test.WhichOneof("stats") == "string_stats":
        schema_comparator = thresholds.comparator(name, comparator)
        only_js = schema_comparator is not None and schema_comparator.HasField("jensen_shannon_divergence") \
            and not schema_comparator.HasField("infinity_norm")
        distributions = [value_distribution(base), value_distribution(test)]
        distance = None
        if all(distributions):
            if only_js:
                values = sorted(distributions[0].keys() | distributions[1].keys())
                distance = jensen_shannon(*(np.array([d.get(v, 0.0) for v in values]) for d in distributions))
            else:
                distance = infinity_norm(*distributions)
        measure = JENSEN_SHANNON if only_js else INFINITY_NORM
    else:
        measure = JENSEN_SHANNON
        masses = _normalized(histogram_masses([standard_histogram(base), standard_histogram(test)],
                                              [base.num_stats.num_zeros, test.num_stats.num_zeros]))
        distance = None if masses is None else jensen_shannon(*masses)
    return FeatureDistance(name, measure, distance, thresholds.threshold(name, measure, comparator))


def compare(base_run: str, base_split: str, test_run: str, test_split: str, thresholds: Thresholds,
            comparator: str) -> Comparison:
    """The features of both datasets, in the tested one's order, compared."""
    base = {feature_name(f): f for f in read_statistics(base_run, base_split).features}
    test = read_statistics(test_run, test_split)
    features = [feature_distance(base[feature_name(f)], f, thresholds, comparator)
                for f in test.features if feature_name(f) in base]
    unknown = sorted(set(thresholds.per_feature or {}) - {f.feature for f in features})
    if unknown:
        raise ConfigError(f"--threshold: no feature {', '.join(unknown)} in both {base_run}:{base_split} and "
                          f"{test_run}:{test_split}")
    return Comparison(f"{base_run}:{base_split}", f"{test_run}:{test_split}", comparator, features)


def print_comparisons(comparisons: list[Comparison], console=None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console()
    for comparison in comparisons:
        table = Table(title=f"{comparison.base} (baseline) vs {comparison.test}; thresholds: flags, "
                            f"schema {comparison.comparator}", title_justify="left")
        table.add_column("feature")
        table.add_column("measure")
        table.add_column("distance", justify="right")
        table.add_column("threshold", justify="right")
        table.add_column("verdict")
        for f in comparison.features:
            cells = [f.feature, f.measure, "–" if f.distance is None else f"{f.distance:.4f}",
                     "–" if f.threshold is None else f"{f.threshold:g}", f.verdict]
            table.add_row(*(Text(cell) for cell in cells))
        console.print(table)
    crossed = [f"{c.test}: {f.feature}" for c in comparisons for f in c.crossed]
    console.print(Text(f"{len(crossed)} threshold(s) crossed" + (": " + ", ".join(crossed) if crossed else "")))
