"""The analyzer outputs inside a tf.Transform graph, read back per transformed feature.

The Beam job folds every analyzer result (means, variances, min/max, quantile boundaries,
vocabularies) into the saved transform graph as captured constants and lookup tables. This module
walks the graph backwards from each transformed output and reports what it found there, so a
native Keras layer can be initialized with the very values the graph uses, nothing recomputed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import tensorflow as tf

from skewless.errors import SchemaError
from skewless.layers.transform_graph import find_graph_dir
from skewless.value_rules import CLOSE_UP_SCOPE, TOKENS_NAME


@dataclass
class Constant:
    """A captured analyzer output: its value and the op (type, input position) that consumes it."""

    op_type: str
    input_index: int
    value: np.ndarray


@dataclass
class GraphFeature:
    """What the graph computes one transformed feature from.

    Attributes:
        name: the transformed feature.
        dtype: its dtype name.
        raw_inputs: the raw features it reads.
        op_types: every op type between the raw inputs and the output.
        constants: captured analyzer outputs (numbers), with the op consuming each.
        tables: ``(keys, ids)`` of each lookup table it reads, keys in id order.
        hash_buckets: ``num_buckets`` of each string hashing op.
        hash_keys: the ``key`` of each keyed (SipHash) string hashing op.
        defaults: the fill values of missing (sparse) raw values: constants, or values the graph computes
            from analyzer outputs only (`fill: mean|median|most_frequent`), evaluated once here.
        fill_dtypes: the dtype of each filled value (float32 where `fill: mean|median` fills an int column).
        missing_tokens: the NA tokens (``input.na_values``) the graph reads as missing text.
        one_hot_depths: the ``depth`` of each one-hot op (ids encoded: skewless/transforms/encoded.py).
    """

    name: str
    dtype: str = ""
    raw_inputs: set[str] = field(default_factory=set)
    op_types: set[str] = field(default_factory=set)
    constants: list[Constant] = field(default_factory=list)
    tables: list[tuple[list, np.ndarray]] = field(default_factory=list)
    hash_buckets: list[int] = field(default_factory=list)
    hash_keys: list[list[int]] = field(default_factory=list)
    defaults: list = field(default_factory=list)
    fill_dtypes: list = field(default_factory=list)
    missing_tokens: list = field(default_factory=list)
    one_hot_depths: list = field(default_factory=list)

    def constant(self, op_type: str, input_index: int) -> np.ndarray | None:
        """The one captured constant consumed by `op_type` at `input_index` (None if not exactly one)."""
        found = [c.value for c in self.constants if c.op_type == op_type and c.input_index == input_index]
        return found[0] if len(found) == 1 else None


def read_graph_features(graph_dir: str | os.PathLike) -> dict[str, GraphFeature]:
    """Every transformed feature of the graph in the run (or tf.Transform output) directory `graph_dir`."""
    transform_fn = os.path.join(find_graph_dir(graph_dir), "transform_fn")
    loaded = tf.saved_model.load(transform_fn)
    function = getattr(loaded, "transform_fn", None)
    if function is None:
        raise SchemaError(f"{transform_fn}: a TF1-style transform graph; native Keras layers need a TF2 export")
    if hasattr(function, "concrete_functions"):
        function = function.concrete_functions[0]
    graph = function.graph
    outputs = tf.nest.pack_sequence_as(graph.structured_outputs, graph.outputs, expand_composites=True)
    captured = {internal.ref(): external for external, internal in graph.captures}
    raw_names = _raw_input_names(graph)
    features = {}
    for name, tensor in outputs.items():
        if isinstance(tensor, tf.SparseTensor):
            tensor = tensor.values
        elif isinstance(tensor, tf.RaggedTensor):  # a feature list: its values are what the transform computed
            tensor = tensor.flat_values
        features[name] = _walk(name, tensor, captured, raw_names)
    return features


def _raw_input_names(graph) -> dict:
    """Maps each input placeholder of the graph (dense, or a sparse input's parts) to its raw feature."""
    signature = graph.structured_input_signature
    flat = tf.nest.flatten(signature, expand_composites=True)
    packed = tf.nest.pack_sequence_as(signature, graph.inputs[: len(flat)], expand_composites=True)
    names = {}
    for name, value in packed[0][0].items():
        for part in tf.nest.flatten(value, expand_composites=True):
            names[part.ref()] = name
    return names


def _walk(name: str, output, captured: dict, raw_names: dict) -> GraphFeature:
    feature = GraphFeature(name, output.dtype.name)
    seen, pending, fill_ops = {}, [output.op], set()
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen[op.name] = op.type
        if op.type in ("StringToHashBucketFast", "StringToHashBucketStrong"):
            feature.hash_buckets.append(int(op.get_attr("num_buckets")))
        if op.type == "StringToHashBucketStrong":
            feature.hash_keys.append([int(k) for k in op.get_attr("key")])
        if op.type == "OneHot":
            feature.one_hot_depths.append(_const_value(op.inputs[1]))
        if op.type == "SparseToDense":
            feature.fill_dtypes.append(op.outputs[0].dtype.name)
            default = _const_value(op.inputs[3])
            if default is None and _upstream_ops(op.inputs[3], raw_names) is not None:
                # a fill computed from analyzer outputs alone (`fill: mean|median|most_frequent`) is one constant
                # for the native layers: the ops computing it are not the transform's
                default = _computed_value(op.inputs[3])
                fill_ops |= _upstream_ops(op.inputs[3], raw_names)
            feature.defaults.append(default)
        if op.type == "Const" and TOKENS_NAME in op.name.rsplit("/", 1)[-1]:
            feature.missing_tokens = [token.decode() for token in _const_value(op.outputs[0]).tolist()]
        for index, tensor in enumerate(op.inputs):
            if tensor.ref() in raw_names:
                feature.raw_inputs.add(raw_names[tensor.ref()])
            elif tensor.ref() in captured:
                _read_capture(feature, op, index, captured[tensor.ref()])
            pending.append(tensor.op)
    feature.op_types = {op_type for op_name, op_type in seen.items()
                        if op_name not in fill_ops and not _closes_up_a_list(op_name)}
    return feature


def _closes_up_a_list(op_name: str) -> bool:
    """Whether the op renumbers a list's values after its missing items are taken out (the value rules'
    `CLOSE_UP_SCOPE`, maybe suffixed _1, _2 ... by TensorFlow): the job's, not the transform's."""
    return any(part.startswith(CLOSE_UP_SCOPE) for part in op_name.split("/"))


def _read_capture(feature: GraphFeature, op, index: int, value) -> None:
    if value.dtype == tf.resource:
        if op.type == "LookupTableFindV2":
            feature.tables.append(_export_table(value, op.inputs[1].dtype, op.outputs[0].dtype))
        return
    feature.constants.append(Constant(op.type, index, value.numpy()))


def _export_table(handle, key_dtype, value_dtype) -> tuple[list, np.ndarray]:
    """The table's keys sorted by id, exactly as the loaded graph holds them."""
    keys, ids = tf.raw_ops.LookupTableExportV2(table_handle=handle, Tkeys=key_dtype, Tvalues=value_dtype)
    order = np.argsort(ids.numpy(), kind="stable")
    return keys.numpy()[order].tolist(), ids.numpy()[order]


def _upstream_ops(tensor, raw_names: dict) -> set[str] | None:
    """The names of the ops computing `tensor`, or None if it depends on a raw input of the graph."""
    seen, pending = set(), [tensor]
    while pending:
        current = pending.pop()
        if current.ref() in raw_names:
            return None
        if current.op.name not in seen:
            seen.add(current.op.name)
            pending.extend(current.op.inputs)
    return seen


def _computed_value(tensor):
    """The value of a graph tensor computed from captured constants only (its resources and raw inputs unfed).

    The function's graph is imported into a plain graph with each captured analyzer output fed as a
    constant, and the tensor evaluated there; None if that fails (it needs a lookup table, say).
    """
    graph = tensor.graph
    feeds = {internal.name: external.numpy() for external, internal in graph.captures
             if external.dtype != tf.resource}
    with tf.Graph().as_default() as plain:
        input_map = {name: tf.constant(value) for name, value in feeds.items()}
        try:
            (result,) = tf.import_graph_def(graph.as_graph_def(), input_map=input_map,
                                            return_elements=[tensor.name], name="")
            with tf.compat.v1.Session(graph=plain) as session:
                value = session.run(result)
        except (tf.errors.OpError, ValueError):
            return None
    value = np.asarray(value)
    return value.item() if value.ndim == 0 else value


def _const_value(tensor):
    """The value of a Const op's output (None when the tensor is computed)."""
    if tensor.op.type != "Const":
        return None
    value = tf.make_ndarray(tensor.op.get_attr("value"))
    return value.item() if value.ndim == 0 else value
