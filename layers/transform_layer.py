"""`TransformLayer`: the tf.Transform graph of a run as a Keras 3 layer."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref

import keras
import numpy as np
import tensorflow as tf

from skewless.errors import InputError
from skewless.lazy_imports import lazy_import
from skewless.run_directory import GRAPH_DIR
from skewless.layers.transform_graph import (
    FROM_RUN,
    find_graph_dir,
    label_column,
    label_classes,
    label_scale,
    reading_rules,
    specs_from_json,
    specs_to_json,
)

# tf.Transform (seconds to import) on first use: the functions that read a graph need it, `import skewless.layers`
# alone does not
tft = lazy_import("tensorflow_transform")


@keras.saving.register_keras_serializable(package="skewless")
class TransformLayer(keras.layers.Layer):
    """Applies the exact tf.Transform graph of a run to a dict of raw features.

    Takes ``{raw feature name: tensor}`` and returns ``{transformed feature name: tensor}``, computed
    by the graph the Beam job wrote, so training and serving cannot skew. FixedLen features are
    tensors of shape ``(batch,)`` (``(batch, 1)`` is accepted too); VarLen (optional) features may be
    sparse, ragged or dense, or left out, in which case the graph sees them missing in every row and
    applies the config's default. Feature lists (SequenceExample input) are ragged tensors of shape
    ``(batch, steps, values)``, as ``tf.io.parse_sequence_example`` gives them (a dense tensor is taken as
    every step holding all its values); left out, they have no steps. The label column may be left
    out: the transformed features computed from it are then not returned. Unknown keys are ignored.

    The graph's files (vocabularies and every other asset) are saved inside the ``.keras`` file and
    the exported SavedModel, so neither needs the run directory once written. Loading a ``.keras``
    file needs ``import skewless`` first (the layer's lookup then imports it), no ``custom_objects``.

    Args:
        graph_dir: the run directory or its ``transform_graph/`` folder.
        label: the raw label column; by default the one named in the run's ``run.json``.
        graph_spec: filled by `get_config` so a model loaded from a ``.keras`` file can be rebuilt
            before its assets are restored; leave it out.

    Examples:
        After ``skewless run configs/example.yaml -o out/example``, two raw rows through the run's graph; the
        second row's occupation is missing (an empty string) and its workclass unseen:

        >>> import json
        >>> import numpy as np
        >>> from skewless.layers import TransformLayer
        >>> layer = TransformLayer("out/example")
        >>> features = layer({
        ...     "age": np.array([25, 61]), "hours_per_week": np.array([40, 60]),
        ...     "fnlwgt": np.array([150000.0, 90000.0], "float32"), "capital_gain": np.array([0.0, 0.0], "float32"),
        ...     "workclass": np.array(["Private", "Unheard-of"]), "education": np.array(["Bachelors", "HS-grad"]),
        ...     "occupation": np.array(["Sales", ""]), "native_country": np.array(["United-States", "Atlantis"])})
        >>> sorted(features)
        ['age', 'capital_gain', 'education', 'fnlwgt', 'hours_per_week', 'native_country', 'occupation', 'workclass']

        ``age`` is z-scored with the mean and standard deviation the job computed (run.json holds them):

        >>> age = json.load(open("out/example/run.json"))["features"]["age"]
        >>> np.allclose(features["age"], (np.array([25, 61]) - age["mean"]) / age["std"])
        True

        ``workclass`` is its line in the vocabulary file; an unseen value goes to the OOV bucket after it:

        >>> vocabulary = open("out/example/transform_graph/transform_fn/assets/vocab_workclass").read().split()
        >>> features["workclass"].numpy().tolist(), vocabulary.index("Private"), len(vocabulary)
        ([0, 7], 0, 7)

        In a model: ``keras.Model(raw_inputs("out/example"), head(layer(raw_inputs)))`` (see `raw_inputs`).
    """

    def __init__(self, graph_dir, label=FROM_RUN, graph_spec=None, **kwargs):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        self.graph_dir = os.fspath(graph_dir)
        self._tft_layer = None
        if graph_spec is None:
            located = find_graph_dir(self.graph_dir)
            self._load_graph(located)
            self.label = label_column(self.graph_dir, label)
            self._raw_spec = self._tft_output.raw_feature_spec()
            self._transformed_spec = self._tft_output.transformed_feature_spec()
            self._label_outputs = self._outputs_computed_from_label()
            self._label_scale = label_scale(self.graph_dir, self.label)
            self._label_classes = label_classes(self.graph_dir, self.label)
            self._reading = reading_rules(self.graph_dir)
        else:
            # Rebuilt from a config: the graph is loaded by load_assets (a .keras file) or on first use.
            self.label = None if label == FROM_RUN else label
            self._raw_spec = specs_from_json(graph_spec["raw"])
            self._transformed_spec = specs_from_json(graph_spec["transformed"])
            self._label_outputs = list(graph_spec["label_outputs"])
            self._label_scale = graph_spec.get("label_scale")  # absent from models saved before it existed
            self._label_classes = graph_spec.get("label_classes")  # likewise
            self._reading = graph_spec.get("reading")  # likewise
        # Nothing to build: the graph has no trainable state.
        self.built = True

    @property
    def raw_feature_spec(self) -> dict:
        """The graph's raw feature spec (tf.io feature specs by name), label included."""
        return dict(self._raw_spec)

    @property
    def transformed_feature_spec(self) -> dict:
        """The graph's transformed feature spec (tf.io feature specs by name), label included."""
        return dict(self._transformed_spec)

    @property
    def label_outputs(self) -> list[str]:
        """The transformed features computed from the label column (not returned without it)."""
        return list(self._label_outputs)

    @property
    def label_scale(self) -> dict | None:
        """How the run transformed its regression label (``{"transform": ..., **statistics}``, as run.json's
        label has it), which the export inverts; None when the label is not transformed so."""
        return None if self._label_scale is None else dict(self._label_scale)

    @property
    def label_classes(self) -> list[str] | None:
        """The class each label id stands for, in id order, when the run wrote the label as class ids (its
        ``label.map`` or vocabulary, as run.json's label has them); None otherwise."""
        return None if self._label_classes is None else list(self._label_classes)

    @property
    def reading(self) -> dict | None:
        """How the run read its raw values (`transform_graph.reading_rules`: NA tokens, list columns and their
        delimiter, CSV options), which an export passes on to `skewless predict`; None without a run beside the
        graph."""
        return None if self._reading is None else dict(self._reading)

    def __call__(self, inputs, *args, **kwargs):
        # Checked before Keras' __call__, which would wrap the one-line error into a multi-line one.
        self._check_inputs(inputs)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        features = self._standardize(inputs)
        return dict(self._graph()(features))

    def compute_output_spec(self, inputs):
        self._check_inputs(inputs)
        outputs = {}
        for name, spec in self._transformed_spec.items():
            if self.label not in inputs and name in self._label_outputs:
                continue
            if isinstance(spec, tf.io.VarLenFeature):
                outputs[name] = keras.KerasTensor((None, None), dtype=spec.dtype.name, sparse=True)
            elif isinstance(spec, tf.io.RaggedFeature):
                outputs[name] = keras.KerasTensor((None, None, None), dtype=spec.dtype.name, ragged=True)
            else:
                outputs[name] = keras.KerasTensor((None, *spec.shape), dtype=spec.dtype.name)
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update(
            graph_dir=self.graph_dir,
            label=self.label,
            graph_spec={
                "raw": specs_to_json(self._raw_spec),
                "transformed": specs_to_json(self._transformed_spec),
                "label_outputs": list(self._label_outputs),
                "label_scale": self._label_scale,
                "label_classes": self._label_classes,
                "reading": self._reading,
            },
        )
        return config

    def save_assets(self, dir_path):
        """Copies the whole graph (SavedModel, vocabularies, metadata) into the .keras archive."""
        self._graph()
        shutil.copytree(self._graph_root, os.path.join(dir_path, GRAPH_DIR), dirs_exist_ok=True)

    def load_assets(self, dir_path):
        # The loader deletes `dir_path` afterwards, yet the lookup tables' asset files must outlive
        # it (a loaded model can be exported again), so the layer keeps a copy of its own.
        owned = tempfile.mkdtemp(prefix="skewless-graph-")
        shutil.copytree(os.path.join(dir_path, GRAPH_DIR), owned, dirs_exist_ok=True)
        weakref.finalize(self, shutil.rmtree, owned, ignore_errors=True)
        self._load_graph(owned)

    def _load_graph(self, graph_root: str) -> None:
        self._graph_root = graph_root
        self._tft_output = tft.TFTransformOutput(graph_root)
        # tf.init_scope: loading may first happen while tracing a tf.function (fit, export); the
        # graph's tables and variables must be created eagerly, outside that trace.
        with tf.init_scope():
            self._tft_layer = self._tft_output.transform_features_layer()
        # Every file the graph reads (vocabularies, most_frequent values, a preprocessing_fn's own assets):
        # a SavedModel copies a file into its assets/ only if its Asset is tracked by the saved object,
        # otherwise the graph keeps the file's path, which breaks once the run directory moves.
        self._graph_assets = _assets_of(self._tft_layer)

    def _graph(self):
        if self._tft_layer is None:
            self._load_graph(find_graph_dir(self.graph_dir))
        return self._tft_layer

    @property
    def graph_assets(self) -> list:
        """The `tf.saved_model.Asset`s of the loaded graph: an export tracks them so it holds their files."""
        self._graph()
        return list(self._graph_assets)

    def _outputs_computed_from_label(self) -> list[str]:
        """Transformed features the graph cannot compute without the label column."""
        if self.label is None or self.label not in self._raw_spec:
            return []
        signature = {name: _placeholder_spec(spec) for name, spec in self._raw_spec.items() if name != self.label}
        traced = tf.function(lambda features: dict(self._tft_layer(features))).get_concrete_function(signature)
        return sorted(set(self._transformed_spec) - set(traced.structured_outputs))

    def _check_inputs(self, inputs) -> None:
        """Raises on a missing required feature or a wrong dtype, naming the feature."""
        if not isinstance(inputs, dict):
            raise InputError(f"TransformLayer takes a dict of raw features by name, got {type(inputs).__name__}")
        for name, spec in self._raw_spec.items():
            if name in inputs:
                _check_dtype(name, inputs[name], spec.dtype)
            elif isinstance(spec, tf.io.FixedLenFeature) and name != self.label:
                raise InputError(
                    f"raw feature {name!r} is required by the transform graph but missing from the inputs"
                    f" (got {sorted(inputs)})"
                )

    def _standardize(self, inputs) -> dict:
        """The inputs as the graph expects them: dtypes, shapes and sparse VarLen features."""
        self._check_inputs(inputs)
        features = {}
        for name, spec in self._raw_spec.items():
            value = inputs.get(name)
            if value is None:
                if name == self.label:
                    continue
                batch_size = _batch_size(next(iter(inputs.values())))
                if isinstance(spec, tf.io.RaggedFeature):
                    value = _no_steps(spec.dtype, batch_size)
                else:
                    value = _missing(spec.dtype, batch_size)
            elif isinstance(spec, tf.io.RaggedFeature):
                value = _as_feature_list(name, value, spec.dtype)
            elif isinstance(spec, tf.io.VarLenFeature):
                value = _as_sparse(value, spec.dtype)
            else:
                value = _as_dense(value, spec)
            features[name] = value
        return features


def _assets_of(trackable) -> list:
    return [item for item in tf.train.TrackableView(trackable).descendants() if isinstance(item, tf.saved_model.Asset)]


def _check_dtype(name: str, value, expected: tf.DType) -> None:
    actual = _dtype_of(value)
    if actual is None or actual == expected:
        return
    if expected == tf.string or actual == tf.string or (expected.is_integer and actual.is_floating):
        raise InputError(f"raw feature {name!r} has dtype {actual.name}; the transform graph expects {expected.name}")


def _dtype_of(value) -> tf.DType | None:
    """The TF dtype of a tensor, KerasTensor or NumPy array (NumPy text and objects: string)."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or isinstance(dtype, tf.DType):
        return dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "OUS":
        return tf.string
    return tf.as_dtype(keras.backend.standardize_dtype(dtype))


def _placeholder_spec(spec):
    if isinstance(spec, tf.io.VarLenFeature):
        return tf.SparseTensorSpec([None, None], spec.dtype)
    if isinstance(spec, tf.io.RaggedFeature):
        return tf.RaggedTensorSpec([None, None, None], spec.dtype, ragged_rank=2, row_splits_dtype=tf.int64)
    return tf.TensorSpec([None, *spec.shape], spec.dtype)


def _batch_size(value):
    if isinstance(value, tf.SparseTensor):
        return value.dense_shape[0]
    if isinstance(value, tf.RaggedTensor):
        return value.nrows()
    return tf.shape(value, out_type=tf.int64)[0]


def _missing(dtype, batch_size):
    """A VarLen feature missing from a whole batch, as tf.io.parse_example gives it: no values."""
    dense_shape = tf.stack([batch_size, tf.constant(0, tf.int64)])
    return tf.SparseTensor(tf.zeros([0, 2], tf.int64), tf.zeros([0], dtype), dense_shape)


def _no_steps(dtype, batch_size):
    """A feature list missing from a whole batch: every row has zero steps."""
    splits = tf.zeros(tf.reshape(batch_size + 1, [1]), tf.int64)
    return tf.RaggedTensor.from_nested_row_splits(tf.zeros([0], dtype), [splits, tf.zeros([1], tf.int64)])


def _as_feature_list(name: str, value, dtype):
    """A feature list as the graph takes it: ragged (batch, steps, values); a dense tensor is every step full."""
    if not isinstance(value, tf.RaggedTensor):
        value = tf.convert_to_tensor(value)
        if value.shape.rank != 3:
            raise InputError(f"raw feature {name!r} is a feature list: feed a tf.RaggedTensor of shape (batch, steps, "
                             f"values), as tf.io.parse_sequence_example gives it, not shape {value.shape}")
        value = tf.RaggedTensor.from_tensor(value, ragged_rank=2)
    elif value.ragged_rank != 2:
        raise InputError(f"raw feature {name!r} is a feature list: feed a tf.RaggedTensor of shape (batch, steps, "
                         f"values), not ragged_rank {value.ragged_rank}")
    return tf.cast(value.with_row_splits_dtype(tf.int64), dtype)


def _as_sparse(value, dtype):
    if isinstance(value, tf.SparseTensor):
        return tf.sparse.SparseTensor(value.indices, tf.cast(value.values, dtype), value.dense_shape)
    if not isinstance(value, tf.RaggedTensor):
        value = tf.convert_to_tensor(value)
        if value.shape.rank == 1:
            value = value[:, tf.newaxis]
        value = tf.RaggedTensor.from_tensor(value)
    return tf.cast(value, dtype).to_sparse()


def _as_dense(value, spec):
    value = tf.cast(tf.convert_to_tensor(value), spec.dtype)
    # A Keras input of shape (None, 1) feeds a scalar feature: the graph wants shape (None,).
    if value.shape.rank == len(spec.shape) + 2 and value.shape[-1] == 1:
        value = tf.squeeze(value, -1)
    return value
