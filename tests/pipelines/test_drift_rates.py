"""`skewless validate`'s default thresholds over generated data: the false-alarm and detection rates.

Each dataset is cut into two random halves; each half's statistics proto is built the way the job builds a
split's (`SplitStatistics` per work unit, the units' states merged by `dataset_statistics`), and the halves are
compared by `drift.feature_distance`, the function `skewless validate` calls, with no threshold given (each
measure's default). Two halves of one dataset must never cross; the second half shifted must always cross, from
10,000 rows (halves of 5,000). The shifts, on the test half only:

- mean: every value + 0.25 standard deviations;
- scale: every value moved away from the mean by a factor of 1.3 (the standard deviation x 1.3, the mean kept);
- mode: 10% of the rows moved to a new mode, the mean + 3 standard deviations.

Categorical: a new value in 5% of the test half's rows. Run with `-s` to see the rates; the 1,000,000-row sizes
are `slow` (about a minute).
"""

import numpy as np
import pyarrow as pa
import pytest

from skewless.drift import INFINITY_NORM, JENSEN_SHANNON, SKEW, Thresholds, feature_distance
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.write.split_statistics import SplitStatistics, dataset_statistics

UNITS = 4  # the job merges its work units' states; so do these protos
NUMERIC = {
    "normal": lambda rng, n: rng.normal(100.0, 15.0, n),
    "lognormal": lambda rng, n: rng.lognormal(0.0, 1.0, n),
    "pareto 1.5": lambda rng, n: rng.pareto(1.5, n) + 1.0,
    "exponential": lambda rng, n: rng.exponential(1.0, n),
    "90% zeros": lambda rng, n: np.where(rng.random(n) < 0.9, 0.0, rng.lognormal(0.0, 1.0, n)),
    "bimodal": lambda rng, n: np.where(rng.random(n) < 0.5, rng.normal(0.0, 1.0, n), rng.normal(5.0, 1.0, n)),
    "poisson counts": lambda rng, n: rng.poisson(3.0, n).astype(np.float64),
}
CATEGORICAL = {
    "two values 50/50": lambda rng, n: rng.choice(np.array([b"yes", b"no"], dtype=object), n),
    "95/5": lambda rng, n: rng.choice(np.array([b"a", b"b"], dtype=object), n, p=[0.95, 0.05]),
    "ten values": lambda rng, n: rng.choice(np.array([b"v%d" % i for i in range(10)], dtype=object), n),
    "zipf over 2,000": lambda rng, n: np.array([b"z%d" % v for v in np.minimum(rng.zipf(1.3, n), 2000)],
                                               dtype=object),
}
# (rows, random splits per dataset): the halves' noise shrinks with the rows, so fewer draws are needed
SIZES = [(10_000, 20), (100_000, 5), pytest.param(1_000_000, 2, marks=pytest.mark.slow)]


def feature_statistics(values: np.ndarray, kind: str):
    """The statistics proto of one column holding `values`, as the job writes it for a split."""
    columns = [RawColumn("x", kind)]
    states = []
    for chunk in np.array_split(values, UNITS):
        unit = SplitStatistics(columns)
        unit.add(pa.table({"x": pa.array(chunk, pa.float64() if kind == "float" else pa.binary())}))
        states.append(unit.state())
    (feature,) = dataset_statistics("half", states, columns).datasets[0].features
    return feature


def distance(base: np.ndarray, test: np.ndarray, kind: str):
    return feature_distance(feature_statistics(base, kind), feature_statistics(test, kind), Thresholds(), SKEW)


def halves(rng, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = rng.permutation(len(values))
    return values[order[: len(values) // 2]], values[order[len(values) // 2:]]


def shifted(rng, values: np.ndarray) -> dict[str, np.ndarray]:
    mean, sd = values.mean(), values.std()
    moved = values.copy()
    moved[rng.random(len(values)) < 0.1] = mean + 3 * sd
    return {"mean": values + 0.25 * sd, "scale": mean + 1.3 * (values - mean), "mode": moved}


def tally(name: str, noise: list, shifts: list, results: list, failures: list) -> None:
    """Adds a shape's rates to `results` (false alarms among `noise`, detections among `shifts`, the largest
    noise and the smallest shift), and its name to `failures` if any half crossed or any shift did not."""
    false_alarms = sum(d.verdict == "CROSSED" for d in noise)
    detected = sum(d.verdict == "CROSSED" for d in shifts)
    results.append((name, f"{false_alarms}/{len(noise)}", f"{detected}/{len(shifts)}",
                    max(d.distance for d in noise), min(d.distance for d in shifts)))
    if false_alarms or detected < len(shifts):
        failures.append(name)


def print_rates(title: str, rows: list[tuple]) -> None:
    print(f"\n{title}")
    for name, false_alarms, detections, largest_noise, smallest_shift in rows:
        print(f"  {name:18} false alarms {false_alarms}  detected {detections}  "
              f"largest distance of halves {largest_noise:.5f}  smallest distance of a shift {smallest_shift:.5f}")


@pytest.mark.parametrize("rows, draws", SIZES)
def test_numeric_halves_never_cross_and_shifts_always_do(rows, draws):
    rng = np.random.default_rng(rows)
    results, failures = [], []
    for name, generate in NUMERIC.items():
        noise, shifts = [], []
        for _ in range(draws):
            base, test = halves(rng, generate(rng, rows))
            noise.append(distance(base, test, "float"))
            shifts += [distance(base, moved, "float") for moved in shifted(rng, test).values()]
        assert {d.measure for d in noise + shifts} == {JENSEN_SHANNON}
        tally(name, noise, shifts, results, failures)
    print_rates(f"numeric, {rows:,} rows, Jensen-Shannon threshold {noise[0].threshold}", results)
    assert not failures


@pytest.mark.parametrize("rows, draws", SIZES)
def test_categorical_halves_never_cross_and_a_new_value_always_does(rows, draws):
    rng = np.random.default_rng(rows + 1)
    results, failures = [], []
    for name, generate in CATEGORICAL.items():
        noise, shifts = [], []
        for _ in range(draws):
            base, test = halves(rng, generate(rng, rows))
            noise.append(distance(base, test, "bytes"))
            with_new = test.copy()
            with_new[rng.permutation(len(test))[: len(test) // 20]] = b"new value"
            shifts.append(distance(base, with_new, "bytes"))
        assert {d.measure for d in noise + shifts} == {INFINITY_NORM}
        tally(name, noise, shifts, results, failures)
    print_rates(f"categorical, {rows:,} rows, L-infinity threshold {noise[0].threshold}", results)
    assert not failures
