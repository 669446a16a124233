"""The job skips tf.Transform's construction-time schema of the transformed features (pipelines/analyze/
deferred_schema.py): its graph, metadata and data must be those of a job that inferred it."""

import contextlib

from example_job import example_config
from run_output import files_of, forget_kept_graphs


def test_the_skipped_schema_changes_no_output(tmp_path, monkeypatch):
    from skewless.pipelines import run
    from skewless.pipelines.analyze import deferred_schema
    from tensorflow_transform import schema_inference

    traced = []
    original = schema_inference.get_traced_metadata_fn

    def counted(*args, **kwargs):
        traced.append(kwargs.get("evaluate_schema_overrides"))
        return original(*args, **kwargs)

    monkeypatch.setattr(schema_inference, "get_traced_metadata_fn", counted)
    config = example_config(tmp_path / "out")  # one folder for both: the graph names its own path
    skipped = files_of(run(config).output_dir)
    assert traced == [True]  # the final SavedModel's schema only
    traced.clear()
    monkeypatch.setattr(deferred_schema, "skipped", contextlib.nullcontext)
    # a fresh process's rerun: the same config, data and folder would otherwise get the kept transform graph
    forget_kept_graphs()
    inferred = files_of(run(config, overwrite=True).output_dir)
    assert traced == [False, True]
    assert any(name.startswith("transform_graph/transformed_metadata") for name in skipped)
    assert skipped.keys() == inferred.keys()
    assert [name for name in skipped if skipped[name] != inferred[name]] == []
