"""`transform: scale_to_gaussian`: heavy-tailed values against stock `tft.scale_to_gaussian` on the same rows (an
AnalyzeAndTransformDataset run in the test), made about standard normal, serving equal to the written rows, and
the native Keras preprocessor refusing it with its reason."""

import numpy as np
import pytest

from rich_rows import served_rows, write_csv, written_rows

ROWS = 2000


@pytest.fixture(scope="module")
def gaussian_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(8)
    folder = tmp_path_factory.mktemp("scale_to_gaussian")
    raw = {"id": list(range(ROWS)),
           # delays: Student's t with 2 degrees of freedom, long tails both ways; eighths are exact in float32
           "delay": (np.round(rng.standard_t(2, ROWS) * 80) / 8).tolist(),
           # no long tail: tf.Transform falls back to the z-score
           "flat": (rng.integers(0, 800, ROWS) / 8).tolist(),
           "label": rng.integers(0, 2, ROWS).tolist()}
    write_csv(folder / "rows.csv", raw)
    config = {"name": "gaussian", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
              "features": {"id": {"transform": "passthrough"}, "delay": {"transform": "scale_to_gaussian"},
                           "flat": {"transform": "scale_to_gaussian", "clip": [10.0, 90.0]}},
              "label": {"column": "label"}, "output": {"dir": str(folder / "out"), "shards": 1}}
    return run(config), raw


def _stock_rows(raw, temp_dir):
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "delay": tf.io.FixedLenFeature([], tf.float32),
            "flat": tf.io.FixedLenFeature([], tf.float32)}

    def gaussian(x):  # in float64, rounded to float32: a row's bits then do not depend on its place in a batch
        return tf.cast(tft.scale_to_gaussian(tf.cast(x, tf.float64)), tf.float32)

    def preprocessing_fn(inputs):
        return {"id": inputs["id"], "delay": gaussian(inputs["delay"]),
                "flat": gaussian(tf.clip_by_value(inputs["flat"], 10.0, 90.0))}

    rows = [{"id": raw["id"][i], "delay": np.float32(raw["delay"][i]), "flat": np.float32(raw["flat"][i])}
            for i in range(ROWS)]
    # one batch of every row, as the job's one work unit (shards: 1) gives them: tf.Transform estimates the L-moments
    # within each batch and averages them over the batches, so other batches give other parameters
    with tft_beam.Context(temp_dir=str(temp_dir), desired_batch_size=ROWS):
        (transformed, _), _ = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
    by_id = sorted(transformed, key=lambda row: row["id"])
    return {name: np.array([row[name] for row in by_id], np.float32) for name in ("delay", "flat")}


def test_written_values_equal_stock_tf_transform_and_are_about_normal(gaussian_run, tmp_path):
    result, raw = gaussian_run
    written, stock = written_rows(result.output_dir), _stock_rows(raw, tmp_path)
    for name in ("delay", "flat"):
        np.testing.assert_array_equal(np.asarray(written[name], np.float32), stock[name], err_msg=name)
    delay = np.asarray(written["delay"], np.float64)
    raw_delay = np.asarray(raw["delay"])
    # the long tails are pulled in: excess kurtosis of t(2) is huge, of the output near a normal's 0
    def kurtosis(x):
        return ((x - x.mean()) ** 4).mean() / x.var() ** 2 - 3

    assert kurtosis(raw_delay) > 10 and abs(kurtosis(delay)) < 1
    assert abs(delay.mean()) < 0.1 and abs(delay.std() - 1) < 0.1
    # order is kept: the transform is monotonic
    assert np.all(np.diff(delay[np.argsort(raw_delay, kind="stable")]) >= 0)
    # no long tail: the z-score of the clipped values
    flat = np.clip(np.asarray(raw["flat"], np.float64), 10, 90)
    np.testing.assert_allclose(written["flat"], (flat - flat.mean()) / flat.std(), atol=1e-5)


def test_serving_equals_the_written_rows(gaussian_run):
    from skewless.layers import TransformLayer

    result, raw = gaussian_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(ROWS)]
    served, written = served_rows(TransformLayer(result.output_dir), rows), written_rows(result.output_dir)
    for name in ("delay", "flat"):
        assert served[name] == written[name], name
    # one row alone (no SIMD lane neighbours) gives the bits it got in the batch
    for i in (0, 1, 17):
        alone = served_rows(TransformLayer(result.output_dir), [rows[i]])
        assert alone["delay"] == [written["delay"][i]], i


def test_native_preprocessor_refuses_it_with_its_reason(gaussian_run):
    from skewless.layers import check_preprocessor
    from skewless.transforms.scale_to_gaussian import TRANSFORM

    result, raw = gaussian_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(0, ROWS, 10)]
    statuses = {f.name: (f.status, f.reason) for f in check_preprocessor(result.output_dir, rows=rows, sample=100).features}
    assert statuses["delay"] == ("unsupported", TRANSFORM.native_reason)
    assert statuses["id"] == ("exact", None)
