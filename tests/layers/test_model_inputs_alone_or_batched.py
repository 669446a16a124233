"""Issue 43, item 3: `model_inputs` never hands a model an unscaled number, and a served row's output does not
depend on the rows served with it.

One run holds every encoding model_inputs produces: numbers a transform scaled (z_score, sin/cos, a missing
indicator), numbers it did not (epoch seconds and the wall clock's seconds of a `datetime`, a passthrough count),
one-hots, embeddings, multi-hots and means of embeddings of lists, and TF-IDF ids weighted in a one-hot and in an
embedding. The encoded tensor itself is exported behind the graph (`serving_default`), and so is a Dense model
over it; every row served alone equals the same row served among others, bit for bit.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from skewless.layers import FeatureEncoder, export_serving_model, model_inputs, serialize_raw_examples

ROWS = 300
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "red", "sun"]
TAGS = ["a", "b", "c", "d", "e"]


def _rows(seed: int, count: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(count):
        second = int(rng.integers(1_500_000_000, 1_800_000_000))
        rows.append({
            "x": None if i % 9 == 0 else float(np.float32(rng.normal(40, 12))),
            "n": float(np.float32(rng.exponential(3000))),
            "e": second,
            "t": f"20{rng.integers(10, 30)}-0{rng.integers(1, 10)}-1{rng.integers(0, 10)}T1{rng.integers(0, 10)}:30Z",
            "c": str(rng.choice(["red", "green", "blue"])),
            "h": f"h{rng.integers(0, 5000)}",
            "tags": list(rng.choice(TAGS, rng.integers(0, 4))),
            "codes": [int(c) for c in rng.integers(0, 1000, rng.integers(0, 6))],
            "doc": " ".join(rng.choice(WORDS, rng.integers(1, 9))),
            "note": " ".join(rng.choice(WORDS, rng.integers(1, 9))),
        })
    return rows


def _field(value) -> str:
    if value is None:
        return ""
    return "|".join(str(v) for v in value) if isinstance(value, list) else str(value)


@pytest.fixture(scope="module")
def encoded_run(tmp_path_factory):
    """(run directory, export of the encoded tensor, export of a Dense model over it, the encoder's plan)."""
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("alone-or-batched")
    rows = _rows(1, ROWS)
    names = list(rows[0])
    (folder / "rows.csv").write_text("\n".join([",".join(names)] + [",".join(_field(row[n]) for n in names)
                                                                      for row in rows]) + "\n")
    result = run({
        "name": "encodings",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
        "features": {
            "x": {"transform": "z_score", "default": 0, "missing_indicator": True},
            "n": {"transform": "passthrough"},
            "e": {"transform": "datetime", "parts": ["hour", "day_of_year"]},
            "t": {"transform": "datetime", "parts": ["month", "year"], "cyclical": True},
            "c": {"transform": "vocabulary"},
            "h": {"transform": "hash", "hash_buckets": 100},
            "tags": {"transform": "vocabulary", "list": True},
            "codes": {"transform": "hash", "hash_buckets": 100, "list": True},
            "doc": {"transform": "text_vocabulary", "output": "tfidf"},
            "note": {"transform": "text_vocabulary", "output": "tfidf"},
        },
        "output": {"dir": str(folder / "out"), "splits": {"train": 1.0}, "shards": 1},
    })
    keras.utils.set_random_seed(3)
    inputs, encoded = model_inputs(result.output_dir, embedding_dims={"note": 4})
    identity = keras.Model(inputs, encoded)
    dense = keras.Model(inputs, keras.layers.Dense(1)(keras.layers.Dense(16, activation="relu")(encoded)))
    plan = next(layer for layer in identity.layers if isinstance(layer, FeatureEncoder)).plan
    exports = {name: tf.saved_model.load(export_serving_model(result.output_dir, model, folder / name))
               for name, model in (("encoded", identity), ("dense", dense))}
    return result.output_dir, exports, plan


def _serve(loaded, rows):
    return loaded.signatures["serving_default"](examples=tf.constant(rows))["output_0"].numpy()


def _examples(run_dir, rows):
    from skewless.layers import TransformLayer

    layer = TransformLayer(run_dir)
    return serialize_raw_examples(rows, {name: spec for name, spec in layer.raw_feature_spec.items()})


def test_every_encoding_is_produced(encoded_run):
    _, _, plan = encoded_run
    kinds = {(entry["encoding"], "weights" in entry, "offset" in entry) for entry in plan}
    assert {("numeric", False, True), ("numeric", False, False), ("one_hot", False, False),
            ("embedding", False, False), ("one_hot", True, False), ("embedding", True, False)} <= kinds
    by_name = {entry["feature"]: entry for entry in plan}
    # numbers no transform scaled are standardized; those a transform scaled are not
    assert {name for name, entry in by_name.items() if "offset" in entry} == {"e", "n", "t", "t_year"}
    assert by_name["tags"]["encoding"] == "one_hot" and by_name["codes"]["encoding"] == "embedding"


def test_no_encoded_number_is_unscaled(encoded_run):
    """Over the training rows each numeric column has mean about 0 and deviation about 1 (NumPy's over the raw
    values), where epoch seconds once reached the model as 1.5e9."""
    run_dir, exports, plan = encoded_run
    rows = _rows(1, ROWS)
    encoded = _serve(exports["encoded"], _examples(run_dir, rows))
    assert np.abs(encoded).max() < 10
    offset = 0
    for entry in plan:
        if entry["encoding"] == "numeric" and "offset" in entry:
            column = encoded[:, offset].astype(np.float64)
            assert abs(column.mean()) < 1e-3 and abs(column.std() - 1) < 1e-3, entry["feature"]
        offset += entry["width"]
    seconds = np.array([row["e"] for row in rows], np.float64)  # e's column against NumPy's standardization
    e_column = sum(entry["width"] for entry in plan[:[entry["feature"] for entry in plan].index("e")])
    np.testing.assert_allclose(encoded[:, e_column], (seconds - seconds.mean()) / seconds.std(), rtol=0, atol=1e-5)


@pytest.mark.parametrize("export", ["encoded", "dense"])
def test_a_row_alone_equals_the_row_among_others(encoded_run, export):
    run_dir, exports, _ = encoded_run
    rows = _rows(7, 40)
    # the first row has the shortest lists, so the batch pads them with the others' lengths
    rows.sort(key=lambda row: len(row["tags"]) + len(row["codes"]) + len(row["doc"]) + len(row["note"]))
    examples = _examples(run_dir, rows)
    batched = _serve(exports[export], examples)
    for index in range(len(rows)):
        alone = _serve(exports[export], examples[index:index + 1])
        np.testing.assert_array_equal(alone[0], batched[index], err_msg=f"row {index} ({export})")
    reversed_rows = _serve(exports[export], examples[::-1])
    np.testing.assert_array_equal(reversed_rows[::-1], batched)
