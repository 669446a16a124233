"""Dirty CSV through `run`: every bad row in quarantine with its reason and file:line, nothing else lost.

The CSV (dirty_csv.py): good rows with a few bad ones of each kind placed at known lines of two files,
cut into three work units so that line numbers must be counted across unit boundaries.
"""

import collections
import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skewless.errors import TooManyBadRowsError

from dirty_csv import BAD_A, BAD_B, CITIES, GOOD_ROWS, SCHEMA, job_config, make_inputs


@pytest.fixture(scope="module")
def dirty_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("dirty")
    expected, good_ids = make_inputs(folder)
    result = run(job_config(folder, max_bad_fraction=0.2))
    return result, expected, good_ids


def written_ids(output_dir: str) -> list[int]:
    import tensorflow as tf

    spec = {"id": tf.io.FixedLenFeature([], tf.int64)}
    files = sorted(glob.glob(os.path.join(output_dir, "data", "*.tfrecord.gz")))
    ids = []
    for batch in tf.data.TFRecordDataset(files, compression_type="GZIP").batch(1000):
        ids.extend(tf.io.parse_example(batch, spec)["id"].numpy().tolist())
    return ids


def test_every_bad_row_is_in_quarantine_with_reason_and_line(dirty_run):
    result, expected, _ = dirty_run
    rows = []
    for path in sorted(glob.glob(os.path.join(result.output_dir, "quarantine", "rows-*-of-00003.jsonl"))):
        with open(path) as handle:
            rows.extend(json.loads(line) for line in handle)
    found = {(os.path.basename(row["source"]), row["line"]): (row["raw"], row["reason"]) for row in rows}
    assert len(rows) == len(found) == len(BAD_A) + len(BAD_B)
    assert found == expected


def test_rows_read_equal_written_plus_quarantined(dirty_run):
    result, expected, good_ids = dirty_run
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        rows = json.load(handle)["rows"]
    assert rows["quarantined"] == len(expected)
    assert rows["read"] == len(good_ids) + len(expected)  # blank lines are no rows
    assert rows["read"] == sum(rows["written"].values()) + rows["quarantined"]
    assert rows == result.rows
    # the written rows are exactly the good ones, each once: the lines after the stray quote included
    assert sorted(written_ids(result.output_dir)) == good_ids


def test_optional_value_takes_its_default(dirty_run):
    import tensorflow as tf
    import tensorflow_transform as tft

    result, _, good_ids = dirty_run
    graph = tft.TFTransformOutput(result.graph_dir)
    n = np.array([0 if i % 9 == 0 else i % 7 for i in good_ids], dtype=np.float64)
    files = sorted(glob.glob(os.path.join(result.output_dir, "data", "*.tfrecord.gz")))
    spec = graph.transformed_feature_spec()
    got = collections.defaultdict(list)
    for batch in tf.data.TFRecordDataset(files, compression_type="GZIP").batch(1000):
        for name, value in tf.io.parse_example(batch, spec).items():
            got[name].extend(value.numpy().tolist())
    order = np.argsort(got["id"])
    np.testing.assert_allclose(np.array(got["n"])[order], (n - n.mean()) / n.std(), rtol=1e-5, atol=1e-5)


def test_too_many_bad_rows_fails_without_output(tmp_path):
    from skewless.pipelines import run

    expected, _ = make_inputs(tmp_path)
    with pytest.raises(TooManyBadRowsError) as failure:
        run(job_config(tmp_path))  # default max_bad_fraction 0.01
    message = str(failure.value)
    total = GOOD_ROWS + len(expected)
    assert message.startswith(f"{len(expected)} of {total} rows")
    first = sorted(expected)[0]
    assert f"{first[0]}:{first[1]}: {expected[first][1]}" in message
    assert "\n" not in message
    assert sorted(os.listdir(tmp_path)) == ["part-a.csv", "part-b.csv", "schema.pbtxt"]  # no output, no staging


def test_cli_max_bad_fraction_flag_overrides_the_config(tmp_path):
    expected, _ = make_inputs(tmp_path)
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(job_config(tmp_path, max_bad_fraction=0.5)))
    done = subprocess.run(
        [sys.executable, "-m", "skewless", "run", str(config), "--max-bad-fraction", "0.02"],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("skewless: error")]
    assert len(errors) == 1 and "Traceback" not in done.stderr  # progress lines aside, one error line
    assert "over output.max_bad_fraction 0.02" in errors[0]
    assert not [name for name in os.listdir(tmp_path) if name.startswith("out")]


# ------------------------------------------------------------------------- the fast CSV path is the same grammar

_PIECES = [b"a", b"7", b",", b" ", b"\t", b'"', b"\r", b"\n", b"\n", b"\xff", b"\xc3\xa9", b"1.5", b"\x0c"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.sampled_from([["x"], ["x", "y"], ["x", "y", "z"]]))
def test_parse_csv_block_matches_parse_csv_lines(pieces, columns):
    """The job's block splitter gives the rows, line numbers and reasons of `parse_csv_lines` line by line."""
    from skewless.pipelines.reading.csv import parse_csv_block, parse_csv_lines

    block = b"".join(pieces)
    lines = block.split(b"\n")
    if block.endswith(b"\n"):
        lines.pop()
    lines = [line.rstrip(b"\r") for line in lines]  # as a file's lines are read: without "\n" or "\r\n"
    by_lines = parse_csv_lines(lines, range(5, 5 + len(lines)), columns)
    by_block = parse_csv_block(block, columns, first_number=5)
    assert by_block.batch.to_pydict() == by_lines.batch.to_pydict()
    assert by_block.numbers.tolist() == by_lines.numbers.tolist()
    assert [(r.number, r.raw, str(r.problem)) for r in by_block.rejected] == [
        (r.number, r.raw, str(r.problem)) for r in by_lines.rejected
    ]


# ------------------------------------------------------------------------------------------ TFRecord records


def test_bad_tfrecord_records_go_to_quarantine_by_record_number(tmp_path):
    import tensorflow as tf

    from skewless.pipelines import run

    def example(**features):
        def feature(value):
            if isinstance(value, bytes):
                return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
            if isinstance(value, list):
                return tf.train.Feature(float_list=tf.train.FloatList(value=value))
            return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

        return tf.train.Example(
            features=tf.train.Features(feature={k: feature(v) for k, v in features.items()})
        ).SerializeToString()

    records = [example(id=i, x=[i / 4], city=CITIES[i % 3]) for i in range(100)]
    bad = {
        11: (example(id=900, city=b"oslo"), "x: required value is missing"),
        23: (example(id=901, x=[1.0, 2.0], city=b"oslo"), "x: has 2 values, expected 1..1"),
        37: (example(id=902, x=[1.0], city=b"atlantis"), "city: 'atlantis' is not in the domain (paris, oslo, rome)"),
        52: (b"\x0a\x03junk", None),  # not a tf.train.Example
    }
    for number, (record, _) in sorted(bad.items()):
        records.insert(number - 1, record)
    path = tmp_path / "data.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    (tmp_path / "schema.pbtxt").write_text(SCHEMA)
    result = run({
        "name": "records",
        "input": {"format": "tfrecord", "paths": [str(path)]},
        "schema": str(tmp_path / "schema.pbtxt"),
        "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"},
                     "city": {"transform": "vocabulary"}},
        "output": {"dir": str(tmp_path / "out"), "shards": 2, "max_bad_fraction": 0.1},
    })
    rows = []
    for quarantine in sorted(glob.glob(os.path.join(result.output_dir, "quarantine", "*.jsonl"))):
        with open(quarantine) as handle:
            rows.extend(json.loads(line) for line in handle)
    assert [row["line"] for row in rows] == sorted(bad)
    for row in rows:
        record, reason = bad[row["line"]]
        assert row["raw"] == record.hex()
        if reason is None:
            assert row["reason"].startswith("not a tf.train.Example")
        else:  # decoded alone (the junk record spoils its batch), a record without x has "no such column"
            assert row["reason"].startswith(reason)
    assert result.rows["read"] == 104 and result.rows["quarantined"] == 4
    assert sorted(written_ids(result.output_dir)) == list(range(100))
