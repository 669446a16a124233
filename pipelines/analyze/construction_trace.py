"""tf.Transform's first analysis graph pruned from the trace it made as the pipeline was built, not traced again.

tf.Transform traces the `preprocessing_fn` twice before any row is read: once as `AnalyzeDataset` builds the
pipeline, to find the analyzers (`impl_helper._trace_preprocessing_fn_v2`), and once as the pipeline runs, for the
first phase's analysis graph (`_create_v2_saved_model` with no analyzer results yet): the same function on the same
inputs and temporary folder, whose graph tf.Transform then prunes to the analyzers' inputs, named after the tensors
of the first trace. Where that analysis graph is read in memory (`saved_model_reuse.analysis_graphs_in_memory`),
it is pruned from the first trace instead: one trace fewer per fresh run, ~0.21 s of the census config's 14 features
on the 2-core benchmark machine (docs/performance.md, session 23).

The first trace is made through tf.Transform's own `trace_and_update_module` (so the module holds the resources,
trackable objects and variables the trace made, as an analysis graph's module does) but left unpruned; the
analysis graph's outputs get what a trace of their own gives them: an `Identity` of each named tensor, run after
the ops the function must run (auto control dependencies' `NoOp`), then tf.Transform's `optimize_concrete_function`.
A graph that holds no analyzer (its first phase is the transform graph, which is written), a phase with results,
and any call outside the job's in-memory block trace as tf.Transform does (tests/pipelines/test_construction_trace.py:
the same bytes either way).
"""

from __future__ import annotations

import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass

import tensorflow as tf
from tensorflow_transform import analyzer_nodes, graph_context, impl_helper, tf2_utils
from tensorflow_transform.saved import saved_transform_io_v2

from skewless.pipelines.runner.shared_patch import SharedPatch

_lock = threading.Lock()
_unpruned = threading.local()  # set while this thread traces for the pipeline's construction


@dataclass
class _Construction:
    specs: dict
    concrete: object  # the construction's ConcreteFunction, its outputs the preprocessing_fn's
    module: tf.Module  # what `trace_and_update_module` tracked on the way


# (tf.Transform's temporary folder, the preprocessing_fn's token) -> its construction trace. The function reaches
# the first phase pickled and unpickled (a copy), so the construction gives it a token to be known by: an attribute,
# which pickling keeps (a function that takes none is traced again).
_constructions: dict = {}
_TOKEN = "skewless_construction_token"


def _trace_for_construction(preprocessing_fn, specs, base_temp_dir):
    """`impl_helper._trace_preprocessing_fn_v2`, its trace kept (with the module that tracked what it made) for
    the analysis graph of `base_temp_dir`'s first phase."""
    context = graph_context.TFGraphContext(module_to_export=tf.Module(), temp_dir=base_temp_dir,
                                           evaluated_replacements=None)
    traced = impl_helper.get_traced_transform_fn(preprocessing_fn, specs, context)
    token = _token_of(preprocessing_fn)
    _unpruned.active = True
    try:
        concrete = saved_transform_io_v2.trace_and_update_module(
            context.module_to_export, traced, "transform_fn", strip_control_dependencies=False)
    finally:
        _unpruned.active = False
    # only a graph with analyzers has an analysis graph (tf.Transform empties the collection as it builds the
    # pipeline from it)
    if token is not None and concrete.graph.get_collection(analyzer_nodes.TENSOR_REPLACEMENTS):
        with _lock:
            _constructions[(base_temp_dir, token)] = _Construction(specs, concrete, context.module_to_export)
    return (concrete.graph, tf2_utils.get_structured_inputs_from_func_graph(concrete.graph),
            concrete.structured_outputs)


def _token_of(preprocessing_fn) -> str | None:
    """The function's token, given now if it has none; None where it takes no attribute."""
    token = getattr(preprocessing_fn, _TOKEN, None)
    if token is None:
        token = uuid.uuid4().hex
        try:
            setattr(preprocessing_fn, _TOKEN, token)
        except (AttributeError, TypeError):
            return None
    return token


def _optimize_concrete_function(concrete_function, strip_control_dependencies):
    """tf.Transform's pruning, but for the construction's own trace, which stays whole (its analysis graph's pruning
    is done from it, to other outputs)."""
    if getattr(_unpruned, "active", False):
        return concrete_function
    return _PATCH.original(saved_transform_io_v2, "optimize_concrete_function")(
        concrete_function, strip_control_dependencies)


@dataclass
class _Outputs:
    """What tf.Transform's `optimize_concrete_function` reads of a concrete function: a graph's inputs with other
    outputs."""

    graph: object
    structured_outputs: dict

    @property
    def inputs(self):
        return self.graph.inputs

    @property
    def structured_input_signature(self):
        return self.graph.structured_input_signature

    @property
    def outputs(self):
        return tf.nest.flatten(self.structured_outputs)


def analysis_graph(base_temp_dir, preprocessing_fn, input_signature, output_keys_to_name_map):
    """The module of the first phase's analysis graph of `base_temp_dir`, pruned from the construction's trace to
    the tensors `output_keys_to_name_map` names, or None where tf.Transform traces it (no construction trace kept
    for these arguments)."""
    with _lock:
        construction = _constructions.pop((base_temp_dir, getattr(preprocessing_fn, _TOKEN, None)), None)
    if construction is None or not output_keys_to_name_map or construction.specs != input_signature:
        return None
    graph = construction.concrete.graph
    must_run = {op.name: op for output in graph.outputs for op in output.op.control_inputs}
    with graph.as_default(), tf.control_dependencies([must_run[name] for name in sorted(must_run)]):
        outputs = {key: tf.identity(graph.get_tensor_by_name(name)) for key, name in output_keys_to_name_map.items()}
    pruned = saved_transform_io_v2.optimize_concrete_function(_Outputs(graph, outputs),
                                                              strip_control_dependencies=False)
    module = construction.module
    module.pruned_variables = pruned.variables
    module.transform_fn = pruned
    return module


def _forget() -> None:
    # the folders named here are the job's temporary ones, gone after it
    _constructions.clear()


_PATCH = SharedPatch([(impl_helper, "_trace_preprocessing_fn_v2", _trace_for_construction),
                      (saved_transform_io_v2, "optimize_concrete_function", _optimize_concrete_function)],
                     on_restore=_forget)


@contextmanager
def kept():
    """While the block runs, tf.Transform's construction traces are kept for `analysis_graph`."""
    with _PATCH.installed():
        yield
