"""The model as the serving signatures call it: tables it only gathers rows from are constants of the graph.

A Keras 3 `Embedding` reads its whole table (`ReadVariableOp`) and then gathers rows from it (`GatherV2`), and
every variable is one more captured input of each call. With the table held as a constant, both are gone, one
pair per table (bench_serving's census head: 8 reads and 8 inputs per call fewer, p50 1.04x stock's down to
0.96-1.00x; see docs/performance.md "Serving latency"). A gather only copies rows, so a constant table gives bit
for bit what the variable gives, negative ids included (the model's own ops are kept). Every other variable
stays a variable: with its value in the graph, Grappler rewrites arithmetic by value (an all-zero bias added is
dropped, so the fused MatMul+BiasAdd kernel is not used; a division by a constant becomes a multiplication by
its reciprocal), which changes results in the last bits.

Keras 3's `Embedding` gathers through `ops.take`, which first maps negative ids to rows from the end
(`where(ids < 0, ids + rows, ids)`: three more ops per table). Where the export knows an input's values are never
negative (`never_negative`: a vocabulary's ids with OOV buckets, a hash's), the gather takes the input itself: the
same rows for every id the input can hold (bench_serving's census head: 276 -> 243 nodes per call, p50 1.04x ->
1.01x stock's in one run of the exports taking turns; docs/performance.md "Serving latency").
"""

from __future__ import annotations

from typing import Collection

import keras
import tensorflow as tf
# convert_variables_to_constants_v2 converts every variable; its converter takes an allowlist of them.
from tensorflow.python.framework import convert_to_constants

from skewless.layers.fixed_size_calls import in_fixed_size_calls

# Larger tables stay variables: a constant is stored in the graph itself (a GraphDef is limited to 2 GB) and
# read into memory whole. A frozen table is a constant only: the export saves `ServingHead.variables`.
MAX_FROZEN_BYTES = 32 * 2**20


class ServingHead:
    """`model` as the export calls it (`head(inputs)`: `ROWS` rows per call, see `layers/fixed_size_calls.py`), and
    `variables`: the TF variables that call reads, those of `model` but the tables made constants, for the export
    to save (each weight once: a variable or a constant)."""

    def __init__(self, call, variables):
        self._call = call
        self.variables = variables

    def __call__(self, inputs):
        return in_fixed_size_calls(self._call, inputs)


def serving_head(model, never_negative: Collection = ()) -> ServingHead:
    """`model` as a function of its input structure (fed as `model.input`), in inference mode.

    Tables used only by gathers become constants when the model's graph calls no inner functions (control
    flow, nested tf.functions: left as they are) and takes dense inputs; otherwise the model is called as is.
    `never_negative` holds those of the model's inputs (its `keras.Input` tensors) that hold no negative value: a
    frozen table's gather takes them without `take`'s negative-id mapping.
    """
    def call(inputs):
        return model(inputs, training=False)

    # a Keras variable's value on the TensorFlow backend is its tf.Variable, the object the export saves
    as_is = ServingHead(call, [variable.value for variable in model.variables])
    specs = keras.tree.map_structure(_dense_spec, model.input)
    if any(spec is None for spec in tf.nest.flatten(specs)):
        return as_is
    traced = tf.function(call, autograph=False).get_concrete_function(specs)
    if traced.graph.as_graph_def().library.function:
        return as_is
    tables = _gathered_only(traced)
    if not tables or sum(tables.values()) > MAX_FROZEN_BYTES:
        return as_is
    converter = convert_to_constants._FunctionConverterDataInEager(
        func=traced, lower_control_flow=False, aggressive_inlining=False, variable_names_allowlist=set(tables)
    )
    graph_def, frozen_inputs = convert_to_constants._replace_variables_by_constants(converter_data=converter)
    _gather_ids_directly(graph_def, _placeholders_of(model, traced, never_negative))
    frozen = convert_to_constants._construct_concrete_function(traced, graph_def, frozen_inputs)
    captured = [value for index, value in enumerate(traced.captured_inputs) if index not in frozen_inputs]
    by_handle = {id(variable.handle): variable for variable in traced.graph.variables}

    def call_frozen(inputs):
        outputs = frozen(*tf.nest.flatten(inputs), *captured)
        return tf.nest.pack_sequence_as(traced.structured_outputs, outputs)

    return ServingHead(call_frozen, [by_handle[id(value)] for value in captured if id(value) in by_handle])


def _dense_spec(tensor):
    """The TensorSpec of a dense model input; None for a sparse or ragged one."""
    if getattr(tensor, "sparse", False) or getattr(tensor, "ragged", False):
        return None
    return tf.TensorSpec(tensor.shape, tensor.dtype)


def _gathered_only(traced) -> dict[str, int]:
    """{captured variable's placeholder name: its size in bytes} for the variables read only to gather from."""
    variables = {id(variable.handle): variable for variable in traced.graph.variables}
    tables = {}
    for outside, inside in traced.graph.captures:
        variable = variables.get(id(outside))
        reads = inside.consumers()
        if variable is None or not reads:
            continue
        if all(read.type == "ReadVariableOp" and _only_gathered(read.outputs[0]) for read in reads):
            tables[inside.op.name] = variable.shape.num_elements() * variable.dtype.size
    return tables


def _only_gathered(value) -> bool:
    """True when `value` is used only as the table of gathers, or for its shape."""
    return all(
        (use.type == "GatherV2" and use.inputs[0] is value) or use.type == "Shape" for use in value.consumers()
    )


def _placeholders_of(model, traced, inputs: Collection) -> set[str]:
    """The graph's placeholder op names of `inputs`, some of the model's input tensors."""
    wanted = {id(tensor) for tensor in inputs}
    # the traced function's inputs follow the model's flattened inputs (captures come after them)
    return {placeholder.op.name for tensor, placeholder in zip(tf.nest.flatten(model.input), traced.inputs)
            if id(tensor) in wanted}


def _gather_ids_directly(graph_def, never_negative: set[str]) -> None:
    """Has each gather from a frozen table whose ids are `take`'s `where(x < 0, x + rows, x)` of a never-negative
    placeholder `x` gather `x` itself (in place; the mapping's ops are left unused and pruned when it runs)."""
    nodes = {node.name: node for node in graph_def.node}

    def node_of(name: str):
        return nodes.get(name.split(":")[0])

    def constant(name: str) -> bool:  # a frozen table is its read's Identity of a Const
        node = node_of(name)
        while node is not None and node.op == "Identity":
            node = node_of(node.input[0])
        return node is not None and node.op == "Const"

    for gather in graph_def.node:
        if gather.op != "GatherV2" or len(gather.input) < 2 or not constant(gather.input[0]):
            continue
        select = node_of(gather.input[1])
        if select is None or select.op != "SelectV2" or len(select.input) != 3:
            continue
        less, add, ids = (node_of(name) for name in select.input)
        if (ids is None or ids.name not in never_negative or ":" in select.input[2]
                or less is None or less.op != "Less" or add is None or add.op != "AddV2"):
            continue
        zero = node_of(less.input[1])
        if (less.input[0] != ids.name or add.input[0] != ids.name or zero is None or zero.op != "Const"
                or tf.make_ndarray(zero.attr["value"].tensor).tolist() != 0):
            continue
        gather.input[1] = ids.name
