"""A dirty census file with no schema: inference follows the majority, every bad row goes to quarantine.

Made here from ../shared/data/census/adult.data (skips where absent): text in numeric columns, short
and long rows, empty required values and a line that is not UTF-8, about 3% of the rows.
"""

import collections
import glob
import json
import os

import pytest
from example_job import CENSUS_COLUMNS

from example_job import CENSUS

ROWS = 1500
# (column index, bad text, reason); the row keeps its other fields
BAD_FIELDS = [
    (0, "12abc", "age: '12abc' is not an int"),
    (12, "n/a", "hours-per-week: 'n/a' is not an int"),
    (2, "", "fnlwgt: required value is missing"),
    (1, "", "workclass: required value is missing"),
    # a float among ints makes the column float (nothing is cut), and 1e400 is beyond float32
    (10, "1e400", "capital-gain: '1e400' is beyond float32"),
]


def dirty_census(folder) -> dict[int, str]:
    """Writes dirty.csv; returns {line number: reason} of every row that must be quarantined."""
    with open(CENSUS, "rb") as handle:
        lines = [line.rstrip(b"\n") for _, line in zip(range(ROWS), handle)]
    expected = {}
    for k in range(45):  # 3% of the rows
        number = 17 + 31 * k  # 1-based line
        fields = lines[number - 1].split(b", ")
        kind = k % 8
        if kind < len(BAD_FIELDS):
            column, text, reason = BAD_FIELDS[kind]
            fields[column] = text.encode()
        elif kind == 5:
            fields, reason = fields[:9], f"expected {len(CENSUS_COLUMNS)} fields, found 9"
        elif kind == 6:
            fields, reason = fields + [b"extra"], f"expected {len(CENSUS_COLUMNS)} fields, found {len(CENSUS_COLUMNS) + 1}"
        else:
            fields[6] = b"Cr\xe8me"  # latin-1: not UTF-8
            reason = f"byte {len(b', '.join(fields[:6])) + 5} of the line is not UTF-8"
        lines[number - 1] = b", ".join(fields)
        expected[number] = reason
    (folder / "dirty.csv").write_bytes(b"\n".join(lines) + b"\n")
    return expected


@pytest.fixture(scope="module")
def dirty_run(tmp_path_factory):
    if not CENSUS.exists():
        pytest.skip(f"{CENSUS} is absent")
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("dirty_census")
    expected = dirty_census(folder)
    config = {
        "name": "dirty_census",
        "input": {"format": "csv", "paths": [str(folder / "dirty.csv")], "columns": CENSUS_COLUMNS},
        "features": {
            "age": {"transform": "z_score"},
            "fnlwgt": {"transform": "scale_0_1"},
            "capital-gain": {"transform": "z_score"},
            "hours-per-week": {"transform": "bucketize", "num_buckets": 4},
            "workclass": {"transform": "vocabulary"},
            "occupation": {"transform": "hash", "hash_buckets": 16},
        },
        "label": {"column": "label", "map": {"<=50K": 0, ">50K": 1}},
        "output": {"dir": str(folder / "out"), "shards": 1, "max_bad_fraction": 0.05},
    }
    return run(config), expected, folder


def test_dirty_census_without_schema_quarantines_every_bad_row(dirty_run):
    result, expected, _ = dirty_run
    rows = []
    for path in glob.glob(os.path.join(result.output_dir, "quarantine", "rows-*.jsonl")):
        with open(path) as handle:
            rows.extend(json.loads(line) for line in handle)
    assert {row["line"]: row["reason"] for row in rows} == expected
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        report = json.load(handle)
    counts = report["rows"]
    assert counts["read"] == ROWS == sum(counts["written"].values()) + counts["quarantined"]
    assert counts["quarantined"] == len(expected)
    reasons = collections.Counter(reason.split(":")[0] if "'" in reason or "missing" in reason else reason
                                  for reason in expected.values())
    assert sum(reasons.values()) == len(expected) and len(reasons) >= 7
    assert report["features"]["age"]["type"] == "int"  # "12abc" did not make age a string


def test_inferred_schema_follows_the_majority_of_values(dirty_run):
    from skewless.schemas.infer import infer_schema
    from skewless.pipelines.reading import input_config, read_batches
    from skewless.schemas.schema_io import schema_types

    _, expected, folder = dirty_run
    config = input_config([str(folder / "dirty.csv")], columns=CENSUS_COLUMNS)
    inferred = infer_schema(config, read_batches(config))
    types = schema_types(inferred.schema)
    assert {name: types[name] for name in ("age", "fnlwgt", "hours-per-week")} == dict.fromkeys(
        ("age", "fnlwgt", "hours-per-week"), "int")
    assert (types["capital-gain"], types["workclass"]) == ("float", "bytes")
    field_counts_or_utf8 = sum(1 for reason in expected.values() if "fields" in reason or "UTF-8" in reason)
    assert inferred.rejected == field_counts_or_utf8


def test_numeric_transform_makes_a_mostly_text_column_numeric(tmp_path):
    """z_score declares the column numeric: its words go to quarantine, not the job to a config error."""
    from skewless.pipelines import run

    values = ["1.5", "abc", "x", "2.5", "y", "z"]
    lines = ["id,v"] + [f"{i},{values[i % len(values)]}" for i in range(60)]
    (tmp_path / "v.csv").write_text("\n".join(lines) + "\n")
    result = run({"name": "v", "input": {"format": "csv", "paths": [str(tmp_path / "v.csv")], "header": True},
                  "features": {"id": {"transform": "passthrough"}, "v": {"transform": "z_score"}},
                  "output": {"dir": str(tmp_path / "out"), "shards": 1, "max_bad_fraction": 0.9}})
    words = [i for i in range(60) if values[i % len(values)].isalpha()]
    assert result.rows["quarantined"] == len(words) == 40
    assert result.rows["read"] == 60 == sum(result.rows["written"].values()) + result.rows["quarantined"]


def test_record_that_is_no_example_in_the_sample_is_quarantined(tmp_path):
    import tensorflow as tf

    from skewless.pipelines import run

    path = tmp_path / "rows.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(30):
            if i == 3:
                writer.write(b"\xff\x00 not a tf.train.Example")
            feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    result = run({"name": "r", "input": {"format": "tfrecord", "paths": [str(path)]},
                  "features": {"x": {"transform": "z_score"}},
                  "output": {"dir": str(tmp_path / "out"), "shards": 1, "max_bad_fraction": 0.1}})
    assert result.rows["quarantined"] == 1 and result.rows["read"] == 31
    assert sum(result.rows["written"].values()) == 30
