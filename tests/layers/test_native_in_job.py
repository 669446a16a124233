"""output.keras_preprocessor in the job, and the native check inside `skewless verify`."""

import json
import os

import numpy as np

from example_job import example_config


def test_job_writes_an_exact_keras_preprocessor(tmp_path):
    import keras

    from skewless.layers import transform_raw_rows
    from skewless.pipelines import run
    from skewless.pipelines.reading.synthetic_rows import synthetic_rows

    config = example_config(tmp_path / "run", input={"format": "synthetic", "rows": 1500, "seed": 4},
                            output={"shards": 1, "keras_preprocessor": True})
    result = run(config)
    check = json.load(open(os.path.join(result.output_dir, "keras_preprocessor.json")))
    assert check == result.keras_preprocessor
    assert {f["name"]: f["status"] for f in check["features"]} == {
        name: "exact" for name in ("age", "hours_per_week", "fnlwgt", "capital_gain", "workclass", "education",
                                   "occupation", "native_country")
    }
    assert check["rows"] >= 1000 and "features exact" in result.summary()
    preprocessor = keras.models.load_model(os.path.join(result.output_dir, "keras_preprocessor.keras"))
    rows = [row for _, table in synthetic_rows(4, 0, 64) for row in table.to_pylist()]
    graph = transform_raw_rows(result.output_dir, rows)
    from skewless.layers.keras_preprocessor import raw_feature_batch
    from skewless.layers import TransformLayer

    native = preprocessor(raw_feature_batch(rows, TransformLayer(result.output_dir).raw_feature_spec))
    for name, values in native.items():
        np.testing.assert_array_equal(np.asarray(values), graph[name], err_msg=name)
    assert set(native) == {f["name"] for f in check["features"]}  # every exact feature, nothing else


def test_verify_reports_the_native_layers(example_run):
    from skewless.pipelines.commands.verify import verify

    result = verify(example_run.output_dir, sample=100)
    assert result.native is not None and result.native.exact
    assert result.differences == 0
