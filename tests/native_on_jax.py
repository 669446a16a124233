"""The native preprocessor's outputs under KERAS_BACKEND=jax, from a child process (Keras fixes its backend at
import); the parent compares them with the TF graph's."""

import json
import os
import subprocess
import sys

import numpy as np

# a list's var-len ids (and other refused outputs) have no native layers: strict=False leaves them out
_CHILD = """
import json, sys
import numpy as np
import keras
from skewless.layers import keras_preprocessor, raw_feature_batch
from skewless.layers.transform_graph import specs_from_json
from skewless.pipelines.commands.verify_source import dense_inputs

work = sys.argv[1]
inputs = json.load(open(work + "/inputs.json"))
spec = specs_from_json(inputs["spec"])
batch = dense_inputs(inputs["rows"], spec) if inputs["dense"] else raw_feature_batch(inputs["rows"], spec)
outputs = keras_preprocessor(sys.argv[2], strict=False)(batch)
np.savez(work + "/jax.npz", backend=keras.backend.backend(), **{name: np.asarray(value) for name, value in outputs.items()})
"""


def native_outputs_on_jax(run_dir, rows: list[dict], spec: dict, work_dir, dense: bool = False,
                          x64: bool = False) -> dict:
    """{feature: NumPy array} the native preprocessor of `run_dir` gives for raw `rows` (typed by `spec`) on JAX,
    fed as a serving request parses them (sparse optional features) or, with `dense`, as dense NumPy arrays
    (`verify_source.dense_inputs`: NaN for a missing float, "" for a missing string); with `x64`, JAX holds
    int64 (`jax_enable_x64`). A child that fails raises `ChildFailed` with its stderr."""
    from skewless.layers.transform_graph import specs_to_json

    rows = [{name: _text(value) for name, value in row.items()} for row in rows]
    (work_dir / "inputs.json").write_text(json.dumps({"spec": specs_to_json(spec), "rows": rows, "dense": dense}))
    return _outputs_of_child(_CHILD, run_dir, work_dir, x64)


def _text(value):
    """JSON takes no bytes: text values (and list items) as str."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [_text(item) for item in value]
    return value


_DENSE_CHILD = """
import json, sys
import numpy as np
import keras
from skewless.layers import keras_preprocessor

work = sys.argv[1]
columns = json.load(open(work + "/columns.json"))
batch = {name: np.array(values, dtype=object if isinstance(values[0], str) else np.float32)
         for name, values in columns.items()}
outputs = keras_preprocessor(sys.argv[2], strict=False)(batch)
np.savez(work + "/jax.npz", backend=keras.backend.backend(), **{name: np.asarray(value) for name, value in outputs.items()})
"""


def native_dense_outputs_on_jax(run_dir, columns: dict[str, list], work_dir) -> dict:
    """{feature: NumPy array} the native preprocessor of `run_dir` gives on JAX for dense NumPy `columns` (text as
    object arrays, numbers as float32: NaN, "" and NA tokens are items of their own)."""
    (work_dir / "columns.json").write_text(json.dumps(columns))
    return _outputs_of_child(_DENSE_CHILD, run_dir, work_dir)


class ChildFailed(AssertionError):
    """The JAX child failed; its stderr's end is the message."""


def _outputs_of_child(script: str, run_dir, work_dir, x64: bool = False) -> dict:
    """Runs `script` on JAX in a child process over the inputs in `work_dir`; its outputs, checked to be JAX's."""
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3",
           "JAX_ENABLE_X64": "1" if x64 else "0"}
    child = subprocess.run([sys.executable, "-c", script, str(work_dir), os.fspath(run_dir)], env=env,
                           capture_output=True, text=True, timeout=600)
    if child.returncode != 0:
        raise ChildFailed(child.stderr[-4000:])
    outputs = dict(np.load(work_dir / "jax.npz"))
    assert str(outputs.pop("backend")) == "jax"
    return outputs
