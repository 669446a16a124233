"""Per-split statistics protos of list, feature-list and optional columns, against counts made by hand, and the
same protos whether the rows came in one unit or were merged from several."""

import numpy as np
import pyarrow as pa
import pytest

from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.statistics.split_statistics import SplitStatistics, dataset_statistics
from skewless.statistics_files import feature_name

COLUMNS = [
    RawColumn("tags", "int", is_list=True),
    RawColumn("steps", "float", sequence=True),
    RawColumn("city", "bytes", optional=True),
]


def table(rows: list[tuple]) -> pa.Table:
    tags, steps, city = zip(*rows)
    return pa.table({"tags": pa.array(tags, pa.list_(pa.int64())),
                     "steps": pa.array(steps, pa.list_(pa.list_(pa.float32()))),
                     "city": pa.array(city, pa.binary())})


ROWS = [
    ([1, 2], [[1.0], [2.0, 3.0]], b"oslo"),
    ([], None, None),  # an empty list is present with 0 values; a null is missing
    (None, [[]], b"lima"),
    ([0], [[0.0, 0.0, 5.0]], b"oslo"),
]


def features_of(states: list[dict]) -> dict:
    dataset = dataset_statistics("train", states, COLUMNS).datasets[0]
    assert dataset.name == "train" and dataset.num_examples == len(ROWS)
    return {feature_name(f): f for f in dataset.features}


def test_values_per_row_and_values_of_list_and_feature_list_columns():
    stats = SplitStatistics(COLUMNS)
    stats.add(table(ROWS))
    features = features_of([stats.state()])

    tags = features["tags"].num_stats
    common = tags.common_stats
    assert (common.num_non_missing, common.num_missing) == (3, 1)
    assert (common.min_num_values, common.max_num_values, common.tot_num_values) == (0, 2, 3)
    assert common.avg_num_values == 1.0
    assert (tags.mean, tags.min, tags.max, tags.num_zeros) == (1.0, 0.0, 2.0, 1)

    steps = features["steps"].num_stats
    common = steps.common_stats  # values over all steps of a row: 3, 0, 3
    assert (common.num_non_missing, common.num_missing) == (3, 1)
    assert (common.min_num_values, common.max_num_values, common.tot_num_values) == (0, 3, 6)
    values = np.array([1.0, 2.0, 3.0, 0.0, 0.0, 5.0])
    assert steps.mean == values.mean() and steps.std_dev == values.std() and steps.num_zeros == 2

    city = features["city"].string_stats
    assert (city.common_stats.num_non_missing, city.common_stats.num_missing) == (3, 1)
    # top values: those in 2 rows or more (lima's one row is no frequent value); the rank histogram has all
    assert city.unique == 2 and [(t.value, t.frequency) for t in city.top_values] == [("oslo", 2)]
    assert [(b.label, b.sample_count) for b in city.rank_histogram.buckets] == [("oslo", 2), ("lima", 1)]
    assert city.avg_length == 4.0
    # values per row: TFDV's num_values_histogram, 10 equally filled buckets whose boundaries rows have (NumPy's
    # inverted_cdf deciles); tags' rows hold 2, 0 and 1 values (the null row is missing)
    per_row = features["tags"].num_stats.common_stats.num_values_histogram
    deciles = np.quantile([2, 0, 1], np.linspace(0, 1, 11), method="inverted_cdf").tolist()
    assert [(b.low_value, b.high_value) for b in per_row.buckets] == list(zip(deciles[:-1], deciles[1:]))
    assert all(b.sample_count == 3 / 10 for b in per_row.buckets)


def test_units_merged_equal_one_unit():
    whole = SplitStatistics(COLUMNS)
    whole.add(table(ROWS))
    parts = []
    for rows in (ROWS[:1], ROWS[1:3], ROWS[3:]):
        part = SplitStatistics(COLUMNS)
        part.add(table(rows))
        parts.append(part.state())
    merged, single = features_of(parts), features_of([whole.state()])
    for name in single:
        kind = single[name].WhichOneof("stats")
        merged_stats, single_stats = getattr(merged[name], kind), getattr(single[name], kind)
        assert merged_stats.common_stats == single_stats.common_stats, name
        if kind == "num_stats":  # moments merged pairwise: equal up to rounding
            for field in ("mean", "std_dev", "min", "max", "num_zeros"):
                assert getattr(merged_stats, field) == pytest.approx(getattr(single_stats, field), rel=1e-12)
        else:
            assert merged_stats == single_stats, name


def test_a_categorical_int_is_counted_by_value_in_each_split(tmp_path):
    """A job with an int vocabulary: its statistics are string statistics (TFDV's way), whose counts over the
    splits add up to the file's, and `validate` measures it by L-infinity."""
    import collections
    import json

    from typer.testing import CliRunner

    from skewless.cli import app
    from skewless.pipelines import run
    from skewless.statistics_files import read_statistics

    rng = np.random.default_rng(3)
    zips = rng.choice([75001, 10115, 1000], 400, p=[0.6, 0.3, 0.1])
    path = tmp_path / "rows.csv"
    path.write_text("zip,x\n" + "".join(f"{z},{x:.3f}\n" for z, x in zip(zips, rng.normal(size=400))))
    result = run({"name": "zips", "input": {"format": "csv", "paths": [str(path)], "header": True},
                  "features": {"zip": {"transform": "vocabulary"}, "x": {"transform": "z_score"}},
                  "output": {"dir": str(tmp_path / "out")}})
    counted = collections.Counter()
    for split, rows in result.rows["written"].items():
        features = {feature_name(f): f for f in read_statistics(result.output_dir, split).features}
        zip_stats = features["zip"]
        assert zip_stats.WhichOneof("stats") == "string_stats" and features["x"].WhichOneof("stats") == "num_stats"
        assert zip_stats.string_stats.common_stats.num_non_missing == rows
        counted.update({int(b.label): int(b.sample_count) for b in zip_stats.string_stats.rank_histogram.buckets})
    assert counted == collections.Counter(zips.tolist())
    report = json.loads(CliRunner().invoke(app, ["validate", result.output_dir, "--json"]).stdout)
    measures = {f["feature"]: f["measure"] for f in report["comparisons"][0]["features"]}
    assert measures == {"zip": "L-infinity", "x": "Jensen-Shannon"}
