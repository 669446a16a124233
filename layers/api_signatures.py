"""TF Serving's Classify and Regress APIs: the export's ``classification`` or ``regression`` signature.

TF Serving answers a ClassificationRequest (RegressionRequest) through the signature it names, whose
``method_name`` must be ``tensorflow/serving/classify`` (``/regress``), taking one tensor ``inputs`` of serialized
``tf.train.Example`` and returning ``classes`` (string) and ``scores`` (float32), both ``[batch, classes]``, or
``outputs`` (float32, ``[batch]``). The label says which the export writes:

- classification: a label the run wrote as class ids (``label.map``, ``label.transform: vocabulary``; ``classes``
  are then the map's keys or the vocabulary's entries by id) or an int label (``classes`` are the ids' text);
  the model's one output is the scores, ``[batch, classes]``, or with one column the probability of class 1
  (scores ``[1 - p, p]``, as a sigmoid gives);
- regression: a float label, or one written transformed (``label.transform``: z_score, log, scale_0_1; its
  ``outputs`` are then in the label's own units, as serving_default's output named after the label).

A model whose output does not fit (several outputs, or a width other than the label's class count), or a run
of feature lists (SequenceExample input, which a tf.Example cannot carry), gets neither; the spec file says why (``api_signature``). Keras' export writes every signature as
``tensorflow/serving/predict``: `set_method_names` sets the API's name in ``saved_model.pb`` afterwards.
"""

from __future__ import annotations

import os
from typing import Callable, Mapping

import keras
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

# the SavedModel's fingerprint.pb digests saved_model.pb; rewritten after the method names change (no public API)
from tensorflow.python.saved_model import fingerprinting_utils

from skewless.layers.transform_layer import TransformLayer
from skewless.safe_names import signature_argument_name
from skewless.sequence_specs import split_raw_spec

CLASSIFICATION = "classification"
REGRESSION = "regression"
# signature_constants.CLASSIFY_METHOD_NAME, REGRESS_METHOD_NAME; their input, CLASSIFY_INPUTS = REGRESS_INPUTS
METHODS = {CLASSIFICATION: "tensorflow/serving/classify", REGRESSION: "tensorflow/serving/regress"}
INPUTS = "inputs"


def label_task(graph: TransformLayer) -> str | None:
    """`CLASSIFICATION` or `REGRESSION` as the graph's label says (see the module), None without a label."""
    if graph.label is None or graph.label not in graph.raw_feature_spec:
        return None
    if graph.label_scale is not None:
        return REGRESSION
    if graph.label_classes is not None:
        return CLASSIFICATION
    dtype = graph.raw_feature_spec[graph.label].dtype
    if dtype.is_floating:
        return REGRESSION
    return CLASSIFICATION if dtype.is_integer else None


def api_signature(graph: TransformLayer, model) -> tuple[dict | None, Callable | None]:
    """(what the spec file says of it, the function of the served outputs giving the signature's outputs).

    The first is ``{"name", "method", "classes"}`` for a signature, ``{"left_out": why}`` for a model that does
    not fit, or None (no label); the second is None unless there is a signature. The served outputs are those
    serving_default returns (the model's, with the label in its own units for a transformed label)."""
    task = label_task(graph)
    if task is None:
        return None, None
    if split_raw_spec(graph.raw_feature_spec)[1]:
        return {"left_out": f"TF Serving's {task} API sends tf.Example rows, which hold no feature lists"}, None
    outputs = keras.tree.flatten(model.output)
    if len(outputs) != 1:
        return {"left_out": f"the {task} signature serves a model's one output; the model has {len(outputs)}"}, None
    shape = tuple(outputs[0].shape[1:])
    columns = 1 if shape in ((), (1,)) else (shape[0] if len(shape) == 1 else None)
    if task == REGRESSION:
        if columns != 1:
            return {"left_out": f"regression serves one value per row; the model's output has shape {shape}"}, None
        name = signature_argument_name(graph.label) if graph.label_scale is not None else None
        return {"name": REGRESSION, "method": METHODS[REGRESSION], "classes": None}, _regress(name)
    classes = graph.label_classes
    count = len(classes) if classes is not None else (2 if columns == 1 else columns)
    if columns is None or (columns != count and not (columns == 1 and count == 2)):
        return {"left_out": f"the label has {count} classes; the model's output of shape {shape} is not their "
                            f"scores (one column per class, or one for a binary label's class 1)"}, None
    classes = classes if classes is not None else [str(i) for i in range(count)]
    return {"name": CLASSIFICATION, "method": METHODS[CLASSIFICATION], "classes": classes}, _classify(classes)


def add_api_signature(archive, graph: TransformLayer, model, serve: Callable) -> dict | None:
    """Adds the label's API signature to `archive` (a Keras ExportArchive), its outputs computed from
    `serve`'s (serialized Examples -> serving_default's outputs); returns what the spec file says of it
    (`api_signature`). `set_method_names` must follow the archive's `write_out`."""
    api, outputs = api_signature(graph, model)
    if outputs is not None:
        archive.add_endpoint(api["name"], lambda inputs: outputs(serve(inputs)),
                             [tf.TensorSpec([None], tf.string, name=INPUTS)])
    return api


def set_method_names(export_dir: str | os.PathLike, methods: Mapping[str, str]) -> None:
    """Sets the ``method_name`` of the named signatures in the SavedModel at `export_dir` (and its fingerprint)."""
    path = os.path.join(os.fspath(export_dir), "saved_model.pb")
    saved = saved_model_pb2.SavedModel()
    with tf.io.gfile.GFile(path, "rb") as handle:
        saved.ParseFromString(handle.read())
    for meta_graph in saved.meta_graphs:
        for name, method in methods.items():
            meta_graph.signature_def[name].method_name = method
    with tf.io.gfile.GFile(path, "wb") as handle:
        handle.write(saved.SerializeToString())
    fingerprinting_utils.write_fingerprint(os.fspath(export_dir))


def _classify(classes: list[str]) -> Callable:
    def outputs(served: dict) -> dict:
        (value,) = served.values()
        scores = tf.cast(value, tf.float32)
        if len(classes) == 2 and (scores.shape.rank == 1 or scores.shape[-1] == 1):
            probability = tf.reshape(scores, [-1, 1])
            scores = tf.concat([1.0 - probability, probability], axis=1)
        names = tf.tile(tf.constant([classes], tf.string), [tf.shape(scores)[0], 1])
        return {"classes": names, "scores": scores}

    return outputs


def _regress(label_output: str | None) -> Callable:
    """`label_output`: the served output in the label's units (a transformed label), else the model's one."""
    def outputs(served: dict) -> dict:
        value = served[label_output] if label_output is not None else next(iter(served.values()))
        return {"outputs": tf.reshape(tf.cast(value, tf.float32), [-1])}

    return outputs
