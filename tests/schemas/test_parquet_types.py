"""Arrow types a plain `pandas.DataFrame.to_parquet()` writes run through the job as plain numbers and strings.

Expected values are computed by pandas/NumPy from the frame, never written down by hand.
"""

import datetime
import decimal
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml

from rich_rows import written_rows

ROWS = 40


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    # instants on both sides of 1970 with fractions, so flooring (not truncating) shows
    nanos = rng.integers(-2_000_000_000, 2_000_000_000, ROWS) * 1_000_000_000 + rng.integers(0, 10**9, ROWS)
    stamps = pd.to_datetime(nanos, unit="ns")
    days = rng.integers(-20_000, 20_000, ROWS)
    dates = [datetime.date(1970, 1, 1) + datetime.timedelta(days=int(d)) for d in days]
    micros = rng.integers(0, 86_400 * 10**6, ROWS)
    times = [(datetime.datetime(2000, 1, 1) + datetime.timedelta(microseconds=int(m))).time() for m in micros]
    cents = rng.integers(-100_000, 100_000, ROWS)
    return pd.DataFrame({
        "id": np.arange(ROWS),
        "stamp": stamps,
        "stamp_tz": stamps.tz_localize("UTC").tz_convert("America/Sao_Paulo"),
        "date": pd.Series(dates, dtype=pd.ArrowDtype(pa.date32())),
        "date_ms": pd.Series(dates, dtype=pd.ArrowDtype(pa.date64())),
        "time": pd.Series(times, dtype=pd.ArrowDtype(pa.time64("us"))),
        "time_ms": pd.Series(times, dtype=pd.ArrowDtype(pa.time32("ms"))),
        "price": [decimal.Decimal(int(c)).scaleb(-2) for c in cents],
        "color": pd.Categorical(rng.choice(["red", "green", "blue"], ROWS)),
        "word": pd.Series(rng.choice(["alpha", "beta"], ROWS), dtype=pd.ArrowDtype(pa.large_string())),
        "blob": pd.Series([b"x" * int(n) for n in rng.integers(1, 4, ROWS)], dtype=pd.ArrowDtype(pa.large_binary())),
        "stamps": pd.Series([list(stamps[i: i + i % 3]) for i in range(ROWS)],
                            dtype=pd.ArrowDtype(pa.list_(pa.timestamp("ns")))),
        "waited": pd.to_timedelta(rng.integers(0, 100, ROWS), unit="s"),  # not read by the job: not refused
    })


def _config(folder, features) -> dict:
    return {
        "name": "parquet_types",
        "input": {"format": "parquet", "paths": [str(folder / "rows.parquet")]},
        "features": features,
        "output": {"dir": str(folder / "out"), "splits": {"train": 1.0}, "shards": 1},
    }


@pytest.fixture(scope="module")
def pandas_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("parquet_types")
    frame = _frame()
    frame.to_parquet(folder / "rows.parquet")
    passed = ["id", "stamp", "stamp_tz", "date", "date_ms", "time", "time_ms", "price", "word", "blob"]
    features = {name: {"transform": "passthrough"} for name in passed}
    features["stamps"] = {"transform": "passthrough", "list": True}
    features["color"] = {"transform": "vocabulary"}
    result = run(_config(folder, features))
    return frame, result, written_rows(result.output_dir)


def _epoch_seconds(stamps: pd.Series) -> list[int]:
    return (stamps.dt.tz_localize(None) if stamps.dt.tz is None else stamps.dt.tz_convert(None)).map(
        lambda t: (t - pd.Timestamp(0)) // pd.Timedelta(seconds=1)).tolist()


def test_timestamps_become_floored_epoch_seconds_utc(pandas_run):
    frame, _, written = pandas_run
    expected = np.floor(frame["stamp"].astype("int64").to_numpy() / 1e9).astype(np.int64)
    assert written["stamp"] == expected.tolist() == _epoch_seconds(frame["stamp"])
    assert written["stamp_tz"] == _epoch_seconds(frame["stamp_tz"]) == written["stamp"]  # a zone changes no instant
    assert written["stamps"] == [[int(s) for s in np.floor(np.array(v, "datetime64[ns]").astype(np.int64) / 1e9)]
                                 for v in frame["stamps"]]


def test_dates_become_days_and_times_seconds_since_midnight(pandas_run):
    frame, _, written = pandas_run
    days = [(d - datetime.date(1970, 1, 1)).days for d in frame["date"]]
    assert written["date"] == written["date_ms"] == days
    seconds = [t.hour * 3600 + t.minute * 60 + t.second for t in frame["time"]]
    assert written["time"] == written["time_ms"] == seconds


def test_decimals_become_floats_and_categoricals_and_large_types_their_values(pandas_run):
    frame, result, written = pandas_run
    assert np.allclose(written["price"], frame["price"].astype(float).to_numpy(), rtol=1e-6)
    assert [w.decode() for w in written["word"]] == frame["word"].tolist()
    assert written["blob"] == frame["blob"].tolist()
    vocabulary = open(os.path.join(result.graph_dir, "transform_fn", "assets", "vocab_color")).read().split()
    assert [vocabulary[i] for i in written["color"]] == frame["color"].astype(str).tolist()


@pytest.mark.parametrize("with_schema", [False, True])
def test_a_column_of_unsupported_type_is_refused_in_one_line(tmp_path, with_schema):
    frame = _frame()[["id", "waited"]]
    frame.to_parquet(tmp_path / "rows.parquet")
    config = _config(tmp_path, {"id": {"transform": "passthrough"}, "waited": {"transform": "passthrough"}})
    if with_schema:  # the types come from the schema, not the file: still refused before the job starts
        declared = "".join(f'feature {{ name: "{name}" type: INT }}\n' for name in ("id", "waited"))
        (tmp_path / "schema.pbtxt").write_text(declared)
        config["schema"] = str(tmp_path / "schema.pbtxt")
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    done = subprocess.run([sys.executable, "-m", "skewless", "run", str(tmp_path / "job.yaml")],
                          capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 2, done.stderr
    # TF logs the rest; run's progress line comes first (it says it is starting before importing TensorFlow)
    lines = [line for line in done.stderr.splitlines()
             if line.startswith("skewless") and not line.startswith("skewless run parquet_types: starting")]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "rows.parquet: column 'waited'" in lines[0] and "duration[ns]" in lines[0], lines


def test_make_raw_dataset_and_schema_infer_read_the_same_plain_values(pandas_run, tmp_path):
    from skewless.pipelines.tfdata.raw_dataset import make_raw_dataset
    from skewless.schemas.infer import infer_schema
    from skewless.pipelines.reading import input_config, read_batches
    from tensorflow_metadata.proto.v0 import schema_pb2

    frame, result, written = pandas_run
    columns = {}
    for batch in make_raw_dataset(result.output_dir + "/config.yaml", batch_size=16, label=None):
        for name in ("id", "stamp", "date", "time", "price"):
            columns.setdefault(name, []).extend(np.ravel(batch[name].numpy()).tolist())
    order = np.argsort(columns["id"])
    for name in ("stamp", "date", "time"):
        assert [columns[name][i] for i in order] == written[name], name
    assert np.allclose([columns["price"][i] for i in order], written["price"])

    readable = str(tmp_path / "readable.parquet")  # schema infer reads every column: leave out the duration
    frame.drop(columns="waited").to_parquet(readable)
    config = input_config([readable])
    schema = infer_schema(config, read_batches(config)).schema
    types = {feature.name: feature.type for feature in schema.feature}
    assert [types[name] for name in ("stamp", "stamp_tz", "date", "date_ms", "time", "time_ms")] == [schema_pb2.INT] * 6
    assert types["price"] == schema_pb2.FLOAT and types["color"] == types["word"] == schema_pb2.BYTES
