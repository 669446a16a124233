"""Fixed-shape raw columns (`shape: [d0, ...]`) and `elementwise: true` (issue 31).

The same rows written as CSV (values split at `input.list_delimiter`), Parquet (flat and nested lists), JSONL
(flat and nested JSON lists) and TFRecord (float_list / int64_list) must give byte-identical shards; the written
values must equal stock tf.Transform run in the test on the same good rows (`tft.scale_to_z_score(elementwise=...)`,
`tft.bucketize(elementwise=...)` etc. on the FixedLenFeature(shape) spec) and NumPy's per-position statistics;
serving (TransformLayer, the export's signatures on raw Examples and predict_raw, `skewless predict`,
`make_raw_dataset`) must equal the shards for every row; a row with the wrong count of values or a missing value
inside a shape goes to quarantine naming its file, line and feature, counted in run.json.
"""

import csv
import json
import os

import numpy as np
import pyarrow as pa
import pytest

from example_job import assert_feature_refused
from rich_rows import served_rows, written_rows
from run_output import files_of

ROWS = 240
SHAPES = {"a": (2, 3), "b": (2, 3), "c": (4,), "d": (2, 2), "e": (3,), "f": (2,), "g": (2, 3), "h": (3,), "k": (2, 2)}
FEATURES = {
    "id": {"transform": "passthrough"},
    "a": {"transform": "z_score", "shape": [2, 3], "elementwise": True},
    "b": {"transform": "z_score", "shape": [2, 3]},
    "c": {"transform": "scale_0_1", "shape": [4], "elementwise": True},
    "d": {"transform": "scale_by_min_max", "shape": [2, 2], "elementwise": True, "range": [-1.0, 1.0],
          "clip": [-3.0, 3.0]},
    "e": {"transform": "passthrough", "shape": [3]},
    "f": {"transform": "log", "shape": [2]},
    "g": {"transform": "bucketize", "num_buckets": 4, "shape": [2, 3], "elementwise": True},
    "h": {"transform": "bucketize", "num_buckets": 3, "shape": [3]},
    "k": {"transform": "bucketize", "num_buckets": 2, "shape": [2, 2]},
}
# the rows the job must quarantine: `a` one value short, `c` one value missing; broken in every format alike
WRONG_COUNT, MISSING_ITEM = 37, 101


def _raw_rows():
    """Good rows whose positions differ in location and spread (so per-position and overall statistics differ),
    floats exact in float32 and never whole (every format reads them as floats); ints for `e`."""
    rng = np.random.default_rng(31)
    columns = {"id": np.arange(ROWS)}
    for name, shape in SHAPES.items():
        if name == "e":
            columns[name] = rng.integers(-50, 50, (ROWS, *shape))
            continue
        size = int(np.prod(shape))
        centers, spreads = np.arange(size) * 3.0, 1.0 + np.arange(size)
        quarters = np.round(rng.normal(centers, spreads, (ROWS, size)) * 4) / 4 + 0.125
        columns[name] = np.abs(quarters).reshape(ROWS, *shape) if name == "f" else quarters.reshape(ROWS, *shape)
    return columns


def _row_values(raw, index):
    """Row `index` as Python values: each shaped column flat (row-major), the broken rows broken."""
    row = {"id": int(raw["id"][index])}
    for name in SHAPES:
        row[name] = raw[name][index].reshape(-1).tolist()
    if index == WRONG_COUNT:
        row["a"] = row["a"][:5]
    if index == MISSING_ITEM:
        row["c"][2] = None
    return row


def _nested(values, shape):
    return np.asarray(values, dtype=object).reshape(shape).tolist()


def _write_inputs(folder, raw):
    """The rows in the four formats: {format: (input config, the line/record number of row i)}."""
    import pyarrow.parquet as pq
    import tensorflow as tf

    rows = [_row_values(raw, i) for i in range(ROWS)]
    text = lambda v: "" if v is None else repr(v)  # noqa: E731 - an item of a CSV list
    lines = [",".join(["id", *SHAPES])] + [
        ",".join([str(row["id"]), *("|".join(text(v) for v in row[name]) for name in SHAPES)]) for row in rows]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n")

    # JSONL and Parquet: `a` nested as its shape (the row of the wrong count: [[3 values], [2 values]]), the
    # rest flat
    def shaped(row):
        a = [row["a"][:3], row["a"][3:]]
        return {**row, "a": a}

    (folder / "rows.jsonl").write_text("".join(json.dumps(shaped(row)) + "\n" for row in rows))
    table = pa.table({"id": pa.array([row["id"] for row in rows], pa.int64()),
                      "a": pa.array([shaped(row)["a"] for row in rows], pa.list_(pa.list_(pa.float64()))),
                      **{name: pa.array([row[name] for row in rows],
                                        pa.list_(pa.int64() if name == "e" else pa.float64()))
                         for name in SHAPES if name != "a"}})
    pq.write_table(table, folder / "rows.parquet")

    with tf.io.TFRecordWriter(str(folder / "rows.tfrecord")) as writer:
        for row in rows:
            example = tf.train.Example()
            example.features.feature["id"].int64_list.value.append(row["id"])
            for name in SHAPES:
                if name == "e":
                    example.features.feature[name].int64_list.value.extend(row[name])
                else:  # a missing float is NaN in a float_list
                    example.features.feature[name].float_list.value.extend(
                        float("nan") if v is None else v for v in row[name])
            writer.write(example.SerializeToString())
    return {"csv": ({"format": "csv", "paths": [str(folder / "rows.csv")], "header": True}, lambda i: i + 2),
            "parquet": ({"format": "parquet", "paths": [str(folder / "rows.parquet")]}, lambda i: i + 1),
            "jsonl": ({"format": "jsonl", "paths": [str(folder / "rows.jsonl")]}, lambda i: i + 1),
            "tfrecord": ({"format": "tfrecord", "paths": [str(folder / "rows.tfrecord")]}, lambda i: i + 1)}


@pytest.fixture(scope="module")
def shaped_runs(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("fixed_shapes")
    raw = _raw_rows()
    inputs = _write_inputs(folder, raw)
    results = {}
    for name, (input_config, _) in inputs.items():
        config = {"name": "fixed_shapes", "input": input_config, "features": FEATURES,
                  "output": {"dir": str(folder / f"out_{name}"), "shards": 1, "max_bad_fraction": 0.05}}
        results[name] = run(config)
    return results, raw, {name: (config["paths"][0], number) for name, (config, number) in inputs.items()}


def _stock(raw, temp_dir):
    """The transformed rows (by id) of stock tf.Transform on the good rows, the FixedLenFeature specs by hand."""
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"id": tf.io.FixedLenFeature([], tf.int64),
            **{name: tf.io.FixedLenFeature(list(shape), tf.int64 if name == "e" else tf.float32)
               for name, shape in SHAPES.items()}}

    def preprocessing_fn(inputs):
        clipped = tf.clip_by_value(inputs["d"], -3.0, 3.0)
        log1p = tf.cast(tf.math.log1p(tf.cast(inputs["f"], tf.float64)), tf.float32)
        return {"id": inputs["id"], "a": tft.scale_to_z_score(inputs["a"], elementwise=True),
                "b": tft.scale_to_z_score(inputs["b"]), "c": tft.scale_to_0_1(inputs["c"], elementwise=True),
                "d": tft.scale_by_min_max(clipped, -1.0, 1.0, elementwise=True), "e": inputs["e"],
                "f": tft.scale_to_z_score(log1p), "g": tft.bucketize(inputs["g"], 4, elementwise=True),
                "h": tft.bucketize(inputs["h"], 3), "k": tft.bucketize(inputs["k"], 2)}

    good = [i for i in range(ROWS) if i not in (WRONG_COUNT, MISSING_ITEM)]
    rows = [{"id": int(raw["id"][i]), **{name: raw[name][i].astype(np.int64 if name == "e" else np.float32)
                                        for name in SHAPES}} for i in good]
    with tft_beam.Context(temp_dir=str(temp_dir / "tmp"), desired_batch_size=len(rows)):
        (transformed, _), _ = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
    by_id = sorted(transformed, key=lambda row: row["id"])
    return {name: [np.asarray(row[name]).tolist() for row in by_id] for name in ["id", *SHAPES]}, good


def test_written_values_equal_stock_tf_transform_and_numpy(shaped_runs, tmp_path):
    import tensorflow_transform as tft

    results, raw, _ = shaped_runs
    result = results["csv"]
    spec = tft.TFTransformOutput(result.graph_dir).transformed_feature_spec()
    assert {name: list(spec[name].shape) for name in SHAPES} == {name: list(s) for name, s in SHAPES.items()}
    written = written_rows(result.output_dir)
    stock, good = _stock(raw, tmp_path)
    assert written["id"] == stock["id"] == good
    for name in SHAPES:
        np.testing.assert_allclose(np.array(written[name]), np.array(stock[name]), rtol=1e-6, atol=1e-6,
                                   err_msg=name)
    # NumPy, independent of tf.Transform: statistics per position (elementwise) or over all values
    values = {name: raw[name][good].astype(np.float64) for name in SHAPES}
    a, b, c, d = values["a"], values["b"], values["c"], np.clip(values["d"], -3.0, 3.0)
    expected = {
        "a": (a - a.mean(axis=0)) / a.std(axis=0),
        "b": (b - b.mean()) / b.std(),
        "c": (c - c.min(axis=0)) / (c.max(axis=0) - c.min(axis=0)),
        "d": (d - d.min(axis=0)) / (d.max(axis=0) - d.min(axis=0)) * 2 - 1,
        "e": values["e"],
        "f": (np.log1p(values["f"]) - np.log1p(values["f"]).mean()) / np.log1p(values["f"]).std(),
    }
    for name, numbers in expected.items():
        np.testing.assert_allclose(np.array(written[name]), numbers, rtol=1e-5, atol=1e-5, err_msg=name)
    # bucket ids: per position (g) or over all values (h), ids grow with the values and every bucket holds a
    # share (quantile boundaries; the quarter-grid values tie, so not exactly equal shares); over all values of g
    # the positions' centers 0, 3, ..., 15 would leave the first position in the lowest bucket
    for name, buckets, axis in (("g", 4, 0), ("h", 3, None)):
        ids, numbers = np.array(written[name]), values[name]
        positions = ids.reshape(len(good), -1).T if axis == 0 else [ids.reshape(-1)]
        numbers_at = numbers.reshape(len(good), -1).T if axis == 0 else [numbers.reshape(-1)]
        for at, (position_ids, position_values) in enumerate(zip(positions, numbers_at)):
            ordered = position_ids[np.argsort(position_values, kind="stable")]
            assert (np.diff(ordered) >= 0).all(), (name, at)
            shares = np.bincount(position_ids, minlength=buckets) / len(position_ids)
            assert shares.min() > 0.1 and shares.max() < 0.45, (name, at, shares)
    # the per-position statistics matter: the same values scaled over all of them differ
    assert not np.allclose(np.array(written["a"]), (a - a.mean()) / a.std(), atol=1e-2)
    # run.json's statistics of a shaped column are over all its values, as a list column's are
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        report = json.load(handle)["features"]
    for name in SHAPES:
        assert report[name]["count"] == len(good) * int(np.prod(SHAPES[name])), name
        assert report[name]["mean"] == pytest.approx(values[name].mean(), rel=1e-6), name
        assert report[name]["min"] == pytest.approx(values[name].min()), name


def test_every_format_writes_the_same_bytes(shaped_runs):
    results, _, _ = shaped_runs
    shards = {name: files_of(result.output_dir, ("data",)) for name, result in results.items()}
    assert shards["csv"], "no shards written"
    for name in ("parquet", "jsonl", "tfrecord"):
        assert shards[name] == shards["csv"], name


def test_bad_rows_are_quarantined_with_file_line_and_feature(shaped_runs):
    results, _, inputs = shaped_runs
    for name, result in results.items():
        path, number = inputs[name]
        with open(os.path.join(result.output_dir, "run.json")) as handle:
            rows = json.load(handle)["rows"]
        assert rows["read"] == ROWS and rows["quarantined"] == 2, name
        assert sum(rows["written"].values()) == ROWS - 2, name
        quarantined = []
        folder = os.path.join(result.output_dir, "quarantine")
        for file in sorted(os.listdir(folder)):
            with open(os.path.join(folder, file)) as handle:
                quarantined += [json.loads(line) for line in handle if line.strip()]
        found = {(row["line"], row["reason"]) for row in quarantined}
        assert {row["source"] for row in quarantined} == {path}, name
        assert found == {
            (number(WRONG_COUNT), "a: has 5 values, expected 6..6 (shape [2, 3]; a missing value is not "
                                         "counted)"),
            (number(MISSING_ITEM), "c: has 3 values, expected 4..4 (shape [4]; a missing value is not "
                                          "counted)"),
        }, name


def test_serving_equals_the_written_rows(shaped_runs, tmp_path):
    import keras
    import tensorflow as tf

    from skewless.errors import InputError
    from skewless.layers import TransformLayer, export_serving_model, model_inputs, serialize_raw_examples
    from skewless.pipelines import predict

    results, raw, _ = shaped_runs
    result = results["csv"]
    written = written_rows(result.output_dir)
    good = written["id"]
    rows = [{"id": int(raw["id"][i]), **{name: _nested(raw[name][i].reshape(-1).tolist(), shape)
                                         for name, shape in SHAPES.items()}} for i in good]
    layer = TransformLayer(result.output_dir)
    served = served_rows(layer, rows)
    for name in ["id", *SHAPES]:
        assert served[name] == written[name], name
        assert np.asarray(served[name]).shape == (len(good), *SHAPES.get(name, ())), name
    # the export: serving_default parses raw Examples with the FixedLenFeature(shape) spec
    # ids of a shape of two dimensions (k: bucketize over all values, which has a bucket count) have no encoding
    with pytest.raises(InputError, match=r"feature 'k': ids of a fixed shape \[2, 2\] have no encoding here"):
        model_inputs(result.output_dir)
    inputs, encoded = model_inputs(result.output_dir, features=["id", *(name for name in SHAPES if name != "k")])
    assert encoded.shape[-1] == 1 + sum(int(np.prod(shape)) for name, shape in SHAPES.items() if name != "k")
    model = keras.Model(inputs, keras.layers.Dense(1)(encoded))
    export = export_serving_model(result.output_dir, model, tmp_path / "export")
    signatures = tf.saved_model.load(export).signatures
    examples = tf.constant(serialize_raw_examples(rows, {k: v for k, v in layer.raw_feature_spec.items()}))
    features = signatures["transform_features"](examples=examples)
    for name in SHAPES:
        assert features[name].numpy().tolist() == written[name], name
    scores = signatures["serving_default"](examples=examples)["output_0"].numpy()
    by_model = model.predict({name: np.array(written[name]) for name in inputs}, verbose=0)
    np.testing.assert_allclose(scores, by_model, rtol=1e-5, atol=1e-5)
    raw_args = {name: tf.constant(np.array([row[name] for row in rows]), layer.raw_feature_spec[name].dtype)
                for name in ["id", *SHAPES]}
    predicted = signatures["predict_raw"](**raw_args)["output_0"].numpy()
    np.testing.assert_allclose(predicted, scores, rtol=0, atol=0)
    # skewless predict reads the shapes from the run's own input file (its bad rows quarantined as the job does)
    source = os.path.join(os.path.dirname(result.output_dir), "rows.csv")
    scored = predict(export, [source], str(tmp_path / "scored"), keys=["id"])
    assert scored.rows == {"read": ROWS, "written": ROWS - 2, "quarantined": 2}
    (path,) = tf.io.gfile.glob(str(tmp_path / "scored" / "predictions-*"))
    with open(path) as handle:
        by_id = {int(line["id"]): float(line["output_0"]) for line in csv.DictReader(handle)}
    assert [by_id[i] for i in good] == pytest.approx(scores.reshape(-1).tolist(), rel=1e-6)


def test_make_raw_dataset_reads_shapes_and_transforms_them_as_written(shaped_runs):
    from skewless.pipelines import make_raw_dataset

    results, raw, _ = shaped_runs
    result = results["csv"]
    written = written_rows(result.output_dir)
    read = {}
    for batch in make_raw_dataset(result.output_dir, batch_size=64, label=None):
        for name, value in batch.items():
            read.setdefault(name, []).append(value.numpy())
    order = np.argsort(np.concatenate(read["id"]), kind="stable")  # units are read in turn: by id
    read = {name: np.concatenate(values)[order] for name, values in read.items()}
    good = written["id"]
    assert read["id"].tolist() == good
    for name, shape in SHAPES.items():
        assert read[name].shape == (len(good), *shape), name
        assert read[name].tolist() == raw[name][good].astype(read[name].dtype).tolist(), name
    transformed = {}
    for batch in make_raw_dataset(result.output_dir, batch_size=64, label=None, transform=True):
        for name, value in batch.items():
            transformed.setdefault(name, []).extend(value.numpy().tolist())
    order = np.argsort(transformed["id"], kind="stable")
    for name in SHAPES:
        assert [transformed[name][i] for i in order] == written[name], name


def test_the_native_preprocessor_refuses_shaped_features_in_one_line(shaped_runs):
    from skewless.layers import check_preprocessor

    results, raw, _ = shaped_runs
    rows = [{"id": int(raw["id"][i]), **{name: raw[name][i].tolist() for name in SHAPES}} for i in range(0, 40, 4)]
    check = check_preprocessor(results["csv"].output_dir, rows=rows, sample=10)
    statuses = {f.name: (f.status, f.reason) for f in check.features}
    assert statuses["id"] == ("exact", None)
    for name, options in FEATURES.items():
        if "shape" in options:
            status, reason = statuses[name]
            assert status == "unsupported" and "shape" in reason and "\n" not in reason, (name, reason)
    assert statuses["a"][1] == "option elementwise, shape has no exact Keras equivalent in skewless yet"


@pytest.mark.parametrize("feature, message", [
    ({"transform": "z_score", "elementwise": True}, r"features\.x: elementwise: true needs a fixed shape"),
    ({"transform": "vocabulary", "shape": [2]}, r"features\.x: shape only applies to transform z_score or "
                                                r"scale_0_1 or scale_by_min_max or log or bucketize or passthrough, "
                                                r"not vocabulary"),
    ({"transform": "quantile_clip", "shape": [2]}, r"features\.x: shape only applies to transform"),
    ({"transform": "z_score", "shape": [2, 0]}, r"features\.x: shape \[2, 0\]: every dimension must be at least 1"),
    ({"transform": "z_score", "shape": [100000, 100000]}, r"features\.x: shape \[100000, 100000\] holds "
                                                          r"10,000,000,000 values a row; at most 1,048,576"),
    ({"transform": "z_score", "shape": [-1]}, r"features\.x: shape \[-1\]: every dimension must be at least 1"),
    ({"transform": "z_score", "shape": [1.5]}, r"features\.x\.shape\.0: Input should be a valid integer"),
    ({"transform": "z_score", "shape": [2], "default": 0.0}, r"features\.x: shape \[2\] holds exactly 2 values in "
                                                               r"every row .*; default does not apply to it"),
    ({"transform": "z_score", "shape": [2], "list": True, "max_length": 2}, r"list, max_length do not apply"),
    ({"transform": "log", "shape": [2], "elementwise": True}, r"elementwise only applies to transform z_score or "
                                                              r"scale_0_1 or scale_by_min_max or bucketize, not log"),
])
def test_config_refuses_bad_combinations_in_one_line(tmp_path, feature, message):
    assert_feature_refused(tmp_path, feature, message)


def test_a_shaped_string_column_is_refused_naming_it(tmp_path):
    from skewless.errors import ConfigError
    from skewless.pipelines import run

    (tmp_path / "rows.csv").write_text("id,t\n1,a|b\n2,c|d\n")
    config = {"name": "t", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
              "features": {"t": {"transform": "passthrough", "shape": [2]}}, "output": {"dir": str(tmp_path / "o")}}
    with pytest.raises(ConfigError, match=r"features\.t\.shape: a fixed shape needs a numeric column, and t holds "
                                          r"strings") as error:
        run(config)
    assert "\n" not in str(error.value)


def test_jsonl_rows_nested_unlike_one_another_are_read_flat():
    """A shape's rows given nested and flat in one file, and a single value among lists: no row is lost to
    pyarrow refusing to mix them; each row's values come out row-major, a single value as a list of one."""
    from skewless.pipelines.reading.jsonl import JsonBlock
    from skewless.pipelines.reading.sources import flat_values

    lines = [{"m": [[1.5, 2.5], [3.5, 4.5]], "x": [1.5]}, {"m": [5.5, 6.5, 7.5, 8.5], "x": 2.5},
             {"m": [[9.5], [10.5, 11.5]], "x": None}, {"m": None, "x": [3.5, 4.5]}]
    block = JsonBlock("".join(json.dumps(line) + "\n" for line in lines).encode(), ["m", "x"])
    assert not block.rejected
    assert flat_values(block.batch.column(0)).to_pylist() == [
        [1.5, 2.5, 3.5, 4.5], [5.5, 6.5, 7.5, 8.5], [9.5, 10.5, 11.5], None]
    assert block.batch.column(1).to_pylist() == [[1.5], [2.5], None, [3.5, 4.5]]
    # single values (a Parquet column of numbers) are counted against the shape, not read as one
    assert flat_values(pa.array([1.5, None])).to_pylist() == [[1.5], []]


def test_a_column_of_single_values_is_quarantined_against_its_shape(tmp_path):
    import pyarrow.parquet as pq

    from skewless.errors import TooManyBadRowsError
    from skewless.pipelines import run

    pq.write_table(pa.table({"id": [0, 1, 2, 3], "x": [1.5, 2.5, 3.5, None]}), tmp_path / "rows.parquet")
    config = {"name": "t", "input": {"format": "parquet", "paths": [str(tmp_path / "rows.parquet")]},
              "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score", "shape": [2]}},
              "output": {"dir": str(tmp_path / "out"), "max_bad_fraction": 0.5}}
    with pytest.raises(TooManyBadRowsError, match=r"rows\.parquet:1: x: has 1 values, expected 2\.\.2 \(shape \[2\]"):
        run(config)


@pytest.mark.parametrize("file_format", ["parquet", "jsonl"])
def test_a_row_nested_unlike_its_shape_is_quarantined(tmp_path, file_format):
    """[[1, 2, 3], [4]] holds the 4 values of shape [2, 2] but not its lists: quarantined naming the shape and
    file:line, not read as [[1, 2], [3, 4]]; likewise a row nested deeper than the shape."""
    import pyarrow.parquet as pq

    from skewless.errors import TooManyBadRowsError
    from skewless.pipelines import run

    rows = [[[1.5, 2.5], [3.5, 4.5]], [[1.5, 2.5, 3.5], [4.5]], [[5.5, 6.5], [7.5, 8.5]], [[[1.5, 2.5]], [[3.5, 4.5]]]]
    ids = list(range(len(rows)))
    if file_format == "parquet":
        # one Arrow type per column: the deeper row goes to its own file's test below
        pq.write_table(pa.table({"id": ids[:3], "x": rows[:3]}), tmp_path / "rows.parquet")
    else:
        (tmp_path / "rows.jsonl").write_text("".join(json.dumps({"id": i, "x": rows[i]}) + "\n" for i in ids[:3]))
    config = {"name": "t", "input": {"format": file_format, "paths": [str(tmp_path / f"rows.{file_format}")]},
              "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score", "shape": [2, 2]}},
              "output": {"dir": str(tmp_path / "out"), "max_bad_fraction": 0.1}}
    with pytest.raises(TooManyBadRowsError, match=rf"rows\.{file_format}:2: x: a list at depth 1 holds 3 items where "
                                                  r"shape \[2, 2\] has 2"):
        run(config)
    deeper = tmp_path / f"deeper.{file_format}"
    if file_format == "parquet":
        pq.write_table(pa.table({"id": [0, 1], "x": [rows[3], rows[3]]}), deeper)
    else:
        deeper.write_text("".join(json.dumps({"id": i, "x": rows[3]}) + "\n" for i in (0, 1)))
    config["input"]["paths"] = [str(deeper)]
    with pytest.raises(TooManyBadRowsError, match=rf"deeper\.{file_format}:1: x: a list at depth 1 holds 1 items "
                                                  r"where shape \[2, 2\] has 2"):
        run(config)


def test_a_jsonl_row_nested_unlike_its_shape_among_flat_rows_is_quarantined(tmp_path):
    """JSONL rows nested unlike one another are read flat (pyarrow takes no mix): a nested row among them must
    still be nested as the shape is, and a row nesting lists beside values is quarantined too."""
    from run_output import quarantined

    from skewless.pipelines import run

    rows = [[1.5, 2.5, 3.5, 4.5], [[1.5, 2.5], [3.5, 4.5]], [[1.5, 2.5, 3.5], [4.5]], [[1.5, 2.5], 3.5, 4.5],
            [5.5, 6.5, 7.5, 8.5], [[5.5, 6.5], [7.5, 8.5]]]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps({"id": i, "x": x}) + "\n" for i, x in enumerate(rows)))
    config = {"name": "t", "input": {"format": "jsonl", "paths": [str(tmp_path / "rows.jsonl")]},
              "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score", "shape": [2, 2]}},
              "output": {"dir": str(tmp_path / "out"), "max_bad_fraction": 0.5, "splits": {"train": 1.0}}}
    run(config)
    assert quarantined(tmp_path / "out") == {
        3: "x: a list at depth 1 holds 3 items where shape [2, 2] has 2",
        4: "x: lists nested unevenly where shape [2, 2] has lists of lists alike"}
