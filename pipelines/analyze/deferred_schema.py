"""tf.Transform's schema of the transformed features at pipeline construction, skipped: the job writes the other one.

`AnalyzeDataset.expand` traces the `preprocessing_fn` once more while the pipeline is built, only to infer the
transformed features' schema without analyzer results (`schema_inference.get_traced_metadata_fn` with
`evaluate_schema_overrides=False`) for the `dataset_metadata` of the metadata it returns. The job never reads
that schema: `WriteTransformFn` writes the deferred metadata, which tf.Transform infers from the final
SavedModel's own trace (`impl_helper`, `evaluate_schema_overrides=True`), and nothing else of the job takes the
analysis's metadata. That extra trace cost ~0.5 CPU s of every run, whatever its rows. While a job runs, the
construction-time call returns a marker and the schema inferred from it is empty; the final trace's call runs as
shipped. transform_graph/ holds the same bytes (tests/pipelines/test_deferred_schema.py).
"""

from __future__ import annotations

from tensorflow_metadata.proto.v0 import schema_pb2
from tensorflow_transform import schema_inference

from skewless.pipelines.runner.shared_patch import SharedPatch

_SKIPPED = object()  # stands for the metadata function the construction-time schema would be inferred from


def _get_traced_metadata_fn(*args, **kwargs):
    if kwargs.get("evaluate_schema_overrides") is False:
        return _SKIPPED
    return _PATCH.original(schema_inference, "get_traced_metadata_fn")(*args, **kwargs)


def _infer_feature_schema_v2(features, concrete_metadata_fn, *args, **kwargs):
    if concrete_metadata_fn is _SKIPPED:
        return schema_pb2.Schema()
    return _PATCH.original(schema_inference, "infer_feature_schema_v2")(features, concrete_metadata_fn, *args,
                                                                        **kwargs)


_PATCH = SharedPatch([(schema_inference, "get_traced_metadata_fn", _get_traced_metadata_fn),
                      (schema_inference, "infer_feature_schema_v2", _infer_feature_schema_v2)])


def skipped():
    """tf.Transform's construction-time schema is not inferred for the pipelines built while the block runs."""
    return _PATCH.installed()
