"""`skewless validate`: drift between runs and skew between splits, from the runs' statistics protos.
docs/statistics.md says what each measure is, why, its default threshold, and how it compares with TFDV's.

- A string feature, or a categorical int (statistics with string_stats): the L-infinity distance between the
  two normalized value distributions (its rank_histogram: up to 1,000 values), the largest difference in the
  share of rows of any one value, as TFDV measures it.
- A numeric feature: the Jensen-Shannon divergence (log base 2, so within [0, 1]) over bins that follow the
  baseline's data (`reference_edges`): about equal rows of the baseline in each, a value holding a bin's share by
  itself and 0 as bins of their own, and the rows below and above the baseline's range as two more. Both sides'
  rows come from their DISTRIBUTION histograms (the quantiles sketch's points, `rows_upto`).

A threshold per feature comes from a `--threshold name=X` flag, else from the schema's comparator for that
feature (`drift_comparator` between runs, `skew_comparator` between the splits of a run: its
`infinity_norm.threshold` or `jensen_shannon_divergence.threshold`; a string feature whose comparator sets
only the latter is measured by Jensen-Shannon over its values), else from `--threshold X`, else the measure's
default (`DEFAULT_THRESHOLDS`). Reads protos only: no TensorFlow.

A distance alone reads sampling noise as drift in small samples (two halves of 600 rows differ by more than a
threshold set for 10,000), so each distance comes with a significance test on the same statistics
(skewless/significance.py: Kolmogorov-Smirnov + Welch t for numbers, chi-square for values) and its sample sizes:
a feature has drifted (CROSSED) when its distance is past the threshold AND the test's p-value is below
`SIGNIFICANCE`. The threshold says how much change matters; the test, that the change is not noise at these
sizes. A config's `drift.exclude` leaves columns (IDs) out of the comparison.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from skewless.errors import ConfigError
from skewless.run_directory import RunDirectory
from skewless.schemas import load_schema
from skewless.significance import CHI_SQUARE, KS_WELCH, SIGNIFICANCE, chi_square_p, ks_welch_p
from skewless.statistics_files import APPROXIMATE, DISTRIBUTION, feature_name, read_statistics

INFINITY_NORM = "L-infinity"
JENSEN_SHANNON = "Jensen-Shannon"
DRIFT = "drift_comparator"  # between two runs
SKEW = "skew_comparator"  # between the splits of one run
NUMERIC_BINS = 10  # bins of about equal rows in the baseline, as deciles
# Where no threshold is given. Measured by tests/pipelines/test_drift_rates.py over generated data: two random
# halves of 10,000 to 1,000,000 rows stay under them, real shifts cross them from 10,000 rows (docs/statistics.md).
DEFAULT_THRESHOLDS = {JENSEN_SHANNON: 0.005, INFINITY_NORM: 0.04}


EXCLUDED = "left out (drift.exclude)"


@dataclass(frozen=True)
class FeatureDistance:
    feature: str
    measure: str
    distance: float | None  # None: not measured, `unmeasured` says why
    threshold: float
    unmeasured: str | None = None  # why there is no distance; None when measured
    test: str | None = None  # the significance test beside the distance (skewless/significance.py)
    p_value: float | None = None  # its p-value; None: no test (a side with fewer than two values)
    base_count: int | None = None  # the values each side's statistics hold: the test's sample sizes
    test_count: int | None = None

    @property
    def significant(self) -> bool:
        """Whether the test puts the difference beyond sampling noise (no test: the distance alone decides)."""
        return self.p_value is None or self.p_value < SIGNIFICANCE

    @property
    def verdict(self) -> str:
        if self.distance is None:
            return self.unmeasured or "no values"
        return "CROSSED" if self.distance > self.threshold and self.significant else "ok"


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
        return {"base": self.base, "test": self.test, "comparator": self.comparator, "significance": SIGNIFICANCE,
                "features": [dict(asdict(f), significant=f.significant, verdict=f.verdict) for f in self.features]}


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

    def threshold(self, name: str, measure: str, comparator: str) -> float:
        if name in (self.per_feature or {}):
            return self.per_feature[name]
        schema_comparator = self.comparator(name, comparator)
        field = "infinity_norm" if measure == INFINITY_NORM else "jensen_shannon_divergence"
        if schema_comparator is not None and schema_comparator.HasField(field):
            return getattr(schema_comparator, field).threshold
        return self.default if self.default is not None else DEFAULT_THRESHOLDS[measure]


def baseline_split(baseline_splits: list[str], split: str) -> str:
    """The baseline's split a split is compared with (`validate --against`, the applied page): the one of the
    same name, else `train`, else its first (an applied output of one split, "all")."""
    if split in baseline_splits:
        return split
    return "train" if "train" in baseline_splits else baseline_splits[0]


def validation_thresholds(run_dir: str, against: str | None = None, flags: list[str] | None = None,
                          schema: str | None = None) -> Thresholds:
    """The thresholds `skewless validate RUN_DIR [--against BASELINE]` judges with: the flags, and the schema given,
    else RUN_DIR's config's `schema:`, else the baseline's (an applied output has no config of its own); the
    applied page judges with the same."""
    schema = schema or RunDirectory(run_dir).read_config().get("schema") or (
        against and RunDirectory(against).read_config().get("schema"))
    return Thresholds.from_flags(flags or [], load_schema(schema) if schema else None)


def drift_exclusions(run_dir: str, against: str | None = None) -> frozenset[str]:
    """The columns `skewless validate RUN_DIR [--against BASELINE]` leaves out: RUN_DIR's config's `drift.exclude`,
    else the baseline's (an applied output has no config of its own)."""
    for run in (run_dir, against):
        if run is not None:
            drift = RunDirectory(run).read_config().get("drift") or {}
            if drift.get("exclude"):
                return frozenset(drift["exclude"])
    return frozenset()


def value_distribution(feature) -> dict[str, float]:
    """A string feature's values -> their share of the counted rows (its rank histogram)."""
    counts = {bucket.label: bucket.sample_count for bucket in feature.string_stats.rank_histogram.buckets}
    total = sum(counts.values())
    return {value: count / total for value, count in counts.items()} if total else {}


def unseen_values(base, test) -> tuple[list[tuple[str, int]], bool]:
    """A string feature's values in the tested statistics that the baseline's do not hold (their rank
    histograms), most rows first, and whether the baseline lists every value it has with exact counts, so that
    the values are certainly new; else they are only absent from its 1,000 most frequent ones."""
    seen = {bucket.label for bucket in base.string_stats.rank_histogram.buckets}
    new = [(bucket.label, int(bucket.sample_count)) for bucket in test.string_stats.rank_histogram.buckets
           if bucket.label not in seen]
    complete = base.string_stats.unique == len(seen) and not any(c.name == APPROXIMATE for c in base.custom_stats)
    return sorted(new, key=lambda item: (-item[1], item[0])), complete


def infinity_norm(base: dict[str, float], test: dict[str, float]) -> float:
    return max(abs(base.get(value, 0.0) - test.get(value, 0.0)) for value in base.keys() | test.keys())


def jensen_shannon(base: np.ndarray, test: np.ndarray) -> float:
    """Of two distributions over the same bins (each summing to 1), log base 2."""
    middle = (base + test) / 2

    def kullback_leibler(p: np.ndarray) -> float:
        present = p > 0
        return float(np.sum(p[present] * np.log2(p[present] / middle[present])))

    return 0.5 * kullback_leibler(base) + 0.5 * kullback_leibler(test)


def distribution(feature) -> tuple[np.ndarray, np.ndarray] | None:
    """A numeric feature's values and the rows each stands for (its DISTRIBUTION custom histogram: the upper
    bounds and counts of its buckets); None in statistics written before it existed."""
    for custom in feature.custom_stats:
        if custom.name == DISTRIBUTION:
            buckets = custom.histogram.buckets
            return (np.array([b.high_value for b in buckets], dtype=np.float64),
                    np.array([b.sample_count for b in buckets], dtype=np.float64))
    return None


def _below(value: float) -> float:
    return float(np.nextafter(value, -np.inf))


def reference_edges(values: np.ndarray, rows: np.ndarray, zeros: bool, bins: int = NUMERIC_BINS) -> np.ndarray:
    """The edges of the bins the baseline's values fill about equally: bin i holds (edges[i], edges[i + 1]].

    Cut after the point where the rows reach each 1/`bins` share, so the bins follow the data: a heavy tail
    gets the same number of bins as the bulk, not one bucket holding 87% of the rows. A value holding at least
    a bin's share by itself (a frequent count, a flag), and 0 when either side has zeros (`zeros`), is a bin of
    its own: its edges are the float just below it and itself.
    """
    share = rows.sum() / bins
    cumulative = np.cumsum(rows)
    edges = [_below(values[0])]
    reached = 0  # how many whole shares the bins so far hold
    for value, rows_at, upto in zip(values, rows, cumulative):
        alone = rows_at >= share
        if alone and edges[-1] < _below(value):
            edges.append(_below(value))
        # a float sum can fall a hair short of a share it reaches: compare within a part in 1e9
        if alone or upto >= (reached + 1) * share * (1 - 1e-9):
            edges.append(value)
            reached = int(upto / share * (1 + 1e-9))
    if zeros:
        edges += [_below(0.0), 0.0]
    return np.unique(edges)


def rows_upto(values: np.ndarray, rows: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The rows at or below each of `points`, read from a DISTRIBUTION histogram (`values` increasing, `rows[i]`
    the rows in (values[i - 1], values[i]]).

    At a value of the histogram: every row up to it, all of its bucket's (a value's own rows, exact for a column
    with few distinct values). Just below one (the edge `reference_edges` puts before a value that is a bin of its
    own): none of its bucket's. Between two values: its bucket's rows spread evenly over the bucket's width, the
    continuous reading; without it the last bucket's rows would all land on the maximum, out of the other side's
    range.
    """
    cumulative = np.concatenate([[0.0], np.cumsum(rows)])  # cumulative[i]: rows of values[:i]
    after = np.searchsorted(values, points, side="left")  # the first value >= each point
    inside = np.minimum(after, len(values) - 1)
    at_value = (after < len(values)) & (values[inside] == points)
    below_value = (after < len(values)) & (values[inside] == np.nextafter(points, np.inf))
    previous = values[np.maximum(after - 1, 0)]
    width = values[inside] - previous
    spread = np.divide(points - previous, width, out=np.zeros_like(points), where=width > 0)
    between = cumulative[after] + rows[inside] * np.clip(spread, 0.0, 1.0) * (after > 0) * (after < len(values))
    return np.where(at_value, cumulative[after + at_value], np.where(below_value, cumulative[after], between))


def binned(values: np.ndarray, rows: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Rows at or below the first edge (below the baseline's range), in each bin (edges[i], edges[i + 1]], and
    above the last edge (above its range)."""
    upto = rows_upto(values, rows, edges)
    return np.concatenate([upto[:1], np.diff(upto), [rows.sum() - upto[-1]]])


OLD_STATISTICS = "statistics without a distribution: rerun"  # written before skewless wrote DISTRIBUTION


def numeric_masses(base, *tests) -> tuple[np.ndarray, list[np.ndarray]] | str:
    """The edges of the baseline's bins (`reference_edges`) and the rows of the numeric features' statistics
    (the baseline's, then each tested one's) in them, with the rows below and above the baseline's range as bins
    of their own (`binned`); else why they cannot be compared."""
    features = (base, *tests)
    if not all(feature.num_stats.common_stats.tot_num_values for feature in features):
        return "no values"
    sides = [distribution(feature) for feature in features]
    if any(side is None for side in sides):
        return OLD_STATISTICS
    edges = reference_edges(*sides[0], any(feature.num_stats.num_zeros for feature in features))
    return edges, [binned(values, rows, edges) for values, rows in sides]


def feature_distance(base, test, thresholds: Thresholds, comparator: str) -> FeatureDistance:
    """The distance between one feature's statistics in two datasets, with its threshold, and the significance
    test of the same difference with its sample sizes."""
    name = feature_name(test)
    measure = _measure(name, test, thresholds, comparator)
    threshold = thresholds.threshold(name, measure, comparator)
    if test.WhichOneof("stats") == "string_stats":
        distributions = [value_distribution(base), value_distribution(test)]
        if not all(distributions):
            return FeatureDistance(name, measure, None, threshold, "no values")
        if measure == JENSEN_SHANNON:
            values = sorted(distributions[0].keys() | distributions[1].keys())
            distance = jensen_shannon(*(np.array([d.get(v, 0.0) for v in values]) for d in distributions))
        else:
            distance = infinity_norm(*distributions)
        counts = [value_counts(base), value_counts(test)]
        return FeatureDistance(name, measure, distance, threshold, None, CHI_SQUARE, chi_square_p(*counts),
                               *(round(sum(c.values())) for c in counts))
    binned_rows = numeric_masses(base, test)
    if isinstance(binned_rows, str):
        return FeatureDistance(name, measure, None, threshold, binned_rows)
    distance = jensen_shannon(*(m / m.sum() for m in binned_rows[1]))
    sides = [(*distribution(feature), _exact_distribution(feature)) for feature in (base, test)]
    moments = [(rows.sum(), feature.num_stats.mean, feature.num_stats.std_dev)
               for (_, rows, _), feature in zip(sides, (base, test))]
    p_value = ks_welch_p(kolmogorov_smirnov(*sides), *moments)
    return FeatureDistance(name, measure, distance, threshold, None, KS_WELCH, p_value,
                           *(round(count) for count, _, _ in moments))


def excluded_distance(feature, thresholds: Thresholds, comparator: str) -> FeatureDistance:
    """A feature the config leaves out of drift (`drift.exclude`): its measure and threshold, no distance."""
    name = feature_name(feature)
    measure = _measure(name, feature, thresholds, comparator)
    return FeatureDistance(name, measure, None, thresholds.threshold(name, measure, comparator), EXCLUDED)


def _measure(name: str, feature, thresholds: Thresholds, comparator: str) -> str:
    """Jensen-Shannon for numbers and for strings whose schema comparator sets only it, else L-infinity."""
    if feature.WhichOneof("stats") != "string_stats":
        return JENSEN_SHANNON
    schema_comparator = thresholds.comparator(name, comparator)
    only_js = schema_comparator is not None and schema_comparator.HasField("jensen_shannon_divergence") \
        and not schema_comparator.HasField("infinity_norm")
    return JENSEN_SHANNON if only_js else INFINITY_NORM


# the rows of a string feature its rank histogram does not list (past its 1,000 most frequent values)
OTHER_VALUES = ("other values",)


def value_counts(feature) -> dict:
    """A string feature's values -> their counts (its rank histogram), the values it does not list as one."""
    counts = {bucket.label: bucket.sample_count for bucket in feature.string_stats.rank_histogram.buckets}
    rest = feature.string_stats.common_stats.tot_num_values - sum(counts.values())
    return {**counts, OTHER_VALUES: rest} if rest >= 1 else counts


def kolmogorov_smirnov(base: tuple, test: tuple) -> float:
    """The largest difference between two numeric features' cumulative shares of values, each side (values,
    rows, exact) from its DISTRIBUTION histogram: a step at each value where it lists every value
    (`_exact_distribution`), else `rows_upto`'s reading between the sketch's points."""
    points = np.union1d(base[0], test[0])
    shares = []
    for values, rows, exact in (base, test):
        if exact:
            upto = np.concatenate([[0.0], np.cumsum(rows)])[np.searchsorted(values, points, side="right")]
        else:
            upto = rows_upto(values, rows, points)
        shares.append(upto / rows.sum())
    return float(np.max(np.abs(shares[0] - shares[1])))


def _exact_distribution(feature) -> bool:
    """Whether a numeric feature's DISTRIBUTION holds every value with its count (not the sketch's points)."""
    return not any(custom.name == APPROXIMATE and "distribution" in custom.str for custom in feature.custom_stats)


def compare(base_run: str, base_split: str, test_run: str, test_split: str, thresholds: Thresholds,
            comparator: str, exclude: frozenset[str] = frozenset()) -> Comparison:
    """The features of both datasets, in the tested one's order, compared; those in `exclude` listed, not
    measured."""
    base = {feature_name(f): f for f in read_statistics(base_run, base_split).features}
    test = read_statistics(test_run, test_split)
    features = [excluded_distance(f, thresholds, comparator) if feature_name(f) in exclude else
                feature_distance(base[feature_name(f)], f, thresholds, comparator)
                for f in test.features if feature_name(f) in base]
    unknown = sorted(set(thresholds.per_feature or {}) - {f.feature for f in features})
    if unknown:
        raise ConfigError(f"--threshold: no feature {', '.join(unknown)} in both {base_run}:{base_split} and "
                          f"{test_run}:{test_split}")
    return Comparison(f"{base_run}:{base_split}", f"{test_run}:{test_split}", comparator, features)
