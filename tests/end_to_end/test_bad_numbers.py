"""NaN, ±inf and numbers beyond their type, in every input format and at serving: one rule.

NaN is a missing value (the `default` fills it, else the row is quarantined); ±inf and numbers a
float32 / int64 cannot hold are quarantined with their reason (or missing with `input.nonfinite: missing`).
Statistics and outputs stay finite.
"""

import glob
import json
import math
import os

import numpy as np
import pytest
from run_output import quarantined

# x: required float; y: optional float (default 0); n: required int
BAD_X = {b"nan": "x: required value is missing", b"NaN": "x: required value is missing",
         b"inf": "x: 'inf' is not finite", b"-inf": "x: '-inf' is not finite",
         b"1e400": "x: '1e400' is beyond float32", b"-4e38": "x: '-4e38' is beyond float32"}
GOOD_ROWS = 60


def _x(i: int) -> float:
    return (i % 13) * 0.5 - 2.0


def _y(i: int) -> float | None:
    return None if i % 5 == 0 else float(i % 7)  # every 5th row: NaN, filled by the default 0


def _y_filled() -> np.ndarray:
    """The good rows' y as the job fills it (missing: the default 0)."""
    return np.array([0.0 if _y(i) is None else _y(i) for i in range(GOOD_ROWS)])


def assert_y_z_scored(out: dict[str, np.ndarray]) -> None:
    """The written y is the good rows' filled y, z-scored with NumPy's mean and standard deviation."""
    y = _y_filled()
    np.testing.assert_allclose(out["y"], (y - y.mean()) / y.std(), rtol=1e-5, atol=1e-5)


def run_input(folder, input_config: dict):
    """The job on `input_config`'s rows: (its result, {quarantined row's line: reason})."""
    from skewless.pipelines import run

    config = job_config(folder)
    config["input"] = input_config
    result = run(config)
    return result, quarantined(result.output_dir)


def make_csv(folder) -> dict[int, str]:
    """The CSV file; returns {line number: reason} of the rows that must be quarantined."""
    lines = [b"id,x,y,n"]
    for i in range(GOOD_ROWS):
        y = b"NaN" if _y(i) is None else b"%.1f" % _y(i)
        lines.append(b"%d,%.2f,%s,%d" % (i, _x(i), y, i % 4))
    reasons = {}
    for k, (x, reason) in enumerate(BAD_X.items()):
        lines.insert(5 + 9 * k, b"%d,%s,1.0,1" % (900 + k, x))
        reasons[b"%d," % (900 + k)] = reason
    lines.insert(40, b"950,1.0,inf,1")
    reasons[b"950,"] = "y: 'inf' is not finite"
    (folder / "rows.csv").write_bytes(b"\n".join(lines) + b"\n")
    return {number: reasons[line[:4]] for number, line in enumerate(lines, start=1) if line[:4] in reasons}


def job_config(folder, **input_options) -> dict:
    return {
        "name": "numbers",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True, **input_options},
        "features": {
            "id": {"transform": "passthrough"},
            "x": {"transform": "z_score"},
            "y": {"transform": "z_score", "default": 0},
            "n": {"transform": "z_score"},
        },
        "output": {"dir": str(folder / "out"), "shards": 1, "max_bad_fraction": 0.5},
    }


@pytest.fixture(scope="module")
def numbers_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("numbers")
    expected = make_csv(folder)
    return run(job_config(folder)), expected


def test_nan_inf_and_overflow_are_quarantined_with_their_reason(numbers_run):
    result, expected = numbers_run
    found = quarantined(result.output_dir)
    assert found == expected
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        rows = json.load(handle)["rows"]
    assert rows["quarantined"] == len(expected)
    assert rows["read"] == GOOD_ROWS + len(expected) == sum(rows["written"].values()) + rows["quarantined"]


def test_statistics_are_finite_and_match_numpy_over_the_kept_rows(numbers_run):
    result, _ = numbers_run
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        features = json.load(handle)["features"]
    x = np.array([_x(i) for i in range(GOOD_ROWS)])
    y = np.array([_y(i) for i in range(GOOD_ROWS) if _y(i) is not None])
    for name, values in (("x", x), ("y", y)):
        stats = features[name]
        assert all(math.isfinite(v) for v in (stats["mean"], stats["std"], stats["min"], stats["max"]))
        assert stats["count"] == len(values)
        np.testing.assert_allclose([stats["mean"], stats["std"]], [values.mean(), values.std()], rtol=1e-6)
        assert (stats["min"], stats["max"]) == (values.min(), values.max())
    assert features["y"]["missing"] == GOOD_ROWS - len(y)  # NaN counted as missing, then filled


def written(output_dir: str) -> dict[str, np.ndarray]:
    import tensorflow as tf
    import tensorflow_transform as tft

    spec = tft.TFTransformOutput(os.path.join(output_dir, "transform_graph")).transformed_feature_spec()
    files = sorted(glob.glob(os.path.join(output_dir, "data", "*.tfrecord*")))
    compression = "GZIP" if files[0].endswith(".gz") else ""
    columns: dict[str, list] = {}
    for batch in tf.data.TFRecordDataset(files, compression_type=compression).batch(1000):
        for name, value in tf.io.parse_example(batch, spec).items():
            columns.setdefault(name, []).extend(value.numpy().tolist())
    order = np.argsort(columns["id"]) if "id" in columns else slice(None)
    return {name: np.asarray(values)[order] for name, values in columns.items()}


def test_nan_takes_the_default_and_outputs_are_finite(numbers_run):
    result, _ = numbers_run
    out = written(result.output_dir)
    assert out["id"].tolist() == list(range(GOOD_ROWS))
    assert_y_z_scored(out)
    assert all(np.isfinite(values).all() for name, values in out.items() if values.dtype.kind == "f")


def test_nonfinite_missing_mode_fills_inf_like_nan(tmp_path):
    from skewless.pipelines import run

    expected = make_csv(tmp_path)
    result = run(job_config(tmp_path, nonfinite="missing"))
    found = quarantined(result.output_dir)
    # x has no default: its inf and overflow are missing values, so those rows stay quarantined, as missing
    assert set(found) == set(expected) - {number for number, reason in expected.items() if reason.startswith("y:")}
    assert set(found.values()) == {"x: required value is missing"}
    out = written(result.output_dir)
    assert 950 in out["id"].tolist()  # y = inf filled by its default


def test_example_with_nan_serves_like_the_batch_missing_value(tmp_path):
    """tf.Examples with NaN and inf go through the job as CSV text does; serving NaN gives the default's output."""
    import tensorflow as tf

    def example(i, x, y):
        feature = {"id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                   "x": tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
                   "n": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 4]))}
        if y is not None:
            feature["y"] = tf.train.Feature(float_list=tf.train.FloatList(value=[y]))
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    records = [example(i, _x(i), float("nan") if _y(i) is None else _y(i)) for i in range(GOOD_ROWS)]
    records += [example(900, float("nan"), 1.0), example(901, float("inf"), 1.0), example(902, 1.0, -float("inf"))]
    path = tmp_path / "rows.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    result, found = run_input(tmp_path, {"format": "tfrecord", "paths": [str(path)]})
    assert found == {GOOD_ROWS + 1: "x: required value is missing", GOOD_ROWS + 2: "x: inf is not finite",
                     GOOD_ROWS + 3: "y: -inf is not finite"}
    assert_y_z_scored(written(result.output_dir))

    # serving: a NaN y, an absent y and y = 0 give one output, the batch path's for a missing value
    import tensorflow_transform as tft

    graph = tft.TFTransformOutput(os.path.join(result.output_dir, "transform_graph"))
    batch = [example(1, 0.5, float("nan")), example(1, 0.5, None), example(1, 0.5, 0.0)]
    raw = tf.io.parse_example(tf.constant(batch), graph.raw_feature_spec())
    served = graph.transform_features_layer()(raw)["y"].numpy()
    assert np.isfinite(served).all() and served[0] == served[1] == served[2]
    y = _y_filled()
    np.testing.assert_allclose(served[0], (0.0 - y.mean()) / y.std(), rtol=1e-5)


def test_native_preprocessor_fills_nan_as_the_graph_does(numbers_run):
    from skewless.layers import check_preprocessor

    result, _ = numbers_run
    rows = [{"id": i, "x": 0.5, "y": y, "n": 1.0} for i, y in enumerate([float("nan"), None, 0.0, 2.5])]
    check = check_preprocessor(result.output_dir, rows=rows, sample=50)
    assert {f.name: f.status for f in check.features}["y"] == "exact", check.not_exact()


def test_log_without_clip_quarantines_values_at_or_below_minus_one(tmp_path):
    from skewless.pipelines import run

    values = [0.0, 2.5, -1.0, -3.0, -0.5, 7.0]
    (tmp_path / "rows.csv").write_text("v\n" + "".join(f"{values[i % 6]}\n" for i in range(36)))
    result = run({"name": "log", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
                  "features": {"v": {"transform": "log"}},
                  "output": {"dir": str(tmp_path / "out"), "shards": 1, "max_bad_fraction": 0.5}})
    reasons = set(quarantined(result.output_dir).values())
    assert result.rows["quarantined"] == 12 and all(reason.startswith("v: -") for reason in reasons)
    kept = np.log1p(np.array([v for v in values if v > -1] * 6, dtype=np.float64))
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        assert json.load(handle)["features"]["v"]["count"] == len(kept)
    out = written(result.output_dir)["v"]
    assert np.isfinite(out).all()
    np.testing.assert_allclose(np.sort(out), np.sort((kept - kept.mean()) / kept.std()), rtol=1e-5, atol=1e-6)


def test_parquet_nan_and_inf_follow_the_same_rule(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids = list(range(GOOD_ROWS)) + [900, 901, 902]
    x = [_x(i) for i in range(GOOD_ROWS)] + [float("nan"), float("-inf"), 1.0]
    y = [float("nan") if _y(i) is None else _y(i) for i in range(GOOD_ROWS)] + [1.0, 1.0, float("inf")]
    pq.write_table(pa.table({"id": ids, "x": x, "y": y, "n": [i % 4 for i in ids]}), tmp_path / "rows.parquet")
    result, found = run_input(tmp_path, {"format": "parquet", "paths": [str(tmp_path / "rows.parquet")]})
    assert found == {GOOD_ROWS + 1: "x: required value is missing", GOOD_ROWS + 2: "x: -inf is not finite",
                     GOOD_ROWS + 3: "y: inf is not finite"}
    assert_y_z_scored(written(result.output_dir))


LIST_ROWS = {0: "1|nan|3", 1: "2", 2: "NaN", 3: "4|inf", 4: "5| 6 ", 5: "-inf|7", 6: "8|1e400", 7: "9"}


@pytest.mark.parametrize("nonfinite", ["quarantine", "missing"])
def test_nan_in_a_csv_list_is_left_out_and_inf_quarantined(tmp_path, nonfinite):
    from skewless.pipelines import run

    lines = ["id,scores"] + [f"{i},{text}" for i, text in LIST_ROWS.items()]
    (tmp_path / "lists.csv").write_text("\n".join(lines) + "\n")
    result = run({
        "name": "lists",
        "input": {"format": "csv", "paths": [str(tmp_path / "lists.csv")], "header": True, "nonfinite": nonfinite},
        "features": {"id": {"transform": "passthrough"}, "scores": {"transform": "z_score", "list": True}},
        "output": {"dir": str(tmp_path / "out"), "shards": 1, "max_bad_fraction": 0.5},
    })
    items = {i: [float(v) for v in text.split("|")] for i, text in LIST_ROWS.items()}
    beyond = {i for i, values in items.items() if not all(abs(v) <= np.finfo(np.float32).max for v in values
                                                          if not math.isnan(v))}
    found = quarantined(result.output_dir)
    if nonfinite == "quarantine":
        first_bad = {i: next(t for t in LIST_ROWS[i].split("|") if "inf" in t or "e400" in t) for i in beyond}
        assert found == {i + 2: f"scores: '{text}' " + ("is beyond float32" if "e400" in text else "is not finite")
                         for i, text in first_bad.items()}
        kept = {i: values for i, values in items.items() if i not in beyond}
    else:
        assert found == {}
        kept = items
    # what is missing inside a list (NaN, and ±inf/overflow when those are missing) is left out of it
    kept = {i: [v for v in values if abs(v) <= np.finfo(np.float32).max] for i, values in kept.items()}
    flat = np.concatenate([values for values in kept.values()])
    rows = _examples(result.output_dir)
    assert sorted(rows) == sorted(kept)
    for i, values in kept.items():
        np.testing.assert_allclose(rows[i], (np.array(values) - flat.mean()) / flat.std(), rtol=1e-5, atol=1e-5)


def _examples(output_dir: str) -> dict[int, list[float]]:
    """id -> the written `scores` list, read from the shards' tf.train.Examples."""
    import tensorflow as tf

    files = sorted(glob.glob(os.path.join(output_dir, "data", "*.tfrecord*")))
    compression = "GZIP" if files[0].endswith(".gz") else ""
    rows = {}
    for record in tf.data.TFRecordDataset(files, compression_type=compression):
        feature = tf.train.Example.FromString(record.numpy()).features.feature
        rows[feature["id"].int64_list.value[0]] = list(feature["scores"].float_list.value)
    return rows
