"""The job infers tf.Transform's schemas of the transformed features without tracing the preprocessing_fn for
them (pipelines/analyze/deferred_schema.py): its graph, metadata and data must be those of a job that traced it
for both, for every transform family, and for tf.Transform's own overrides and annotations."""

import contextlib

import apache_beam as beam
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
from example_job import PHASE_CONFIGS, census_config_or_skip
from family_rows import every_family_config
from run_output import files_of, forget_kept_graphs
from tensorflow_transform import impl_helper, schema_inference
from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

from skewless.pipelines import run
from skewless.pipelines.analyze import deferred_schema


def _with_a_hook(folder) -> dict:
    """A `preprocessing_fn` hook's output beside every family's (its code, not the config, makes the graph)."""
    return {**every_family_config(folder), "preprocessing_fn": "test_reuse_key_completeness:doubled_n"}


@pytest.fixture
def traces(monkeypatch):
    """tf.Transform's traces of the preprocessing_fn for a schema: False for the construction-time one, True
    for the final graph's."""
    traced = []
    original = schema_inference.get_traced_metadata_fn

    def counted(*args, **kwargs):
        traced.append(kwargs.get("evaluate_schema_overrides"))
        return original(*args, **kwargs)

    monkeypatch.setattr(schema_inference, "get_traced_metadata_fn", counted)
    return traced


@pytest.mark.parametrize("name", [*PHASE_CONFIGS, "every_family", "with_a_hook", "census"])
def test_the_schemas_inferred_without_a_trace_change_no_output(tmp_path, monkeypatch, traces, name):
    make = {**PHASE_CONFIGS, "every_family": every_family_config, "with_a_hook": _with_a_hook,
            "census": census_config_or_skip}[name]
    config = make(tmp_path)  # one folder for both: the graph names its own path
    skipped = files_of(run(config).output_dir)
    assert traces == []
    monkeypatch.setattr(deferred_schema, "skipped", contextlib.nullcontext)
    # a fresh process's rerun: the same config, data and folder would otherwise get the kept transform graph
    forget_kept_graphs()
    traced = files_of(run(config, overwrite=True).output_dir)
    assert traces == [False, True]
    assert any(name.startswith("transform_graph/transformed_metadata") for name in skipped)
    assert skipped.keys() == traced.keys()
    assert [name for name in skipped if skipped[name] != traced[name]] == []


# tf.Transform's own schema overrides and annotations, beyond what the configs' transforms use
def _no_overrides(inputs):
    return {"z": tft.scale_to_z_score(inputs["x"]), "s": inputs["s"]}


def _vocabulary_without_oov(inputs):
    return {"id": tft.compute_and_apply_vocabulary(inputs["s"], default_value=-7)}


def _buckets_and_sparse(inputs):
    ids = tft.compute_and_apply_vocabulary(inputs["s"], num_oov_buckets=2)
    sparse = tf.sparse.from_dense(tf.reshape(ids, [-1, 1]))
    tft.experimental.annotate_sparse_output_shape(sparse, tf.constant([3], tf.int64))
    return {"b": tft.bucketize(inputs["x"], 3), "per_key": tft.bucketize_per_key(inputs["x"], inputs["s"], 2),
            "sparse": sparse}


def _annotated(inputs):
    """Annotations are collected and evaluated; the schema holds them where tf.Transform's wheel has its
    annotations proto (common.IS_ANNOTATIONS_PB_AVAILABLE; PyPI's 1.21 has not)."""
    x = tft.scale_to_z_score(inputs["x"])
    proto = tf.constant([b"\x08\x01"])[0]
    schema_inference.annotate("type.googleapis.com/tensorflow.BoolValue", proto, tensor=x)
    schema_inference.annotate("type.googleapis.com/tensorflow.BoolValue", proto)  # a global one
    return {"x": x, "id": tft.compute_and_apply_vocabulary(inputs["s"], top_k=2)}


def _range_from_the_inputs(inputs):
    """A range that depends on the rows themselves: tf.Transform's own trace evaluates it on a dummy batch."""
    ids = tft.compute_and_apply_vocabulary(inputs["s"])
    schema_inference.set_tensor_schema_override(ids, tf.constant(0, tf.int64), tf.size(inputs["s"], tf.int64))
    return {"id": ids}


def _schema(preprocessing_fn, folder) -> str:
    rng = np.random.default_rng(7)
    rows = [{"x": float(x), "s": s} for x, s in zip(rng.normal(size=60), rng.choice(["a", "b", "c", "d"], 60))]
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(
        {"x": tf.io.FixedLenFeature([], tf.float32), "s": tf.io.FixedLenFeature([], tf.string)}))
    with beam.Pipeline() as pipeline, tft_beam.Context(temp_dir=str(folder / "tmp")):
        transform_fn = (pipeline | beam.Create(rows), metadata) | tft_beam.AnalyzeDataset(preprocessing_fn)
        _ = transform_fn | tft_beam.WriteTransformFn(str(folder / "graph"))
    return (folder / "graph" / "transformed_metadata" / "schema.pbtxt").read_text()


@pytest.mark.parametrize("preprocessing_fn", [_no_overrides, _vocabulary_without_oov, _buckets_and_sparse,
                                              _annotated, _range_from_the_inputs])
def test_tf_transforms_overrides_come_out_as_its_own_trace_infers_them(tmp_path, monkeypatch, preprocessing_fn):
    final = []
    original = impl_helper._trace_and_get_metadata
    monkeypatch.setattr(impl_helper, "_trace_and_get_metadata", lambda *a, **k: final.append(1) or original(*a, **k))
    traced = _schema(preprocessing_fn, tmp_path / "traced")
    assert final == [1]
    with deferred_schema.skipped():
        inferred = _schema(preprocessing_fn, tmp_path / "inferred")
    # tf.Transform's trace runs again only where a range depends on the inputs
    assert final == [1, 1] if preprocessing_fn is _range_from_the_inputs else final == [1]
    overridden = "int_domain" in traced or "annotation" in traced or "sparse" in traced
    assert overridden == (preprocessing_fn is not _no_overrides)
    assert inferred == traced
