"""Serving export: a SavedModel that takes raw data and runs the run's transform graph, then the model.

`export_serving_model` writes these signatures:

- ``serving_default``: ``examples`` (a batch of serialized raw ``tf.train.Example``) -> the model's outputs;
- ``predict_raw``: one tensor of shape ``(batch,)`` per raw feature -> the model's outputs; each argument is
  named `signature_argument_name(feature)`: the feature's name unless TensorFlow refuses its characters
  (the spec file's ``predict_raw_arguments`` maps each feature to its argument);
- ``transform_features``: ``examples`` -> the transformed features;
- ``classification`` or ``regression``, as the label says: TF Serving's Classify / Regress API (``inputs``, serialized
  ``tf.train.Example`` -> ``classes`` and ``scores`` / ``outputs``; layers/api_signatures.py).

A run of SequenceExample input (feature lists) serves serialized raw ``tf.train.SequenceExample``s,
and has no ``predict_raw``: a signature takes dense tensors, and a feature list is ragged.

None of them takes the label. A run whose regression label was written transformed (``label.transform``: log,
z_score, scale_0_1) adds, to ``serving_default`` and ``predict_raw``, an output named after the label column:
the model's one output in the label's own units (layers/label_scale.py). Optional (VarLen) features left out of an Example get the config's
default, exactly as in the batch job; `predict_raw` takes one value per row for every feature, NaN
for a missing float (`nan_as_missing`); a row missing an int or string feature goes to serving_default.
The SavedModel carries the graph's assets and needs TensorFlow only (not skewless) to load.

`transform_raw_rows` and `transform_raw_rows_exported` run the serving path on Python rows (the
skew check compares them with the batch path).
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Mapping

import keras
import numpy as np
import pyarrow as pa
import tensorflow as tf

from skewless import interrupt_request, staged_folder
from skewless.boolean_values import as_int, as_number
from skewless.config import load_config
from skewless.errors import InputError, SchemaError
from skewless.export_target import SPEC_FILE, check_export_folder, check_model_file
from skewless.layers.api_signatures import add_api_signature, set_method_names
from skewless.layers.label_scale import original_units
from skewless.layers.serving_head import ServingHead, serving_head
from skewless.layers.transform_graph import specs_from_json, specs_to_json
from skewless.layers.transform_layer import TransformLayer
from skewless.run_directory import RunDirectory
from skewless.safe_names import signature_argument_name
from skewless.schemas.row_checks import parse_text
from skewless.sequence_specs import parse_sequence_examples, split_raw_spec

EXAMPLES = "examples"


def export_serving_model(
    run_dir: str | os.PathLike, model, export_dir: str | os.PathLike, overwrite: bool = False
) -> str:
    """Writes a TF Serving SavedModel of `model` behind the run's transform graph; returns `export_dir`.

    `model` (a Keras model or the path of a ``.keras`` file) either contains a `TransformLayer` and
    takes raw features, or takes transformed features: its inputs are named after transformed
    features (any subset) and are fed by name, cast to each input's dtype, with a trailing axis
    added where an input has shape ``(None, 1)``. A model with its own TransformLayer carries its
    graph: `run_dir` is then not read. An existing `export_dir` is replaced only with `overwrite`, and only when it
    is a previous export holding just the files skewless wrote there (docs/errors.md). On a local disk the export
    is written beside it (``<export_dir>.staging``, skewless/staged_folder.py) and published whole by rename: the
    path holds the old export or the new one, never a part.

    Examples:
        After ``skewless run configs/example.yaml -o out/example``, a model of the transformed features (as
        `make_dataset` reads them) exported behind the graph serves raw ``tf.train.Example`` rows:

        >>> import keras
        >>> import tensorflow as tf
        >>> from skewless.layers import (TransformLayer, export_serving_model, model_inputs, read_spec_file,
        ...                              serialize_raw_examples)
        >>> inputs, encoded = model_inputs("out/example")
        >>> model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(encoded))
        >>> export_serving_model("out/example", model, "export/example/1")
        'export/example/1'
        >>> served = tf.saved_model.load("export/example/1")
        >>> sorted(served.signatures)
        ['classification', 'predict_raw', 'serving_default', 'transform_features']
        >>> row = {"age": 39, "workclass": "Private", "education": "Bachelors", "hours_per_week": 40,
        ...        "fnlwgt": 77516.0, "native_country": "United-States", "capital_gain": 2174.0}
        >>> examples = tf.constant(serialize_raw_examples([row], read_spec_file("export/example/1")["raw"]))
        >>> scores = served.signatures["serving_default"](examples=examples)["output_0"].numpy()

        The same as the model on the graph's output (occupation is absent: its default applies in both):

        >>> features = TransformLayer("out/example")({name: tf.constant([value]) for name, value in row.items()})
        >>> bool(abs(scores - model.predict(features, verbose=0)).max() < 1e-6)
        True
    """
    export_dir = os.fspath(export_dir)
    local = "://" not in export_dir
    if local:
        staged_folder.check_not_input(export_dir, folders=[os.fspath(run_dir)] if run_dir is not None else [],
                                      files=[os.fspath(model)] if isinstance(model, (str, os.PathLike)) else [])
    replacing = _check_export_folder(export_dir, overwrite)  # before anything is loaded or written
    if isinstance(model, (str, os.PathLike)):
        model = _load_model(os.fspath(model))
    inputs = _named_inputs(model)
    transform = _find_transform_layer(model)
    graph = transform if transform is not None else TransformLayer(run_dir)
    serving_spec = {name: spec for name, spec in graph.raw_feature_spec.items() if name != graph.label}

    if transform is not None:
        kind, available, model_features = "raw feature", serving_spec, lambda raw: raw
    else:
        kind, available, model_features = "transformed feature", _served_transformed_features(graph), graph
    _check_fed(inputs, available, kind, graph)
    never_negative = _never_negative_ids(run_dir, graph) if transform is None else set()
    head = serving_head(model, never_negative=[tensor for name, tensor in inputs.items() if name in never_negative])
    in_label_units = _label_units(model, graph)

    def predict(raw):
        return in_label_units(_named_outputs(head(_feed(model, model_features(raw)))))

    def parse(examples):
        return parse_raw_examples(examples, serving_spec)

    def serve(examples):
        return predict(parse(examples))

    examples_spec = [tf.TensorSpec([None], tf.string, name=EXAMPLES)]
    raw_spec = [
        {name: tf.TensorSpec([None, *_shape(spec)], spec.dtype, name=signature_argument_name(name))
         for name, spec in serving_spec.items()}
    ]
    archive = keras.export.ExportArchive()
    archive.track(model)
    if transform is None:
        archive.track(graph)
    # Saved objects are those of the archive's trackable (Keras collects only variables and tables
    # there): tracked on it, every asset of the graph is copied into assets/ and read from there.
    archive._tf_trackable.graph_assets = graph.graph_assets
    archive.add_endpoint("serving_default", serve, examples_spec)
    if not split_raw_spec(serving_spec)[1]:
        archive.add_endpoint("predict_raw", lambda raw: predict(nan_as_missing(raw, serving_spec)), raw_spec)
    archive.add_endpoint("transform_features", lambda examples: graph(parse(examples)), examples_spec)
    api = add_api_signature(archive, graph, model, serve)
    _save_each_weight_once(archive, head)
    if not local:  # an object store has no rename to publish by: the old export goes, then the new is written
        if replacing:
            tf.io.gfile.rmtree(export_dir)
        _write_export(archive, export_dir, graph, serving_spec, api)
        return export_dir
    claimed = staged_folder.claim(export_dir)
    try:
        staged = os.path.join(claimed, staged_folder.STAGED)
        _write_export(archive, staged, graph, serving_spec, api)
        interrupt_request.stop_if_requested()  # a Ctrl-C a C extension swallowed publishes nothing either
        # checked again at publish time: someone may have put files in the old export meanwhile
        staged_folder.publish(staged, export_dir, claimed, lambda path: _check_export_folder(path, overwrite))
    finally:
        staged_folder.release(claimed)
    return export_dir


def _never_negative_ids(run_dir, graph: TransformLayer) -> set[str]:
    """The transformed features whose values are never negative ids, by the run's config (`Transform.never_negative`:
    a vocabulary with OOV buckets, a hash), scalar ones only (a padded list holds its padding). The schema cannot
    tell: a vocabulary without OOV buckets has [0, buckets) recorded though an unseen value is its `default_value`,
    -1 unless set (skewless/transforms/categorical.py). Empty without the run's config, and for a config with a
    `preprocessing_fn` hook (its code may replace any output)."""
    config_file = RunDirectory(run_dir).config_file
    if not tf.io.gfile.exists(config_file):
        return set()
    config = load_config(config_file)
    if config.preprocessing_fn is not None:
        return set()
    never_negative = set()
    for name, feature in config.features.items():
        if feature.transform_kind.never_negative(feature):
            never_negative.update(output for output in feature.outputs(name)
                                  if _is_scalar(graph.transformed_feature_spec.get(output)))
    return never_negative


def _is_scalar(spec) -> bool:
    return isinstance(spec, tf.io.FixedLenFeature) and not list(spec.shape)


def _check_export_folder(export_dir: str, overwrite: bool) -> bool:
    """`check_export_folder` through TensorFlow's filesystems (gs://)."""
    return check_export_folder(export_dir, overwrite, tf.io.gfile.exists, tf.io.gfile.listdir, tf.io.gfile.walk,
                               tf.io.gfile.isdir, lambda path: tf.io.gfile.GFile(path, "rb").read())


def _write_export(archive, export_dir: str, graph: TransformLayer, serving_spec: Mapping, api: dict | None) -> None:
    archive.write_out(export_dir, verbose=False)
    if api is not None and "method" in api:
        set_method_names(export_dir, {api["name"]: api["method"]})
    _write_spec_file(export_dir, graph, serving_spec, api)


def _save_each_weight_once(archive, head: ServingHead) -> None:
    """The archive saves the variables `head` reads, each once; a table it froze is a constant of the graph only.

    `ExportArchive.track(model)` lists the model's Keras variables for saving, and `write_out` saves besides
    them the TF variables its endpoints capture: two objects holding each weight, saved twice, and the
    tables `serving_head` froze into the graph saved a second time as well (issue 32). `track` is kept for
    what else it finds (the model's lookup tables); the lists it filled get the head's TF variables, the
    same objects the endpoints capture.
    """
    trackable = archive._tf_trackable
    trackable.variables = list(head.variables)
    trackable.trainable_variables = [variable for variable in head.variables if variable.trainable]
    trackable.non_trainable_variables = [variable for variable in head.variables if not variable.trainable]


def nan_as_missing(raw: Mapping, raw_feature_spec: Mapping) -> dict:
    """predict_raw's missing value: NaN in an optional float feature is missing, as if absent from an Example.

    Dense tensors have no other way to say "missing"; optional int and string features have none at
    all there (a row with one missing goes to serving_default as a tf.Example).
    """
    features = dict(raw)
    for name, spec in raw_feature_spec.items():
        if name in raw and isinstance(spec, tf.io.VarLenFeature) and spec.dtype.is_floating:
            value = tf.convert_to_tensor(raw[name])
            value = tf.reshape(value, [tf.shape(value)[0], -1])
            present = tf.logical_not(tf.math.is_nan(value))
            features[name] = tf.SparseTensor(tf.where(present), tf.boolean_mask(value, present),
                                             tf.shape(value, out_type=tf.int64))
    return features


def transform_raw_rows_dense(graph_dir: str | os.PathLike | TransformLayer, rows: Iterable[Mapping]) -> dict:
    """The predict_raw path in Python: one dense value per row and raw feature, NaN for a missing float.

    Raises InputError for a row missing an int or string feature: predict_raw cannot express it.
    """
    layer = graph_dir if isinstance(graph_dir, TransformLayer) else TransformLayer(graph_dir)
    rows = list(rows)
    spec = {name: spec for name, spec in layer.raw_feature_spec.items() if name != layer.label}
    features = {}
    for name, feature in spec.items():
        values = [row.get(name) for row in rows]
        if feature.dtype.is_floating:
            values = [np.nan if value is None else value for value in values]
        elif any(value is None for value in values):
            raise InputError(f"raw feature {name!r}: predict_raw has no missing {feature.dtype.name} value; "
                             "send the row as a tf.Example to serving_default")
        features[name] = tf.constant(values, feature.dtype)
    return _to_numpy(layer(nan_as_missing(features, spec)))


def read_spec_file(export_dir: str | os.PathLike) -> dict:
    """What an export serves: ``{"raw": raw spec without the label, "transformed": ..., "label": column,
    "predict_raw_arguments": {raw feature: its predict_raw argument}, "label_scale": how a regression label
    was transformed or None, "label_output": the output serving it in its own units or None, "reading": how the
    run read raw values (`TransformLayer.reading`) or None, "api_signature": TF Serving's classification or
    regression signature ``{"name", "method", "classes"}``, ``{"left_out": why}`` or None}``.

    Examples:
        An export of a run of configs/example.yaml (see `export_serving_model`):

        >>> import keras
        >>> from skewless.layers import export_serving_model, model_inputs, read_spec_file
        >>> inputs, encoded = model_inputs("out/example")
        >>> _ = export_serving_model("out/example", keras.Model(inputs, keras.layers.Dense(1)(encoded)), "export/1")
        >>> spec = read_spec_file("export/1")
        >>> spec["label"], sorted(spec["raw"])[:3], spec["raw"]["age"]
        ('label', ['age', 'capital_gain', 'education'], FixedLenFeature(shape=[], dtype=tf.int64, default_value=None))
        >>> spec["raw"]["occupation"]   # optional: it has a default
        VarLenFeature(dtype=tf.string)
    """
    path = os.path.join(os.fspath(export_dir), SPEC_FILE)
    if not tf.io.gfile.exists(path):
        raise InputError(f"{path}: missing; {export_dir} was not written by skewless export")
    data = json.loads(tf.io.gfile.GFile(path).read())
    arguments = data.get("predict_raw_arguments") or {name: name for name in data["raw"]}  # older exports
    return {"raw": specs_from_json(data["raw"]), "transformed": specs_from_json(data["transformed"]),
            "label": data["label"], "predict_raw_arguments": arguments,
            "label_scale": data.get("label_scale"), "label_output": data.get("label_output"),
            "reading": data.get("reading"), "api_signature": data.get("api_signature")}


def serialize_raw_examples(rows: Iterable[Mapping], raw_feature_spec: Mapping) -> list[bytes]:
    """Raw rows (dicts by feature name) as serialized ``tf.train.Example``, typed by the raw spec.

    A value of None, or a feature left out of a row, is absent from its Example. Features that are
    not in the spec are left out. When the spec has feature lists (SequenceExample input), the rows
    become ``tf.train.SequenceExample``s: a feature list's value is a list of steps, each a list of
    values (or one value), and the other features are the context.

    Examples:
        >>> import tensorflow as tf
        >>> from skewless.layers import serialize_raw_examples
        >>> spec = {"age": tf.io.FixedLenFeature([], tf.int64), "occupation": tf.io.VarLenFeature(tf.string)}
        >>> records = serialize_raw_examples([{"age": 39, "occupation": "Sales"}, {"age": 50, "occupation": None}],
        ...                                  spec)
        >>> parsed = tf.io.parse_example(records, spec)
        >>> parsed["age"].numpy().tolist(), tf.sparse.to_dense(parsed["occupation"]).numpy().tolist()
        ([39, 50], [[b'Sales'], [b'']])
        >>> "occupation" in tf.train.Example.FromString(records[1]).features.feature   # absent, not empty
        False
    """
    context, feature_lists = split_raw_spec(dict(raw_feature_spec))
    serialized = []
    for index, row in enumerate(rows):
        if feature_lists:
            example = tf.train.SequenceExample()
            features = example.context.feature
        else:
            example = tf.train.Example()
            features = example.features.feature
        for name, spec in context.items():
            if row.get(name) is not None:
                _fill(features[name], row[name], spec.dtype, f"row {index}: raw feature {name!r}")
        for name, spec in feature_lists.items():
            if row.get(name) is None:
                continue
            steps = example.feature_lists.feature_list[name].feature
            for step in row[name]:
                _fill(steps.add(), step, spec.dtype, f"row {index}: a step of raw feature list {name!r}")
        serialized.append(example.SerializeToString())
    return serialized


def parse_raw_examples(serialized, raw_feature_spec: Mapping) -> dict:
    """Serialized raw records (`serialize_raw_examples`) -> raw features as `TransformLayer` takes them.

    Examples are parsed as SequenceExamples with their features as the context: the same tensors as
    ``tf.io.parse_example`` at the same cost (measured), but a record that is not an Example fails with an
    InvalidArgumentError naming its batch position, where ``parse_example``'s error holds the record's bytes
    (undecodable from Python when they are not UTF-8).
    """
    context, feature_lists = split_raw_spec(dict(raw_feature_spec))
    return parse_sequence_examples(serialized, context, feature_lists)


def _fill(feature: tf.train.Feature, value, dtype: tf.DType, what: str) -> None:
    """One tf.train.Feature holding `value` (a value or a list of them) as `dtype`; a boolean is 1 or 0 (in a
    numeric feature, so is its word, as the job reads text; in a text feature, the text "1" or "0", as the job reads
    a JSON boolean in a string column)."""
    values = np.asarray(value, dtype=object).reshape(-1).tolist()
    try:
        if dtype == tf.string:
            feature.bytes_list.value.extend(v if isinstance(v, bytes) else str(as_int(v)).encode() for v in values)
        elif dtype.is_floating:
            feature.float_list.value.extend(float(as_number(_number_text(v, "float"))) for v in values)
        else:
            feature.int64_list.value.extend(_exact_int(as_number(_number_text(v, "int"))) for v in values)
    except (TypeError, ValueError):
        raise InputError(f"{what} = {value!r} is not a {dtype.name}") from None


def _number_text(value, kind: str):
    """`value`, but text that the job's number grammar refuses (schemas/row_checks.py: ASCII digits, no `_`
    separators, which Python's `float` and `int` read) raises ValueError, as the job quarantines it."""
    if isinstance(value, (str, bytes)) and parse_text(pa.array([value], pa.binary() if isinstance(value, bytes)
                                                                 else pa.string()), kind).invalid[0]:
        raise ValueError(value)
    return value


def transform_raw_rows(graph_dir: str | os.PathLike | TransformLayer, rows: Iterable[Mapping]) -> dict[str, np.ndarray]:
    """The serving path in Python: raw rows (dicts) -> transformed features by the graph (NumPy arrays).

    The rows go through ``tf.train.Example`` and `parse_raw_examples` as a serving request does;
    the label column is transformed too when every row has it. `graph_dir` may also be a
    `TransformLayer` (reused across calls: loading a graph takes a while).
    """
    layer = graph_dir if isinstance(graph_dir, TransformLayer) else TransformLayer(graph_dir)
    rows = list(rows)
    spec = dict(layer.raw_feature_spec)
    if layer.label in spec and not all(row.get(layer.label) is not None for row in rows):
        del spec[layer.label]
    features = parse_raw_examples(tf.constant(serialize_raw_examples(rows, spec), tf.string), spec)
    return _to_numpy(layer(features))


def transform_raw_rows_exported(export_dir: str | os.PathLike, rows: Iterable[Mapping]) -> dict[str, np.ndarray]:
    """Raw rows (dicts) -> transformed features by an export's ``transform_features`` signature."""
    spec = read_spec_file(export_dir)["raw"]
    loaded = tf.saved_model.load(os.fspath(export_dir))
    examples = tf.constant(serialize_raw_examples(rows, spec), tf.string)
    return _to_numpy(loaded.signatures["transform_features"](examples=examples))


def _exact_int(value) -> int:
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise ValueError(value)
    return int(value)


def _to_numpy(features: Mapping) -> dict[str, np.ndarray]:
    """Var-len features zero-padded to the longest row (feature lists to the most steps and values)."""
    return {name: padded(value).numpy() for name, value in features.items()}


def padded(value):
    """A sparse or ragged tensor as a dense one, zero-padded: how the skew check compares var-len features."""
    if isinstance(value, tf.SparseTensor):
        return tf.sparse.to_dense(value)
    if isinstance(value, tf.RaggedTensor):
        return value.to_tensor()
    return value


def _load_model(path: str):
    check_model_file(path)
    try:
        return keras.models.load_model(path)
    except (OSError, TypeError, ValueError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{path}: cannot load the Keras model: {first_line}") from None


def _find_transform_layer(model) -> TransformLayer | None:
    """The model's TransformLayer, searching nested models too."""
    found = [layer for layer in _all_layers(model) if isinstance(layer, TransformLayer)]
    if len(found) > 1:
        raise SchemaError(f"model {model.name!r} has {len(found)} TransformLayers; export supports one")
    return found[0] if found else None


def _all_layers(model):
    for layer in getattr(model, "layers", []):
        yield layer
        yield from _all_layers(layer)


def _named_inputs(model) -> dict[str, keras.KerasTensor]:
    """The model's inputs by the names they are fed by: dict keys, else the inputs' own names."""
    try:
        structure = model.input
    except (AttributeError, ValueError):
        raise SchemaError(f"model {model.name!r} has no defined inputs; build it with keras.Input") from None
    if isinstance(structure, dict):
        return dict(structure)
    return {tensor.name: tensor for tensor in keras.tree.flatten(structure)}


def _served_transformed_features(graph: TransformLayer) -> dict:
    """The transformed features computable at serving time (those computed from the label are not)."""
    return {name: spec for name, spec in graph.transformed_feature_spec.items() if name not in graph.label_outputs}


def _check_fed(inputs: Mapping, available: Mapping, kind: str, graph: TransformLayer) -> None:
    for name in inputs:
        if name in available:
            continue
        if name in graph.label_outputs or name == graph.label:
            raise SchemaError(f"model input {name!r} is computed from the label column; serving has no label")
        raise SchemaError(
            f"model input {name!r} is not a {kind} of the run (those are: {', '.join(sorted(available))})"
        )


def _feed(model, tensors: Mapping):
    """The model's input structure, each input fed its tensor by name (see `_named_inputs`)."""
    structure = model.input
    if isinstance(structure, dict):
        return {name: _fit(tensors[name], expected) for name, expected in structure.items()}
    return keras.tree.map_structure(lambda expected: _fit(tensors[expected.name], expected), structure)


def _fit(value, expected: keras.KerasTensor):
    """`value` fitted to a model input: its dtype, sparse or dense, and its trailing axis of 1."""
    if expected.sparse and not isinstance(value, tf.SparseTensor):
        value = tf.RaggedTensor.from_tensor(value if value.shape.rank > 1 else value[:, tf.newaxis]).to_sparse()
    elif not expected.sparse and isinstance(value, tf.SparseTensor):
        value = tf.sparse.to_dense(value)
    if isinstance(value, tf.SparseTensor):
        return tf.SparseTensor(value.indices, tf.cast(value.values, expected.dtype), value.dense_shape)
    if value.dtype != tf.string:
        value = tf.cast(value, expected.dtype)
    if len(expected.shape) == value.shape.rank + 1 and expected.shape[-1] == 1:
        value = tf.expand_dims(value, -1)
    return value


def _named_outputs(outputs):
    """Model outputs as a signature's dict (a single tensor is ``output_0``, as Keras exports it)."""
    if isinstance(outputs, Mapping):
        return dict(outputs)
    return {f"output_{index}": tensor for index, tensor in enumerate(tf.nest.flatten(outputs))}


def _label_units(model, graph: TransformLayer):
    """What adds the prediction in the label's own units to the model's outputs, for a regression label the
    run wrote transformed (`TransformLayer.label_scale`): an output named after the label column (as
    `signature_argument_name` spells it) beside the model's one output; outputs unchanged otherwise."""
    scale = graph.label_scale
    if scale is None:
        return lambda outputs: outputs
    name = signature_argument_name(graph.label)
    structure = model.output
    count = len(keras.tree.flatten(structure))
    if count != 1:
        raise SchemaError(f"label {graph.label!r} was written {scale['transform']}-transformed: the export serves "
                          f"the model's one output in the label's units, and model {model.name!r} has {count}")
    if isinstance(structure, Mapping) and name in structure:
        raise SchemaError(f"model output {name!r}: the export's output of that name is the label in its own units; "
                          "rename the model's output")

    def in_label_units(outputs: dict) -> dict:
        (value,) = outputs.values()
        return {**outputs, name: original_units(value, scale)}

    return in_label_units


def _shape(spec) -> list:
    return list(spec.shape) if isinstance(spec, tf.io.FixedLenFeature) else []


def _write_spec_file(export_dir: str, graph: TransformLayer, serving_spec: Mapping, api: dict | None) -> None:
    path = os.path.join(export_dir, SPEC_FILE)
    tf.io.gfile.makedirs(os.path.dirname(path))
    data = {
        "raw": specs_to_json(serving_spec),
        "transformed": specs_to_json(_served_transformed_features(graph)),
        "label": graph.label,
        # a regression label written transformed: how, and the output serving it in its own units
        "label_scale": graph.label_scale,
        "label_output": signature_argument_name(graph.label) if graph.label_scale else None,
        "predict_raw_arguments": {name: signature_argument_name(name) for name in serving_spec},
        # how the run read raw values, so that `skewless predict` reads new data as the job and `apply` do
        "reading": graph.reading,
        # TF Serving's Classify / Regress API signature (layers/api_signatures.py), or why there is none
        "api_signature": api,
        # every file of the export, this one included: --overwrite replaces nothing else (`check_export_folder`)
        "files": sorted({SPEC_FILE} | {os.path.relpath(os.path.join(folder, name), export_dir)
                                       for folder, _, names in tf.io.gfile.walk(export_dir) for name in names}),
    }
    with tf.io.gfile.GFile(path, "w") as handle:
        handle.write(json.dumps(data, indent=2, sort_keys=True))
