"""model_inputs / FeatureEncoder and the encoding advice rule.

The encoded tensor is checked column by column against NumPy (one-hot of the ids, the values, the
embedding rows); the census model of docs/training.md "Model-ready inputs" trains, saves, reloads and serves.
"""

import csv

import keras
import numpy as np
import pytest
import tensorflow as tf
from typer.testing import CliRunner

from example_job import CENSUS_COLUMNS

from skewless.encoding_advice import EMBEDDING, ONE_HOT, advise, embedding_dim
from skewless.errors import InputError
from skewless.layers import (
    FeatureEncoder,
    TransformLayer,
    model_inputs,
    read_spec_file,
    serialize_raw_examples,
    transform_raw_rows,
)
from skewless.pipelines.tfdata.dataset import make_dataset
from skewless.pipelines.reading.synthetic_rows import synthetic_rows


def test_advice_one_hot_up_to_fifty_ids_then_fastai_sized_embeddings():
    assert [advise(n).encoding for n in (1, 2, 10, 11, 50)] == [ONE_HOT] * 5
    assert [advise(n).width for n in (1, 10, 50)] == [1, 10, 50]
    assert advise(51).encoding == EMBEDDING
    # fast.ai's emb_sz_rule: min(600, round(1.6 * n ** 0.56))
    assert [embedding_dim(n) for n in (51, 64, 1000, 10**6)] == [14, 16, 77, 600]
    assert advise(64).width == 16 and advise(10**6).width == 600
    dims = [embedding_dim(n) for n in range(51, 100_000, 97)]
    assert dims == sorted(dims) and all(dim < n for dim, n in zip(dims, range(51, 100_000, 97)))
    assert advise(7).describe() == "one-hot (7 ids)"
    assert advise(17).describe(is_list=True) == "multi-hot (17 ids; an embedding of 8 would do too)"
    assert advise(64).describe() == "embedding of 16 (64 ids)"
    with pytest.raises(ValueError):
        advise(0)


def _features(run_dir, rows=300, names=None):
    features, _ = next(iter(make_dataset(run_dir, "train", batch_size=rows, shuffle_buffer=0, features=names)))
    return features


def test_encoded_columns_are_the_advice_per_feature(example_run):
    import tensorflow_transform as tft

    graph = tft.TFTransformOutput(example_run.graph_dir)
    inputs, encoded = model_inputs(example_run.output_dir)
    spec = graph.transformed_feature_spec()
    assert sorted(inputs) == sorted(set(spec) - {"label"})

    features = _features(example_run.output_dir)
    encoder = keras.Model(inputs, encoded)
    columns = encoder.predict(dict(features), verbose=0)
    embeddings = next(layer for layer in encoder.layers if isinstance(layer, FeatureEncoder)).embeddings
    offset, kinds = 0, {}
    for name in sorted(inputs):  # model_inputs encodes in name order
        values = features[name].numpy()
        try:
            ids = graph.num_buckets_for_transformed_feature(name)
        except ValueError:  # no categorical domain: a number, one column as it is
            np.testing.assert_array_equal(columns[:, offset], values.astype(np.float32), err_msg=name)
            offset, kinds[name] = offset + 1, "numeric"
            continue
        advice = advise(ids)
        width = advice.width  # one-hot: ids columns; embedding: its dimension
        block = columns[:, offset:offset + width]
        if advice.encoding == ONE_HOT:
            np.testing.assert_array_equal(block, np.eye(ids, dtype=np.float32)[values], err_msg=name)
        else:
            table = embeddings[name].embeddings.numpy()
            assert table.shape == (ids, width)
            np.testing.assert_allclose(block, table[values], rtol=1e-6, err_msg=name)
        offset, kinds[name] = offset + width, advice.encoding
    assert encoded.shape[1] == offset == columns.shape[1]
    # the small example run has no vocabulary above 50 ids; native_country hashes into 16 buckets
    assert kinds == {"age": "numeric", "capital_gain": "numeric", "fnlwgt": "numeric", "education": ONE_HOT,
                     "hours_per_week": ONE_HOT, "native_country": ONE_HOT, "occupation": ONE_HOT, "workclass": ONE_HOT}


def test_embedding_dims_override_the_advice(example_run):
    _, advised = model_inputs(example_run.output_dir)
    inputs, encoded = model_inputs(example_run.output_dir, embedding_dims={"native_country": 3, "education": 2},
                                   features=["age", "education", "native_country"])
    assert sorted(inputs) == ["age", "education", "native_country"]
    assert encoded.shape[1] == 1 + 2 + 3 < advised.shape[1]
    encoder = next(layer for layer in keras.Model(inputs, encoded).layers if isinstance(layer, FeatureEncoder))
    assert {name: layer.embeddings.shape for name, layer in encoder.embeddings.items()} == {
        "education": (7, 2), "native_country": (16, 3)}  # top_k 5 + 2 OOV buckets; 16 hash buckets
    with pytest.raises(InputError, match="'label'"):
        model_inputs(example_run.output_dir, features=["age", "label"])
    with pytest.raises(InputError, match="embedding_dims names \\['workclass'\\]"):
        model_inputs(example_run.output_dir, embedding_dims={"workclass": 4}, features=["age"])
    with pytest.raises(InputError, match="positive int"):
        model_inputs(example_run.output_dir, embedding_dims={"workclass": 0})


def test_encoder_config_round_trips():
    plan = [{"feature": "a", "encoding": "numeric", "width": 2},
            {"feature": "b", "encoding": "embedding", "width": 3, "ids": 60, "weights": "b_weights"}]
    encoder = FeatureEncoder(plan, name="enc")
    again = FeatureEncoder.from_config(encoder.get_config())
    assert again.plan == plan and again.width == 5 and again.name == "enc"
    with pytest.raises(InputError, match="unknown encoding 'bucket'"):
        FeatureEncoder([{"feature": "a", "encoding": "bucket", "width": 1}])


def test_raw_inputs_hold_the_graph_and_encode_as_the_transformed_features(example_run, tmp_path):
    inputs, encoded = model_inputs(example_run.output_dir, raw=True)
    assert "hours_per_week" in inputs and inputs["age"].dtype == "int64" and "label" not in inputs
    model = keras.Model(inputs, keras.layers.Dense(1)(encoded))
    model.save(tmp_path / "raw.keras")
    reloaded = keras.models.load_model(tmp_path / "raw.keras")

    rows = [row for _, table in synthetic_rows(3, 0, 200) for row in table.to_pylist()]
    layer = TransformLayer(example_run.output_dir)
    spec = {name: s for name, s in layer.raw_feature_spec.items() if name != "label"}
    raw = tf.io.parse_example(tf.constant(serialize_raw_examples(rows, spec)), spec)
    encoder = next(layer for layer in model.layers if isinstance(layer, FeatureEncoder))
    transformed = {name: tf.constant(value) for name, value in transform_raw_rows(layer, rows).items()}
    by_raw = keras.Model(inputs, encoded).predict(raw, verbose=0)
    np.testing.assert_array_equal(by_raw, encoder(transformed).numpy())
    np.testing.assert_allclose(reloaded.predict(raw, verbose=0), model.predict(raw, verbose=0), rtol=1e-6)


def _census_rows(census_path, spec, count):
    """The first `count` rows of the census file, typed by the raw spec, without the label."""
    rows = []
    with open(census_path, newline="") as handle:
        for values in csv.reader(handle, skipinitialspace=True):
            if len(values) != len(CENSUS_COLUMNS):
                continue
            row = dict(zip(CENSUS_COLUMNS, values))
            rows.append({name: int(row[name]) if s.dtype == tf.int64 else
                         float(row[name]) if s.dtype.is_floating else row[name] for name, s in spec.items()})
            if len(rows) == count:
                return rows
    return rows


def test_census_in_three_lines_trains_saves_and_serves(census_run, census_path, tmp_path):  # noqa: F811
    from skewless.cli import app

    run_dir = census_run.output_dir
    keras.utils.set_random_seed(0)
    inputs, encoded = model_inputs(run_dir)
    outputs = keras.layers.Dense(1, activation="sigmoid")(encoded)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"])

    def float_label(features, label):
        return features, tf.cast(label, tf.float32)

    train = make_dataset(run_dir, "train", batch_size=256, seed=0).map(float_label)
    evaluation = make_dataset(run_dir, "eval", batch_size=2048, shuffle_buffer=0).map(float_label)
    history = model.fit(train, validation_data=evaluation, epochs=3, verbose=0)
    assert history.history["val_accuracy"][-1] >= 0.84, history.history

    # native-country hashes into 64 buckets: the one embedding (16 wide); every other categorical is one-hot
    encoder = next(layer for layer in model.layers if isinstance(layer, FeatureEncoder))
    assert [entry["feature"] for entry in encoder.plan if entry["encoding"] == EMBEDDING] == ["native-country"]
    assert encoded.shape[1] == 5 + 16 + sum(entry["width"] for entry in encoder.plan if entry["encoding"] == ONE_HOT)

    model.save(tmp_path / "model.keras")
    reloaded = keras.models.load_model(tmp_path / "model.keras")
    features = _features(run_dir, rows=500)
    np.testing.assert_array_equal(reloaded.predict(features, verbose=0), model.predict(features, verbose=0))

    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["export", run_dir, "--model", str(tmp_path / "model.keras"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    spec = read_spec_file(out)["raw"]
    rows = _census_rows(census_path, spec, 300)
    served = tf.saved_model.load(str(out)).signatures["serving_default"]
    by_export = served(examples=tf.constant(serialize_raw_examples(rows, spec)))["output_0"].numpy()
    transformed = transform_raw_rows(TransformLayer(run_dir), rows)
    expected = model.predict({name: transformed[name] for name in inputs}, verbose=0)
    np.testing.assert_allclose(by_export, expected, rtol=1e-5, atol=1e-6)


WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "and", "then", "slept"]
TAGS = ["a", "b", "c", "d", "e"]
ENCODABLE = ["big", "bow", "codes", "id", "padded", "tags", "text", "tfidf"]


@pytest.fixture(scope="module")
def list_run(tmp_path_factory):
    """Lists of ids (var-len and padded), texts as ids, bags of words and TF-IDF, and a 200-bucket hash."""
    from skewless.pipelines import run

    rng = np.random.default_rng(5)
    folder = tmp_path_factory.mktemp("lists")
    lines = ["id,tags,padded,codes,big,text,bow,tfidf,word,target"]
    for i in range(240):
        tags = "|".join(rng.choice(TAGS, rng.integers(0, 4)))
        codes = "|".join(str(c) for c in rng.integers(0, 1000, rng.integers(0, 5)))
        text = " ".join(rng.choice(WORDS, rng.integers(1, 7)))
        big, target = rng.integers(0, 10_000), rng.integers(0, 2)
        lines.append(f"{i},{tags},{tags},{codes},{big},{text},{text},{text},w{i},{target}")
    (folder / "rows.csv").write_text("\n".join(lines) + "\n")
    config = {
        "name": "lists",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
        "features": {
            "id": {"transform": "passthrough"},
            "tags": {"transform": "vocabulary", "list": True},
            "padded": {"transform": "vocabulary", "list": True, "max_length": 2},
            "codes": {"transform": "hash", "hash_buckets": 100, "list": True},
            "big": {"transform": "hash", "hash_buckets": 200},
            "text": {"transform": "text_vocabulary", "top_k": 8},
            "bow": {"transform": "text_vocabulary", "top_k": 8, "output": "bag_of_words"},
            "tfidf": {"transform": "text_vocabulary", "top_k": 8, "output": "tfidf"},
            "word": {"transform": "passthrough"},  # a string: no encoding
        },
        "label": {"column": "target"},
        "output": {"dir": str(folder / "out"), "splits": {"train": 1.0}, "shards": 1},
    }
    return run(config)


def _lists(value) -> list[list]:
    if isinstance(value, tf.RaggedTensor):
        return value.to_list()
    value = value.numpy()
    return [[v for v in row if v >= 0] for row in (value[:, None] if value.ndim == 1 else value).tolist()]  # -1 pads


def test_lists_are_multi_hot_or_pooled_and_texts_weighted(list_run):
    import tensorflow_transform as tft

    graph = tft.TFTransformOutput(list_run.graph_dir)
    run_dir = list_run.output_dir
    with pytest.raises(InputError, match="feature 'word' is a string and has no fixed-width encoding"):
        model_inputs(run_dir)
    # text (8 + 1 OOV ids) as a mean of embeddings, to check the masked mean on short lists too
    inputs, encoded = model_inputs(run_dir, embedding_dims={"text": 3}, features=ENCODABLE)
    assert "bow_weights" in inputs and "tfidf_weights" in inputs  # consumed by bow and tfidf, not encoded alone
    encoder = next(layer for layer in keras.Model(inputs, encoded).layers if isinstance(layer, FeatureEncoder))
    plan = {entry["feature"]: entry for entry in encoder.plan}
    assert list(plan) == ENCODABLE
    assert plan["codes"]["encoding"] == plan["big"]["encoding"] == EMBEDDING  # 100 and 200 buckets
    assert (plan["codes"]["width"], plan["big"]["width"]) == (advise(100).width, advise(200).width)

    features = _features(run_dir, rows=240, names=list(inputs))
    columns = keras.Model(inputs, encoded).predict(dict(features), verbose=0)
    offset = 0
    for name, entry in plan.items():  # a dict keeps the plan's order: the columns' order
        block = columns[:, offset:offset + entry["width"]]
        offset += entry["width"]
        if entry["encoding"] == "numeric":
            # a passthrough number is standardized with its mean and deviation over the run's rows (NumPy's here)
            values = features[name].numpy().astype(np.float64)
            train = np.concatenate([f[name].numpy() for f, _ in make_dataset(
                run_dir, "train", batch_size=1000, shuffle_buffer=0, features=[name])]).astype(np.float64)
            np.testing.assert_allclose(block[:, 0], (values - train.mean()) / train.std(), rtol=1e-6)
            continue
        ids = graph.num_buckets_for_transformed_feature(name)
        assert entry["ids"] == ids
        lists = _lists(features[name])
        weights = _lists(features[name + "_weights"]) if entry.get("weights") else [[1.0] * len(r) for r in lists]
        if entry["encoding"] == ONE_HOT:
            expected = np.zeros((len(lists), ids), np.float32)
            for row, (row_ids, row_weights) in enumerate(zip(lists, weights)):
                for i, w in zip(row_ids, row_weights):
                    expected[row, i] = w if entry.get("weights") else 1.0
            np.testing.assert_allclose(block, expected, rtol=1e-6, err_msg=name)
        else:
            table = encoder.embeddings[name].embeddings.numpy()
            expected = np.stack([
                np.average(table[row_ids], axis=0, weights=row_weights) if row_ids else np.zeros(entry["width"])
                for row_ids, row_weights in zip(lists, weights)])
            np.testing.assert_allclose(block, expected, rtol=1e-5, atol=1e-6, err_msg=name)
    assert offset == columns.shape[1]
    # the lists hold what the tests need: empty rows, repeated tags, weights other than 1
    assert any(not row for row in _lists(features["tags"])) and any(not row for row in _lists(features["codes"]))
    assert any(len(set(row)) < len(row) for row in _lists(features["tags"]))
    assert any(w != 1.0 for row in _lists(features["tfidf_weights"]) for w in row)


def test_a_model_on_lists_trains_and_its_export_serves_raw_rows(list_run, tmp_path):
    from skewless.layers import export_serving_model, parse_raw_examples

    run_dir = list_run.output_dir
    keras.utils.set_random_seed(2)
    inputs, encoded = model_inputs(run_dir, features=ENCODABLE)
    model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(encoded))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    train = make_dataset(run_dir, "train", batch_size=64, seed=0, features=list(inputs))
    train = train.map(lambda features, label: (features, tf.cast(label, tf.float32)))
    history = model.fit(train, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()

    export_serving_model(run_dir, model, tmp_path / "export")
    spec = read_spec_file(tmp_path / "export")["raw"]
    rows = [{"id": 1, "tags": ["a", "b", "a"], "padded": ["e"], "codes": [], "big": 7, "text": "the cat sat",
             "bow": "the cat sat", "tfidf": "the cat sat", "word": "v"},
            {"id": 2, "tags": [], "padded": ["zz", "c", "d"], "codes": [1, 2, 3], "big": 9_999, "text": "unseen words",
             "bow": "dog", "tfidf": "...", "word": "w"}]  # a text with no word: "" is a missing value (docs/values.md)
    examples = tf.constant(serialize_raw_examples(rows, spec))
    served = tf.saved_model.load(str(tmp_path / "export")).signatures["serving_default"](examples=examples)
    transformed = TransformLayer(run_dir)(parse_raw_examples(examples, spec))
    expected = model({name: transformed[name] for name in inputs}).numpy()
    np.testing.assert_allclose(served["output_0"].numpy(), expected, rtol=1e-6, atol=1e-7)


def test_encoder_names_the_features_it_misses():
    encoder = FeatureEncoder([{"feature": "a", "encoding": "numeric", "width": 1},
                              {"feature": "b", "encoding": "one_hot", "width": 3, "ids": 3, "weights": "b_weights"}])
    with pytest.raises(InputError, match=r"features \['b_weights'\] are missing from its inputs \(got \['a', 'b'\]\)"):
        encoder({"a": np.zeros(2, "float32"), "b": np.zeros(2, "int64")})
    with pytest.raises(InputError, match="takes a dict"):
        encoder(np.zeros(2))


def test_the_advice_imports_nothing_heavy():
    # the report reuses the rule in light commands, which must not wait for TensorFlow
    import subprocess
    import sys

    code = "import sys, skewless.encoding_advice; print(sorted({'tensorflow', 'keras', 'apache_beam'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"
