"""tf.Transform's schemas of the transformed features, inferred without tracing the `preprocessing_fn` for them.

tf.Transform traces the `preprocessing_fn` twice more than its graphs need, only for the schema:
- `AnalyzeDataset.expand` traces it while the pipeline is built, to infer a schema without analyzer results
  (`schema_inference.get_traced_metadata_fn` with `evaluate_schema_overrides=False`) for the `dataset_metadata`
  of the metadata it returns. The job never reads that schema: `WriteTransformFn` writes the deferred metadata,
  and nothing else of the job takes the analysis's. While a job runs, that call returns a marker and the schema
  inferred from it is empty (~0.5 CPU s of every run, whatever its rows).
- After tracing and writing the final transform graph, `impl_helper._trace_and_get_metadata` traces it once
  more (`evaluate_schema_overrides=True`, ~0.3 s) to evaluate the schema overrides (vocabulary id ranges,
  bucket counts, annotations) that the trace leaves in graph collections: tf.Transform cannot evaluate a
  tensor of a function's graph that is not among its outputs (its TODO b/149352022). The final trace it just
  made holds the same collections: here they are read from that trace's graph and evaluated by pruning it to
  them (tf.Transform's own way of cutting a graph down, `WrappedFunction.prune`). The values depend only on
  the analyzer results, which that graph holds as constants and tables; where one depends on the inputs
  (tf.Transform's trace feeds it a dummy batch), the graph cannot be pruned without them and tf.Transform's
  own trace runs as shipped.
transform_graph/ holds the same bytes either way (tests/pipelines/test_deferred_schema.py).
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.eager import wrap_function
from tensorflow.python.ops import op_selector
from tensorflow_metadata.proto.v0 import schema_pb2
from tensorflow_transform import impl_helper, schema_inference, tf2_utils
from tensorflow_transform.tf_metadata import dataset_metadata

from skewless.pipelines.runner.shared_patch import SharedPatch

_SKIPPED = object()  # stands for the metadata function the construction-time schema would be inferred from

# The graph collections tf.Transform's metadata function reads (schema_inference.get_traced_metadata_fn):
# tensors with a value range, their minimums and maximums; annotated tensors (or a global marker), the
# annotations' type URLs and serialized protos; and the field its sparse-output shapes are returned under.
_RANGES = (schema_inference._TF_METADATA_TENSOR_COLLECTION,
           [schema_inference._TF_METADATA_TENSOR_MIN_COLLECTION, schema_inference._TF_METADATA_TENSOR_MAX_COLLECTION])
_ANNOTATIONS = (schema_inference._TF_METADATA_EXTRA_ANNOTATION,
                [schema_inference._TF_METADATA_EXTRA_ANNOTATION_TYPE_URL,
                 schema_inference._TF_METADATA_EXTRA_ANNOTATION_PROTO],
                schema_inference._TF_METADATA_EXTRA_ANNOTATION_GLOBAL)
_SPARSE_SHAPES = schema_inference._METADATA_SPARSE_OUTPUT_OVERRIDES_FIELD


def _get_traced_metadata_fn(*args, **kwargs):
    if kwargs.get("evaluate_schema_overrides") is False:
        return _SKIPPED
    return _PATCH.original(schema_inference, "get_traced_metadata_fn")(*args, **kwargs)


def _infer_feature_schema_v2(features, concrete_metadata_fn, *args, **kwargs):
    if concrete_metadata_fn is _SKIPPED:
        return schema_pb2.Schema()
    return _PATCH.original(schema_inference, "infer_feature_schema_v2")(features, concrete_metadata_fn, *args,
                                                                        **kwargs)


def _trace_and_get_metadata(concrete_transform_fn, *args, **kwargs):
    overrides = _schema_overrides(concrete_transform_fn)
    if overrides is None:
        return _PATCH.original(impl_helper, "_trace_and_get_metadata")(concrete_transform_fn, *args, **kwargs)
    return dataset_metadata.DatasetMetadata(schema=schema_inference.infer_feature_schema_v2(
        concrete_transform_fn.structured_outputs, lambda: overrides, evaluate_schema_overrides=True))


def _schema_overrides(concrete_transform_fn) -> dict | None:
    """What tf.Transform's metadata function returns when called, from the final trace's graph: feature names
    as string tensors beside the evaluated overrides; None where an override depends on the inputs."""
    graph = concrete_transform_fn.graph
    outputs = concrete_transform_fn.structured_outputs
    # A function returns each output through an Identity that carries its automatic control dependencies; the
    # collections hold the tensors the preprocessing_fn returned.
    flat = tf.nest.flatten(outputs, expand_composites=True)
    returned, _ = tf2_utils.strip_and_get_tensors_and_control_dependencies(flat)
    unwrapped = {output.name: tensor.name for output, tensor in zip(flat, returned)}
    names = {unwrapped[name]: key for name, key in schema_inference._get_tensor_value_to_key_map(outputs).items()}
    # a plain dict: tf.Transform reads the function's result through a defaultdict of its own
    overrides = {**schema_inference._get_schema_overrides(graph, names, *_RANGES),
                 **schema_inference._get_schema_overrides(graph, names, *_ANNOTATIONS),
                 _SPARSE_SHAPES: [schema_inference._get_sparse_output_annotations_v2(graph, names)]}
    tensors = [value for value in tf.nest.flatten(overrides) if isinstance(value, tf.Tensor)]
    try:
        pruned = wrap_function.WrappedFunction(
            graph, variable_holder=wrap_function.VariableHolder(share_variables=True)).prune(feeds=[],
                                                                                              fetches=tensors)
    except op_selector.UnliftableError:  # it depends on an input placeholder
        return None
    values = dict(zip((id(tensor) for tensor in tensors), pruned()))
    return tf.nest.map_structure(
        lambda value: values[id(value)] if isinstance(value, tf.Tensor) else tf.constant(value), overrides)


_PATCH = SharedPatch([(schema_inference, "get_traced_metadata_fn", _get_traced_metadata_fn),
                      (schema_inference, "infer_feature_schema_v2", _infer_feature_schema_v2),
                      (impl_helper, "_trace_and_get_metadata", _trace_and_get_metadata)])


def skipped():
    """tf.Transform's schemas are inferred without tracing the preprocessing_fn again for the pipelines built
    while the block runs."""
    return _PATCH.installed()
