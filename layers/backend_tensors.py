"""TF tensors next to backend tensors: the glue the native preprocessing layers need on every backend.

Keras' own string layers (StringLookup, Hashing) run TensorFlow inside on every backend: they take
TF tensors or NumPy arrays and return TF tensors for TF inputs (a ``tf.data`` pipeline) and backend
tensors otherwise. The small layers of skewless follow the same rule, so a preprocessor works
eagerly on JAX or PyTorch and inside ``tf.data.Dataset.map`` alike.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from skewless.lazy_imports import lazy_import

# on first use: only on the JAX backend, where Keras has loaded jax already
jax = lazy_import("jax")

TF_TYPES = (tf.Tensor, tf.SparseTensor, tf.RaggedTensor, tf.Variable)
INT32 = np.iinfo(np.int32)


class BeyondBackendIntegers(ValueError):
    """An int64 value the backend would hold as int32 and so change (JAX without ``jax_enable_x64``)."""

    def __init__(self, value: int):
        super().__init__(f"{value} is beyond int32, JAX's integers without jax_enable_x64: it would wrap to another"
                         " number; set jax.config.update('jax_enable_x64', True) before using the layers, or run them"
                         " on TensorFlow")
        self.value = value
        unwrapped_by_keras(self)


def unwrapped_by_keras(error: Exception) -> Exception:
    """`error`, marked so that Keras re-raises it from a layer's call as it is: it otherwise raises a copy whose
    message holds the call's arguments, the whole batch (keras/src/utils/traceback_utils.py), where the error names
    the feature already."""
    error._keras_call_info_injected = True
    return error


def is_tf(value) -> bool:
    """Whether `value` is a TF tensor (eager or symbolic, dense, sparse or ragged)."""
    return isinstance(value, TF_TYPES)


def ops_for(value):
    """The op namespace for `value`: ``tf`` for TF tensors, ``keras.ops`` (the backend's) otherwise.

    Only ops spelled the same in both are used through it (``where``, ``cast``, ``squeeze``).
    """
    return tf if is_tf(value) else keras.ops


def to_backend(tensor: tf.Tensor):
    """A TF result as the backend's tensor, except inside a TF graph (tf.data) and for strings."""
    if keras.backend.backend() == "tensorflow" or tf.inside_function() or tensor.dtype == tf.string:
        return tensor
    return _backend_tensor(tensor.numpy())


def _backend_tensor(array: np.ndarray):
    """A NumPy array as the backend's tensor; refuses int64 values the backend would wrap (`BeyondBackendIntegers`):
    JAX without x64 converts int64 to int32 silently (2**63 - 1 becomes -1), so a passthrough or filled integer
    would differ from the graph's."""
    if array.dtype == np.int64 and array.size and keras.backend.backend() == "jax" and not _jax_has_int64():
        beyond = array[(array < INT32.min) | (array > INT32.max)]
        if beyond.size:
            raise BeyondBackendIntegers(int(beyond[0]))
    return keras.ops.convert_to_tensor(array)


def _jax_has_int64() -> bool:
    return jax.dtypes.canonicalize_dtype(np.int64) == np.int64


def as_tensor(value):
    """`value` as the backend's tensor (TF inside a TF graph and for strings), from TF, backend or NumPy."""
    if isinstance(value, tf.Tensor):
        return to_backend(value)
    if is_tf(value) or keras.ops.is_tensor(value):
        return value
    array = np.asarray(value)
    if array.dtype.kind in "OSU" or keras.backend.backend() == "tensorflow" or tf.inside_function():
        return tf.convert_to_tensor(array)
    return _backend_tensor(array)


def as_tf(value):
    """`value` (TF, backend or NumPy) as a TF tensor: for the layers that run TensorFlow inside."""
    if is_tf(value):
        return value
    return tf.convert_to_tensor(keras.ops.convert_to_numpy(value) if keras.ops.is_tensor(value) else value)


def uniform_inputs(inputs):
    """A dict of raw features Keras accepts as one call argument (it refuses tensors mixed with arrays).

    On TensorFlow NumPy values become TF tensors; on other backends backend tensors become NumPy
    arrays (TF tensors are not backend tensors there), so strings and numbers can travel together.
    """
    if not isinstance(inputs, dict):
        return inputs
    if keras.backend.backend() == "tensorflow":
        return {name: value if is_tf(value) or isinstance(value, keras.KerasTensor) else tf.convert_to_tensor(value)
                for name, value in inputs.items()}
    return {name: keras.ops.convert_to_numpy(value) if keras.ops.is_tensor(value) else value
            for name, value in inputs.items()}
