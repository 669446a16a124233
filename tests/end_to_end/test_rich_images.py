"""`transform: image`: PNG/JPEG bytes made with TensorFlow go through the job (decode, resize, scale to [0, 1] in
the graph), train a tiny Keras model, and its export serves the raw serialized examples with the same pixels."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from rich_rows import served_rows, written_rows

ROWS = 120
SIZE = (8, 6)


def bilinear(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Bilinear resize with half-pixel centers, edges clamped (what tf.image.resize does without antialias)."""

    def axis(out: int, size: int):
        position = np.maximum((np.arange(out) + 0.5) * size / out - 0.5, 0.0)
        low = np.floor(position).astype(int)
        return low, np.minimum(low + 1, size - 1), position - low

    y0, y1, fy = axis(height, image.shape[0])
    x0, x1, fx = axis(width, image.shape[1])
    top = image[y0][:, x0] * (1 - fx)[None, :, None] + image[y0][:, x1] * fx[None, :, None]
    bottom = image[y1][:, x0] * (1 - fx)[None, :, None] + image[y1][:, x1] * fx[None, :, None]
    return top * (1 - fy)[:, None, None] + bottom * fy[:, None, None]


@pytest.fixture(scope="module")
def image_run(tmp_path_factory):
    """Reddish images are class 1, bluish class 0, of random sizes; 2 in 3 are PNG (one grayscale), the rest JPEG."""
    from skewless.pipelines import run

    rng = np.random.default_rng(4)
    folder = tmp_path_factory.mktemp("images")
    pixels, records = [], []
    for i in range(ROWS):
        label = i % 2
        height, width = rng.integers(9, 20, 2)
        color = [190, 60, 50] if label else [50, 70, 190]
        image = np.clip(rng.normal(color, 35, (height, width, 3)), 0, 255).astype(np.uint8)
        if i == 4:
            image = image[:, :, :1]  # grayscale: decoded to 3 equal channels
        encoded = tf.io.encode_jpeg(image, quality=90) if i % 3 == 0 else tf.io.encode_png(image)
        pixels.append(image)
        records.append(tf.train.Example(features=tf.train.Features(feature={
            "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
            "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[encoded.numpy()])),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
        })).SerializeToString())
    not_an_image = tf.train.Example(features=tf.train.Features(feature={
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[ROWS])),
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"<html>not an image</html>"])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[0])),
    })).SerializeToString()
    with tf.io.TFRecordWriter(str(folder / "images.tfrecord")) as writer:
        for record in records[:50] + [not_an_image] + records[50:]:
            writer.write(record)
    config = {
        "name": "images",
        "input": {"format": "tfrecord", "paths": [str(folder / "images.tfrecord")]},
        "features": {"id": {"transform": "passthrough"}, "image": {"transform": "image", "size": list(SIZE)}},
        "label": {"column": "label"},
        "output": {"dir": str(folder / "out"), "shards": 2, "max_bad_fraction": 0.05},
    }
    result = run(config)
    return result, pixels, records, written_rows(result.output_dir)


def test_pixels_are_decoded_resized_and_scaled(image_run):
    import tensorflow_transform as tft

    result, pixels, records, written = image_run
    spec = tft.TFTransformOutput(result.graph_dir).transformed_feature_spec()["image"]
    assert spec == tf.io.FixedLenFeature([*SIZE, 3], tf.float32)
    assert result.features["image"]["count"] == ROWS and "top_values" not in result.features["image"]
    for i, (image, record) in enumerate(zip(pixels, records)):
        got = np.array(written["image"][i])
        assert got.shape == (*SIZE, 3) and got.min() >= 0 and got.max() <= 1
        if i % 3 == 0:  # JPEG is lossy: its decoded pixels (near the source ones) are what gets resized
            encoded = tf.train.Example.FromString(record).features.feature["image"].bytes_list.value[0]
            decoded = tf.io.decode_jpeg(encoded).numpy()
            assert np.abs(decoded.mean(axis=(0, 1)) - image.mean(axis=(0, 1))).max() < 8  # same colour
            image = decoded
        rgb = np.repeat(image, 3, axis=2) if image.shape[2] == 1 else image
        np.testing.assert_allclose(got, bilinear(rgb / 255.0, *SIZE), atol=1e-5)
    assert np.ptp(np.array(written["image"][4]), axis=2).max() == 0  # grayscale: equal channels


def test_bytes_that_are_no_image_go_to_quarantine(image_run):
    import json
    import os

    result, *_ = image_run
    assert result.rows["read"] == ROWS + 1 and result.rows["quarantined"] == 1
    (name,) = os.listdir(os.path.join(result.output_dir, "quarantine"))
    with open(os.path.join(result.output_dir, "quarantine", name)) as handle:
        (row,) = [json.loads(line) for line in handle]
    assert row["line"] == 51 and row["reason"] == (
        "image: '<html>not an image</html>' is not an encoded image (JPEG, PNG, GIF, BMP, WebP, JPEG XL)")


def test_shards_equal_serving_and_verify(image_run):
    from skewless.layers import TransformLayer
    from skewless.pipelines.commands.verify import verify

    result, _, records, written = image_run
    parsed = [tf.train.Example.FromString(record).features.feature for record in records]
    rows = [{"id": f["id"].int64_list.value[0], "image": f["image"].bytes_list.value[0]} for f in parsed]
    served = served_rows(TransformLayer(result.output_dir), rows)
    assert served["image"] == written["image"] and served["id"] == written["id"]
    check = verify(result.output_dir, sample=40)
    assert check.differences == 0 and {c.name for c in check.features} == {"id", "image", "label"}


def test_train_a_tiny_model_and_serve_serialized_examples(image_run, tmp_path):
    from skewless.layers import export_serving_model
    from skewless.pipelines.tfdata.dataset import make_dataset

    result, _, records, written = image_run
    keras.utils.set_random_seed(0)
    image = keras.Input((*SIZE, 3), name="image")
    model = keras.Model({"image": image}, keras.layers.Dense(1, activation="sigmoid")(keras.layers.Flatten()(image)))
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])

    def as_float_label(features, label):
        return {"image": features["image"]}, tf.cast(label, tf.float32)

    train = make_dataset(result.output_dir, "train", batch_size=16, seed=0).map(as_float_label)
    evaluation = make_dataset(result.output_dir, "eval", batch_size=64, shuffle_buffer=0).map(as_float_label)
    model.fit(train, epochs=8, verbose=0)
    assert model.evaluate(evaluation, verbose=0, return_dict=True)["accuracy"] >= 0.9

    export_serving_model(result.output_dir, model, tmp_path / "export")
    served = tf.saved_model.load(str(tmp_path / "export"))
    examples = tf.constant(records)  # the raw input records as clients send them (the label is ignored)
    predictions = served.signatures["serving_default"](examples=examples)["output_0"].numpy()
    expected = model.predict({"image": np.array(written["image"], dtype=np.float32)}, verbose=0)
    np.testing.assert_allclose(predictions, expected, rtol=1e-6, atol=1e-7)  # records are in id order
    labels = np.arange(ROWS) % 2
    assert np.mean((predictions[:, 0] > 0.5) == labels) >= 0.9
    pixels = served.signatures["transform_features"](examples=examples)["image"].numpy()
    np.testing.assert_array_equal(pixels, np.array(written["image"], dtype=np.float32))
