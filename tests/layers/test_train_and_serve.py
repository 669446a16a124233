"""End to end: the job's TFRecords train a Keras 3 model; its export serves raw examples with the run deleted.

Rows are matched between the two paths by their transformed features: the batch path's (read from the
TFRecords) must equal the serving path's (the export's `transform_features`) row for row, and the
served predictions must equal the in-memory model's on the same rows.
"""

import json
import shutil
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf
from example_job import EXAMPLE_CONFIG

from skewless.layers import export_serving_model, read_spec_file, serialize_raw_examples
from skewless.pipelines.tfdata.dataset import make_dataset
from skewless.pipelines.reading.synthetic_rows import synthetic_rows

# Runs in a fresh interpreter, as a serving container would: TensorFlow only, no skewless, no tf.Transform.
SERVE = """
import sys
import numpy as np
import tensorflow as tf

export_dir, examples_path, out_path = sys.argv[1:]
served = tf.saved_model.load(export_dir)
examples = tf.constant(list(tf.data.TFRecordDataset(examples_path).as_numpy_iterator()))
outputs = {"prediction": served.signatures["serving_default"](examples=examples)["output_0"].numpy()}
for name, value in served.signatures["transform_features"](examples=examples).items():
    outputs["feature:" + name] = value.numpy()
np.savez(out_path, **outputs)
assert not {"skewless", "tensorflow_transform", "apache_beam"} & set(sys.modules), "served with more than TF"
"""

CATEGORICAL = {"hours_per_week": 4, "workclass": 8, "education": 7, "occupation": 16, "native_country": 16}
NUMERIC = ("age", "fnlwgt", "capital_gain")


def small_model():
    inputs = {name: keras.Input((1,), name=name) for name in NUMERIC}
    inputs.update({name: keras.Input((), dtype="int64", name=name) for name in CATEGORICAL})
    embedded = [keras.layers.Embedding(size, 2)(inputs[name]) for name, size in CATEGORICAL.items()]
    hidden = keras.layers.Concatenate()([*(inputs[name] for name in NUMERIC), *embedded])
    hidden = keras.layers.Dense(16, activation="relu")(hidden)
    return keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(hidden))


def lexsorted(features: dict, names: list[str]) -> np.ndarray:
    """Row order that sorts the rows by their features (the first name is the last key)."""
    return np.lexsort([features[name] for name in names])


def test_train_export_delete_run_and_serve(example_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(example_run.output_dir, run_dir)
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["rows"]["quarantined"] == 0

    keras.utils.set_random_seed(0)
    model = small_model()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy")
    train = make_dataset(run_dir, "train", batch_size=128, seed=0)
    history = model.fit(train.map(lambda features, label: (features, tf.cast(label, tf.float32))), epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    model.save(tmp_path / "model.keras")

    # The batch path: every row the job wrote, as the TFRecords hold it.
    batches = [make_dataset(run_dir, split, batch_size=512, shuffle_buffer=0) for split in ("train", "eval")]
    batch_path = {}
    for dataset in batches:
        for features, _ in dataset:
            for name, value in features.items():
                batch_path.setdefault(name, []).append(value.numpy())
    batch_path = {name: np.concatenate(values) for name, values in batch_path.items()}
    predictions = model.predict({name: batch_path[name] for name in model.input}, verbose=0)

    export_serving_model(run_dir, tmp_path / "model.keras", tmp_path / "export")
    shutil.rmtree(run_dir)

    # The serving path: the raw rows the job read, serialized as a client would send them.
    seed, rows = EXAMPLE_CONFIG["input"]["seed"], EXAMPLE_CONFIG["input"]["rows"]
    raw_rows = [row for _, table in synthetic_rows(seed, 0, rows) for row in table.to_pylist()]
    assert sum(summary["rows"]["written"].values()) == len(raw_rows) == len(predictions)
    with tf.io.TFRecordWriter(str(tmp_path / "examples.tfrecord")) as writer:
        for example in serialize_raw_examples(raw_rows, read_spec_file(tmp_path / "export")["raw"]):
            writer.write(example)
    served = subprocess.run(
        [sys.executable, "-c", SERVE, str(tmp_path / "export"), str(tmp_path / "examples.tfrecord"),
         str(tmp_path / "served.npz")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert served.returncode == 0, served.stderr[-3000:]
    served = dict(np.load(tmp_path / "served.npz"))
    serving_path = {name.removeprefix("feature:"): value for name, value in served.items() if name != "prediction"}

    names = sorted(serving_path)
    assert names == sorted(batch_path)
    batch_order, serving_order = lexsorted(batch_path, names), lexsorted(serving_path, names)
    for name in names:
        np.testing.assert_array_equal(serving_path[name][serving_order], batch_path[name][batch_order], err_msg=name)
    np.testing.assert_allclose(served["prediction"][serving_order], predictions[batch_order], rtol=1e-6, atol=1e-7)
