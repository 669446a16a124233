"""Which features of a run are `tf.train.SequenceExample` feature lists, and their parse specs.

A feature list holds a list of steps per row, each step a list of 0..n values: a `tf.RaggedTensor` of
shape (batch, steps, values) in the graph. The two specs tf.Transform keeps say so differently:

- the raw spec (a tf.metadata schema with the ``##SEQUENCE##`` STRUCT feature, as TFX writes it for
  SequenceExamples) gives a feature list as ``RaggedFeature(value_key=name)`` without partitions;
- the transformed spec describes a (batch, steps, values) output in `tf.train.Example` form:
  ``RaggedFeature(value_key="name$ragged_values", partitions=[RowLengths("name$row_lengths_1")])``.

Both are turned here into the (context, sequence) pair `tf.io.parse_sequence_example` takes. Only
TensorFlow is imported: the training reader and the serving layers use this without Beam.
"""

from __future__ import annotations

from skewless.lazy_imports import lazy_import

# on first use: config validation reads these modules before the CLI imports TensorFlow
tf = lazy_import("tensorflow")

# The column tfx_bsl's SequenceExample decoder gathers the feature lists in (a STRUCT in tf.metadata)
SEQUENCE_COLUMN = "##SEQUENCE##"


def is_raw_feature_list(spec) -> bool:
    return isinstance(spec, tf.io.RaggedFeature) and not spec.partitions


def is_transformed_feature_list(spec) -> bool:
    return (isinstance(spec, tf.io.RaggedFeature) and len(spec.partitions) == 1
            and isinstance(spec.partitions[0], tf.io.RaggedFeature.RowLengths))


def feature_list_spec(name: str, spec):
    """The `parse_sequence_example` spec of a feature list: a (batch, steps, values) ragged tensor."""
    return tf.io.RaggedFeature(spec.dtype, value_key=name, row_splits_dtype=spec.row_splits_dtype)


def split_raw_spec(spec: dict) -> tuple[dict, dict]:
    """A raw feature spec -> (context features, feature lists), as `tf.io.parse_sequence_example` takes them."""
    lists = {name: feature_list_spec(name, s) for name, s in spec.items() if is_raw_feature_list(s)}
    return {name: s for name, s in spec.items() if name not in lists}, lists


def split_transformed_spec(spec: dict) -> tuple[dict, dict]:
    """A transformed feature spec -> (context features, feature lists) of the run's SequenceExample shards."""
    lists = {name: feature_list_spec(name, s) for name, s in spec.items() if is_transformed_feature_list(s)}
    return {name: s for name, s in spec.items() if name not in lists}, lists


def parse_sequence_examples(serialized, context_spec: dict, sequence_spec: dict) -> dict:
    """A batch of serialized SequenceExamples -> one dict of context and feature-list tensors.

    A record that is not one fails with InvalidArgumentError "Invalid protocol message input, example id:
    batch position N" (N counted from 0). A `tf.train.Example` reads as a SequenceExample whose context is
    its features (both keep them in field 1), so `sequence_spec` may be empty.

    An empty batch gives empty tensors. The parse op refuses a required (no default) dense feature of zero
    records ("Inconsistent max number of elements"), and an empty default is what makes a feature required: each
    required feature's default is a tensor computed from the batch, empty when it holds records and zeros
    (which fill nothing) when it holds none. A `tf.cond` between two parses did the same with 21 more nodes per
    call: the serving export's p50 1.09x -> 1.04x stock's (docs/performance.md, "Serving latency").
    """
    serialized = tf.convert_to_tensor(serialized, tf.string)
    positions = tf.range(tf.size(serialized))
    names = tf.strings.join(["batch position ", tf.strings.as_string(positions)])
    defaults = _RequiredDefaults(positions[:1])
    context_spec = {name: defaults.spec(spec) for name, spec in context_spec.items()}
    context, sequences, _ = tf.io.parse_sequence_example(
        serialized, context_features=context_spec or None, sequence_features=sequence_spec or None,
        example_names=names,
    )
    return {**context, **sequences}


class _RequiredDefaults:
    """The default of a required dense feature, per dtype and shape (shared by the features that have both):
    no value (the feature is required) when the batch holds records, zeros when it holds none.

    tf.io.parse_sequence_example passes a default that is already a tensor to the op as it is; the op reads
    a default with no elements as "required", whatever its shape. Built from the batch's first position (a
    tensor of one element, or of none for an empty batch) that the records' names already count: fewer nodes
    per call than from the record count (docs/performance.md, "Serving latency")."""

    def __init__(self, first_position):
        self._first = first_position  # shape [1] when the batch holds records, [0] when it holds none
        self._defaults = {}  # (dtype, shape): the default
        self._dimensions = {}  # shape: the default's dimensions

    def spec(self, spec):
        if not isinstance(spec, tf.io.FixedLenFeature) or spec.default_value is not None:
            return spec
        shape = tuple(spec.shape)
        if (spec.dtype, shape) not in self._defaults:
            self._defaults[spec.dtype, shape] = tf.zeros(self._dims(shape), spec.dtype)
        return spec._replace(default_value=self._defaults[spec.dtype, shape])

    def _dims(self, shape: tuple):
        # a scalar's empty default has shape [0] and its zeros shape []; a feature of shape [d, ...] has [0, ...]
        # and [d, ...]
        if shape not in self._dimensions:
            if shape:
                none = 1 - tf.size(self._first)  # 0 when the batch holds records, 1 when it holds none
                self._dimensions[shape] = tf.stack([shape[0] * none, *shape[1:]])
            else:
                self._dimensions[shape] = tf.zeros_like(self._first)
        return self._dimensions[shape]
