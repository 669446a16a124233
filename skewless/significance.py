"""Whether a difference between two samples is more than sampling noise: the p-values `skewless validate` puts
beside each distance (skewless/drift.py; docs/statistics.md, "Sample sizes").

- Numbers: the two-sample Kolmogorov-Smirnov test (any change of shape) and Welch's t-test (a change of the
  mean, the commonest drift, which it detects with fewer rows), Bonferroni-combined: twice the smaller p-value.
- Values (strings, categorical ints): the chi-square test of homogeneity over the values' counts, the values
  too rare for it (an expected count below 5) pooled into one cell; with two cells, Yates-corrected.
"""

from __future__ import annotations

import numpy as np

from skewless.lazy_imports import lazy_import

# SciPy (0.5 s to import) only when a p-value is computed: a run's report imports this module for its drift
# table, and a run with one split computes none
stats = lazy_import("scipy.stats")

# a difference is beyond sampling noise when its test's p-value is below this: at most 1 false alarm in 1,000
# comparisons of two samples of one distribution, per feature
SIGNIFICANCE = 0.001
KS_WELCH = "KS + Welch t"  # two-sample Kolmogorov-Smirnov and Welch t-tests
CHI_SQUARE = "chi-square"
MIN_EXPECTED = 5.0  # the chi-square test's usual floor on a cell's expected count


def ks_welch_p(distance: float, base: tuple[float, float, float], test: tuple[float, float, float]) -> float | None:
    """The p-value of two numeric samples differing: `distance` is their Kolmogorov-Smirnov statistic (the
    largest gap between their cumulative shares), `base` and `test` each (count, mean, population standard
    deviation). None when a side has fewer than two values."""
    (n, mean_n, sd_n), (m, mean_m, sd_m) = base, test
    if n < 2 or m < 2:
        return None
    # as scipy's ks_2samp(method="asymp"): the one-sample distribution at the samples' effective size
    ks = float(stats.kstwo.sf(distance, round(n * m / (n + m))))
    return min(1.0, 2 * min(ks, _welch_p(n, mean_n, sd_n, m, mean_m, sd_m)))


def chi_square_p(base: dict, test: dict) -> float | None:
    """The p-value of two samples of values differing in their shares: `base`, `test`: value -> count. None
    when a side has no values."""
    values = sorted(base.keys() | test.keys(), key=str)
    table = np.array([[base.get(v, 0.0) for v in values], [test.get(v, 0.0) for v in values]], dtype=np.float64)
    if not (table.sum(axis=1) > 0).all():
        return None
    table = _pooled(table)
    if table.shape[1] < 2:
        return 1.0
    expected = _expected(table)
    # Yates' correction of a 2 x 2 table (as scipy's chi2_contingency): without it the test of two values
    # claims significance a little too often in small samples
    gap = np.abs(table - expected) - (0.5 if table.shape[1] == 2 else 0.0)
    statistic = float((np.maximum(gap, 0.0) ** 2 / expected).sum())
    return float(stats.chi2.sf(statistic, table.shape[1] - 1))


def _welch_p(n: float, mean_n: float, sd_n: float, m: float, mean_m: float, sd_m: float) -> float:
    # sample variances from the statistics' population standard deviations
    var_n, var_m = sd_n**2 * n / (n - 1), sd_m**2 * m / (m - 1)
    spread = var_n / n + var_m / m
    if spread == 0:  # both sides constant
        return 1.0 if mean_n == mean_m else 0.0
    t = (mean_n - mean_m) / np.sqrt(spread)
    freedom = spread**2 / ((var_n / n) ** 2 / (n - 1) + (var_m / m) ** 2 / (m - 1))
    return float(2 * stats.t.sf(abs(t), freedom))


def _expected(table: np.ndarray) -> np.ndarray:
    """The counts a 2 x k table would hold if both rows shared one distribution."""
    return table.sum(axis=0, keepdims=True) * table.sum(axis=1, keepdims=True) / table.sum()


def _pooled(table: np.ndarray) -> np.ndarray:
    """`table` with the columns whose expected count is below `MIN_EXPECTED` on either side summed into one;
    while that column is still below, it joins the smallest other column."""
    rare = _expected(table).min(axis=0) < MIN_EXPECTED
    if not rare.any():
        return table
    table = np.concatenate([table[:, ~rare], table[:, rare].sum(axis=1, keepdims=True)], axis=1)
    while table.shape[1] > 1 and _expected(table)[:, -1].min() < MIN_EXPECTED:
        smallest = int(np.argmin(table[:, :-1].sum(axis=0)))
        merged = table[:, smallest] + table[:, -1]
        table = np.concatenate([np.delete(table[:, :-1], smallest, axis=1), merged[:, None]], axis=1)
    return table
