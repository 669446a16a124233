"""Issue 43, item 4: what the job quarantines, serving refuses, naming the feature.

One run reads good rows and, each on a line of its own, one bad value per case below; the same bad value is then
served alone (a good row but that value) through the export's `serving_default` and `transform_features` and the
`TransformLayer`. Each case must be quarantined by the job with the feature named, AND fail every serving path with
an InvalidArgumentError naming the feature (docs/values.md, "What serving does with what the job quarantines").
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from run_output import quarantined

ROWS = 40
SCHEMA = """
feature { name: "id" type: INT }
feature { name: "t" type: BYTES }
feature { name: "e" type: INT }
feature { name: "l" type: FLOAT }
feature { name: "s" type: FLOAT float_domain { min: 0 } }
feature { name: "i" type: INT int_domain { min: 1 max: 9 } }
feature { name: "c" type: BYTES string_domain { value: "a" value: "b" } }
"""
FEATURES = {"id": {"transform": "passthrough"},
            "t": {"transform": "datetime", "parts": ["year", "hour"]},
            "e": {"transform": "datetime", "parts": ["day"]},
            "l": {"transform": "log"},
            "s": {"transform": "z_score"},
            "i": {"transform": "bucketize", "num_buckets": 3},
            "c": {"transform": "vocabulary"}}

# (feature, bad raw value, what the quarantine reason says): every kind of value the job quarantines that a
# tf.train.Example can carry past the parser
CASES = [
    ("t", "yesterday", "not an ISO-8601 date"),
    ("t", "2024-02-30", "not an ISO-8601 date"),
    ("t", "2024-01-01T25:00", "not an ISO-8601 date"),
    ("t", "0000-12-31", "not an ISO-8601 date"),
    ("e", 2**40, "outside the years 0001-9999"),
    ("e", -62135596801, "outside the years 0001-9999"),
    ("l", -1.0, "below the domain minimum"),
    ("l", -3.5, "below the domain minimum"),
    ("s", -0.25, "below the domain minimum"),
    ("i", 0, "below the domain minimum"),
    ("i", 10, "above the domain maximum"),
    ("c", "z", "is not in the domain"),
]


def _good(i: int) -> dict:
    return {"id": i, "t": f"2024-0{1 + i % 9}-1{i % 10}T0{i % 10}:30", "e": 1700000000 + 3600 * i,
            "l": float(i % 7), "s": 0.5 * (i % 5), "i": 1 + i % 9, "c": "ab"[i % 2]}


def _bad(case: int) -> dict:
    name, value, _ = CASES[case]
    return {**_good(case), "id": ROWS + case, name: value}


@pytest.fixture(scope="module")
def refusing(tmp_path_factory):
    """(run directory, loaded export of a model of the transformed `s`, the TransformLayer)."""
    from skewless.layers import TransformLayer, export_serving_model
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("refusing")
    rows = [_good(i) for i in range(ROWS)] + [_bad(case) for case in range(len(CASES))]
    lines = [",".join(FEATURES)] + [",".join(str(row[name]) for name in FEATURES) for row in rows]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n")
    (folder / "schema.pbtxt").write_text(SCHEMA)
    result = run({
        "name": "refusing", "schema": str(folder / "schema.pbtxt"),
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
        "features": FEATURES,
        "output": {"dir": str(folder / "out"), "shards": 1, "max_bad_fraction": 0.5},
    })
    inputs = {"s": keras.Input((), name="s")}
    model = keras.Model(inputs, keras.layers.Dense(1)(keras.ops.expand_dims(inputs["s"], -1)))
    export = export_serving_model(result.output_dir, model, folder / "export")
    return result.output_dir, tf.saved_model.load(export), TransformLayer(result.output_dir)


def _named(name: str) -> str:
    return rf"raw feature \\?['\"]{name}\\?['\"]"  # the feature's name quoted (TF may escape the quotes)


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{name}={value!r}" for name, value, _ in CASES])
def test_the_job_quarantines_it_and_serving_refuses_it_naming_the_feature(refusing, case):
    from skewless.layers import serialize_raw_examples

    run_dir, loaded, layer = refusing
    name, value, reason = CASES[case]
    line = ROWS + case + 2  # the header is line 1
    assert name in quarantined(run_dir).get(line, ""), f"line {line} ({name}={value!r}) was not quarantined"
    assert quarantined(run_dir)[line].startswith(f"{name}: ") and reason in quarantined(run_dir)[line]

    spec = layer.raw_feature_spec
    examples = tf.constant(serialize_raw_examples([_bad(case)], spec))
    for signature in ("serving_default", "transform_features"):
        with pytest.raises(tf.errors.InvalidArgumentError, match=_named(name)):
            loaded.signatures[signature](examples=examples)
    with pytest.raises(tf.errors.InvalidArgumentError, match=_named(name)):
        loaded.signatures["predict_raw"](**{feature: tf.constant([value], spec[feature].dtype)
                                            for feature, value in _bad(case).items()})
    with pytest.raises(tf.errors.InvalidArgumentError, match=_named(name)):
        layer(tf.io.parse_example(examples, spec))
    # the same row with a good value is served, and inside a batch of good rows the bad one fails the batch
    good = tf.constant(serialize_raw_examples([_good(case)], spec))
    assert np.isfinite(loaded.signatures["serving_default"](examples=good)["output_0"].numpy()).all()
    batch = tf.constant(serialize_raw_examples([_good(1), _bad(case), _good(2)], spec))
    with pytest.raises(tf.errors.InvalidArgumentError, match=_named(name)):
        loaded.signatures["serving_default"](examples=batch)
