"""Issue 28, item 7: serving follows the batch job's rules for values.

Where the batch job quarantines a value (inf, with `input.nonfinite: quarantine`, the default), the export's
`serving_default` and `predict_raw` fail the request with an InvalidArgumentError naming the feature; with
`input.nonfinite: missing` an inf takes the missing path, as NaN does: the output of the filled value, the
one the batch job wrote for a row that lacked it. A malformed serialized Example is a parse error.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from real_data import example_of, parsed_rows, run_json, split_records

ROWS = 50


def _y(i):
    return None if i % 5 == 0 else float(i % 7)  # every 5th row lacks y: the default fills it


def _d(i):
    return "NA" if i % 4 == 1 else f"d{i % 2}"  # every 4th row's d is the NA token: the default fills it


@pytest.fixture(scope="module", params=["quarantine", "missing"])
def served(request, tmp_path_factory):
    """(nonfinite mode, run directory, loaded export of a model computing 0.5 x - 2 y + 3 d + 0.125)."""
    from skewless.layers import export_serving_model
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp(f"serving-{request.param}")
    lines = ["id,x,y,c,d"] + [f"{i},{(i % 9) * 0.5},{'' if _y(i) is None else _y(i)},c{i % 3},{_d(i)}"
                              for i in range(ROWS)]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n")
    result = run({
        "name": "serving",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True, "nonfinite": request.param,
                  "na_values": ["NA"]},
        "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"},
                     "y": {"transform": "z_score", "default": 0}, "c": {"transform": "vocabulary"},
                     "d": {"transform": "vocabulary", "default": "none"}},
        "output": {"dir": str(folder / "out"), "shards": 1},
    })
    inputs = {"x": keras.Input((), name="x"), "y": keras.Input((), name="y"),
              "d": keras.Input((), dtype="int64", name="d")}
    dense = keras.layers.Dense(1)
    stacked = keras.ops.stack([inputs["x"], inputs["y"], keras.ops.cast(inputs["d"], "float32")], axis=1)
    model = keras.Model(inputs, dense(stacked))
    dense.set_weights([np.array([[0.5], [-2.0], [3.0]], np.float32), np.array([0.125], np.float32)])
    export = export_serving_model(result.output_dir, model, folder / "export")
    return request.param, result.output_dir, tf.saved_model.load(export)


def _written(run_dir) -> dict[int, dict]:
    rows = {}
    for split in run_json(run_dir)["rows"]["written"]:
        rows |= parsed_rows(run_dir, split_records(run_dir, split), key="id")
    return rows


def _serve(loaded, rows):
    examples = tf.constant([example_of(row) for row in rows])
    return loaded.signatures["serving_default"](examples=examples)["output_0"].numpy()[:, 0]


def test_inf_in_a_served_float_fails_the_request_naming_the_feature(served):
    mode, _, loaded = served
    if mode != "quarantine":
        pytest.skip("inf is a missing value with input.nonfinite: missing")
    for name in ("x", "y"):
        row = {"id": 1, "x": 1.0, "y": 2.0, "c": "c1", "d": "d0", name: float("inf")}
        named = rf"['\"]{name}\\?['\"]"  # the feature's name quoted (TF escapes the closing quote)
        with pytest.raises(tf.errors.InvalidArgumentError, match=named):
            _serve(loaded, [row])
        arguments = {"id": tf.constant([1], tf.int64), "x": tf.constant([1.0]), "y": tf.constant([2.0]),
                     "c": tf.constant(["c1"]), "d": tf.constant(["d0"])}
        arguments[name] = tf.constant([-float("inf")])
        with pytest.raises(tf.errors.InvalidArgumentError, match=named):
            loaded.signatures["predict_raw"](**arguments)


def test_inf_takes_the_missing_path_with_nonfinite_missing(served):
    mode, run_dir, loaded = served
    if mode != "missing":
        pytest.skip("inf fails the request with input.nonfinite: quarantine")
    written = _written(run_dir)
    lacking = [i for i in range(ROWS) if _y(i) is None]
    rows = [{"id": i, "x": (i % 9) * 0.5, "y": float("inf"), "c": f"c{i % 3}", "d": _d(i)} for i in lacking]
    transformed = loaded.signatures["transform_features"](examples=tf.constant([example_of(r) for r in rows]))
    assert transformed["y"].numpy().tolist() == [written[i]["y"] for i in lacking]
    absent = [{name: value for name, value in row.items() if name != "y"} for row in rows]
    np.testing.assert_array_equal(_serve(loaded, rows), _serve(loaded, absent))
    by_raw = loaded.signatures["predict_raw"](
        id=tf.constant(lacking, tf.int64), x=tf.constant([r["x"] for r in rows], tf.float32),
        y=tf.constant([float("inf")] * len(rows)), c=tf.constant([r["c"] for r in rows]),
        d=tf.constant([r["d"] for r in rows]))["output_0"].numpy()[:, 0]
    expected = [0.5 * written[i]["x"] - 2.0 * written[i]["y"] + 3.0 * written[i]["d"] + 0.125 for i in lacking]
    np.testing.assert_allclose(by_raw, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("record", [b"garbage!", b"\xff\xfe\x80\x81", b"\x0a\x05\x0a\x03\xff\xfe\x80"])
@pytest.mark.parametrize("signature", ["serving_default", "transform_features"])
def test_a_malformed_serialized_example_is_a_parse_error_naming_its_batch_position(served, record, signature):
    _, _, loaded = served
    good = example_of({"id": 1, "x": 1.0, "y": 2.0, "c": "c1", "d": "d0"})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"example id: batch position 2(?!\d)"):
        loaded.signatures[signature](examples=tf.constant([good, good, record, good]))


def test_na_tokens_and_empty_text_take_the_missing_path_at_serving(served):
    _, run_dir, loaded = served
    written = _written(run_dir)
    tokened = [i for i in range(ROWS) if _d(i) == "NA"]
    assert tokened  # the batch job filled their d with the default
    row = {"id": 2, "x": 1.0, "y": 2.0, "c": "c1"}
    variants = [dict(row, d="NA"), dict(row, d=" NA "), dict(row, d=""), row]
    transformed = loaded.signatures["transform_features"](examples=tf.constant([example_of(r) for r in variants]))
    assert transformed["d"].numpy().tolist() == [written[tokened[0]]["d"]] * len(variants)
    by_raw = {value: loaded.signatures["predict_raw"](
        id=tf.constant([2], tf.int64), x=tf.constant([1.0]), y=tf.constant([2.0]), c=tf.constant(["c1"]),
        d=tf.constant([value]))["output_0"].numpy().tolist() for value in ("NA", "", "none")}
    assert by_raw["NA"] == by_raw[""] == by_raw["none"]


@pytest.mark.parametrize("value", ["", "NA"])
def test_empty_text_or_a_token_in_a_required_string_fails_the_request_naming_it(served, value):
    _, _, loaded = served
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"['\"]c\\?['\"]"):
        _serve(loaded, [{"id": 1, "x": 1.0, "y": 2.0, "c": value, "d": "d0"}])
