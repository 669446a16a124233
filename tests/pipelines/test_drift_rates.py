"""`skewless validate`'s verdicts over generated data, per dataset size: the false-alarm and detection rates.

Each dataset of `rows` rows is cut into two random halves; each half's statistics proto is built the way the job
builds a split's (`SplitStatistics` per work unit, the units' states merged by `dataset_statistics`), and the halves
are compared by `drift.feature_distance`, the function `skewless validate` calls, with no threshold given (each
measure's default). A verdict is CROSSED when the distance is past its threshold and the significance test
beside it finds more than sampling noise (docs/statistics.md, "Sample sizes"). Two halves of one distribution
must cross in at most 1% of 100 random splits at every size; the second half shifted must be detected from 2,000
rows. The shifts, on the test half only:

- mean: every value + 0.25 standard deviations;
- scale: every value moved away from the mean by a factor of 1.3 (the standard deviation x 1.3, the mean kept);
- mode: 10% of the rows moved to a new mode, the mean + 3 standard deviations;
- categorical: a new value in 5% of the test half's rows (its share 5 points up from 0); and, printed only,
  5% of the rows moved from the most frequent value to the second (5 points between two values that exist).

The default suite checks the false alarms at 200 and 2,000 rows and the mean shift and the new value at 2,000;
the `slow` tests print every rate at every size from 200 to 1,000,000 rows (`pytest -m slow -s`).
"""

import numpy as np
import pyarrow as pa
import pytest

from skewless.drift import INFINITY_NORM, JENSEN_SHANNON, SKEW, Thresholds, feature_distance
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.statistics.split_statistics import SplitStatistics, dataset_statistics

SPLITS = 100  # random splits per distribution and size
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
SLOW_SIZES = [200, 2_000, 20_000, 200_000, 1_000_000]
# past 100,000 rows every shift is detected in every split; 10 splits say so at a tenth of the cost
SHIFTED_SPLITS = {200_000: 10, 1_000_000: 10}


def units(rows: int) -> int:
    """Work units a split's statistics merge: the job's units hold thousands of rows, a small dataset one."""
    return 4 if rows >= 10_000 else 1


def feature_statistics(values: np.ndarray, kind: str):
    """The statistics proto of one column holding `values`, as the job writes it for a split."""
    columns = [RawColumn("x", kind)]
    states = []
    for chunk in np.array_split(values, units(2 * len(values))):
        unit = SplitStatistics(columns)
        unit.add(pa.table({"x": pa.array(chunk, pa.float64() if kind == "float" else pa.binary())}))
        states.append(unit.state())
    (feature,) = dataset_statistics("half", states, columns).datasets[0].features
    return feature


def halves(rng, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = rng.permutation(len(values))
    return values[order[: len(values) // 2]], values[order[len(values) // 2:]]


def numeric_shifts(rng, values: np.ndarray, which: tuple[str, ...]) -> dict[str, np.ndarray]:
    mean, sd = values.mean(), values.std()
    shifts = {"mean": lambda: values + 0.25 * sd, "scale": lambda: mean + 1.3 * (values - mean)}

    def mode():
        moved = values.copy()
        moved[rng.random(len(values)) < 0.1] = mean + 3 * sd
        return moved

    shifts["mode"] = mode
    return {name: shifts[name]() for name in which}


def categorical_shifts(rng, values: np.ndarray, which: tuple[str, ...]) -> dict[str, np.ndarray]:
    shifted = {}
    if "new value" in which:
        with_new = values.copy()
        with_new[rng.permutation(len(values))[: len(values) // 20]] = b"new value"
        shifted["new value"] = with_new
    if "5 points between two values" in which:
        labels, counts = np.unique(values, return_counts=True)
        order = np.argsort(-counts, kind="stable")
        # a half of 100 rows of 95/5 may hold one value only: its rows then move to a value of their own
        first, second = labels[order[0]], labels[order[1]] if len(labels) > 1 else b"second value"
        moved = values.copy()
        moved[np.flatnonzero(values == first)[: len(values) // 20]] = second
        shifted["5 points between two values"] = moved
    return shifted


def rates(rows: int, kind: str, shapes: dict, shifts: tuple[str, ...], shifted_splits: int = SPLITS) -> dict:
    """Per distribution: false alarms among `SPLITS` random halves, detections of each shift in the first
    `shifted_splits` of them, and the verdicts' measure. Both halves' statistics are built once per split; each
    shift is of the second half."""
    rng = np.random.default_rng(rows + (kind == "bytes"))
    shifter = numeric_shifts if kind == "float" else categorical_shifts
    found = {}
    for name, generate in shapes.items():
        alarms, detected, measures = 0, dict.fromkeys(shifts, 0), set()
        for split in range(SPLITS):
            base, test = halves(rng, generate(rng, rows))
            base_stats = feature_statistics(base, kind)
            noise = feature_distance(base_stats, feature_statistics(test, kind), Thresholds(), SKEW)
            alarms += noise.verdict == "CROSSED"
            measures.add(noise.measure)
            for shift, moved in shifter(rng, test, shifts if split < shifted_splits else ()).items():
                distance = feature_distance(base_stats, feature_statistics(moved, kind), Thresholds(), SKEW)
                detected[shift] += distance.verdict == "CROSSED"
        found[name] = {"false alarms": alarms, "detected": detected, "measures": measures}
    print(f"\n{kind}, {rows:,} rows (halves of {rows // 2:,}), {SPLITS} random splits each")
    for name, result in found.items():
        shown = ", ".join(f"{shift} {count}/{shifted_splits}" for shift, count in result["detected"].items())
        print(f"  {name:18} false alarms {result['false alarms']}/{SPLITS}  detected: {shown}")
    return found


@pytest.mark.parametrize("rows", [200, 2_000])
def test_numeric_halves_of_small_datasets_rarely_cross(rows):
    shifts = ("mean",) if rows == 2_000 else ()
    found = rates(rows, "float", NUMERIC, shifts)
    assert all(result["measures"] == {JENSEN_SHANNON} for result in found.values())
    assert {name: r["false alarms"] for name, r in found.items() if r["false alarms"] > SPLITS // 100} == {}
    # a shift of 0.25 standard deviations is detected from 2,000 rows (halves of 1,000), nearly always
    assert {name: r["detected"] for name, r in found.items() if any(n < 0.95 * SPLITS for n in r["detected"].values())} == {}


@pytest.mark.parametrize("rows", [200, 2_000])
def test_categorical_halves_of_small_datasets_rarely_cross(rows):
    shifts = ("new value",) if rows == 2_000 else ()
    found = rates(rows, "bytes", CATEGORICAL, shifts)
    assert all(result["measures"] == {INFINITY_NORM} for result in found.values())
    assert {name: r["false alarms"] for name, r in found.items() if r["false alarms"] > SPLITS // 100} == {}
    assert {name: r["detected"] for name, r in found.items() if any(n < SPLITS for n in r["detected"].values())} == {}


@pytest.mark.slow
@pytest.mark.parametrize("rows", SLOW_SIZES)
def test_numeric_rates_at_every_size(rows):
    shifted = SHIFTED_SPLITS.get(rows, SPLITS)
    found = rates(rows, "float", NUMERIC, ("mean", "scale", "mode"), shifted)
    assert all(result["false alarms"] <= SPLITS // 100 for result in found.values())
    if rows >= 20_000:  # every shift, always
        assert all(n == shifted for result in found.values() for n in result["detected"].values())


@pytest.mark.slow
@pytest.mark.parametrize("rows", SLOW_SIZES)
def test_categorical_rates_at_every_size(rows):
    shifted = SHIFTED_SPLITS.get(rows, SPLITS)
    found = rates(rows, "bytes", CATEGORICAL, ("new value", "5 points between two values"), shifted)
    assert all(result["false alarms"] <= SPLITS // 100 for result in found.values())
    if rows >= 2_000:
        assert all(result["detected"]["new value"] == shifted for result in found.values())
