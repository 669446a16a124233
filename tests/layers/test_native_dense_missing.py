"""Issue 43, item 6: the native preprocessor reads a missing value inside a dense input as the graph does.

A user passes optional features dense (NumPy, pandas, tensors), where a missing value is an item of its own: NaN,
"" or an NA token (`input.na_values`). The graph (TransformLayer) fills them; the native layers must give the same
values bit for bit, on TensorFlow and on JAX, and `check_preprocessor` must probe those forms (it once fed only
the sparse form a serving request parses to, and reported nothing).
"""

import keras
import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

from skewless.layers import FillMissing, TransformLayer, check_preprocessor, keras_preprocessor

ROWS = 60
# dense columns holding every missing form: NaN in floats, "" and NA tokens (bare, padded) in text
X = [1.0, float("nan"), 4.0, -2.5, float("nan"), 0.0]
C = ["a", "", "NA", " NA ", "b", "unseen"]


@pytest.fixture(scope="module")
def dense_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("dense-missing")
    lines = ["x,c,n"] + [f"{'' if i % 6 == 1 else (i % 9) * 0.5},{'' if i % 5 == 0 else 'NA' if i % 7 == 0 else 'ab'[i % 2]},"
                         f"{i % 4}" for i in range(ROWS)]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n")
    return run({
        "name": "dense", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True,
                                   "na_values": ["NA"]},
        "features": {"x": {"transform": "z_score", "fill": "mean", "missing_indicator": True},
                     "c": {"transform": "vocabulary", "default": "none", "missing_indicator": True},
                     "n": {"transform": "scale_0_1"}},
        "output": {"dir": str(folder / "out"), "shards": 1},
    }).output_dir


def _forms():
    n = np.arange(len(X), dtype=np.int64)
    return {
        "numpy": {"x": np.array(X, np.float32), "c": np.array(C, dtype=object), "n": n},
        "pandas": {"x": pd.Series(X, dtype="float32"), "c": pd.Series(C), "n": pd.Series(n)},
        "tensors": {"x": tf.constant(X), "c": tf.constant(C), "n": tf.constant(n)},
    }


def _graph(run_dir) -> dict:
    """The graph's values for the dense columns, as the serving path parses them: a missing item is absent."""
    layer = TransformLayer(run_dir)
    outputs = layer({"x": tf.constant(X), "c": tf.constant(C), "n": tf.constant(np.arange(len(X)), tf.int64)})
    return {name: np.asarray(value) for name, value in outputs.items()}


def _bits(values) -> np.ndarray:
    values = np.asarray(values)
    return values.astype(np.float32).view(np.uint32) if values.dtype.kind == "f" else values.astype(np.int64)


@pytest.mark.parametrize("form", ["numpy", "pandas", "tensors"])
def test_dense_missing_values_natively_equal_the_graph_on_tensorflow(dense_run, form):
    expected = _graph(dense_run)
    # the graph fills: the missing rows hold the filled value, not NaN, and their indicator is 1
    assert np.isfinite(expected["x"]).all() and expected["x_missing"].tolist() == [0, 1, 0, 0, 1, 0]
    assert expected["c_missing"].tolist() == [0, 1, 1, 1, 0, 0]
    native = keras_preprocessor(dense_run)(_forms()[form])
    for name in ("x", "x_missing", "c", "c_missing", "n"):
        assert _bits(keras.ops.convert_to_numpy(native[name])).tolist() == _bits(expected[name]).tolist(), name


def test_dense_missing_values_natively_equal_the_graph_on_jax(dense_run, tmp_path):
    pytest.importorskip("jax")
    from native_on_jax import native_dense_outputs_on_jax

    expected = _graph(dense_run)
    native = native_dense_outputs_on_jax(dense_run, {"x": X, "c": C, "n": list(range(len(X)))}, tmp_path)
    for name in ("x", "x_missing", "c", "c_missing", "n"):
        assert _bits(native[name]).tolist() == _bits(expected[name]).tolist(), name


def test_the_check_probes_dense_forms_and_is_exact(dense_run):
    check = check_preprocessor(dense_run, sample=300)
    assert check.not_exact() == {}
    assert {f.name for f in check.features} == {"x", "x_missing", "c", "c_missing", "n"}


def test_the_check_finds_a_layer_that_ignores_dense_missing_values(dense_run, monkeypatch):
    """A FillMissing that passes dense items through (the old bug) equals the graph on sparse input only."""
    filling = FillMissing.call

    def passes_dense_through(self, inputs):
        if isinstance(inputs, (tf.SparseTensor, tf.RaggedTensor)):
            return filling(self, inputs)
        return inputs[:, 0] if len(inputs.shape) == 2 else inputs

    monkeypatch.setattr(FillMissing, "call", passes_dense_through)
    reasons = check_preprocessor(dense_run, sample=300).not_exact()
    assert set(reasons) == {"x", "c"}, reasons
    assert all(reason.startswith("given dense NumPy arrays: differs from the graph") for reason in reasons.values())
