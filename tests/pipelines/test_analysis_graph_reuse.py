"""tf.Transform's analysis graph, reused within a process (pipelines/analyze/analysis_graph_reuse.py): a rerun of the
same config writes what a run that traced everything writes, and any change to what the graph depends on (the
config, the raw schema, the versions, a hook) traces it anew."""

import dataclasses
import shutil

import pytest
import tensorflow as tf
from example_job import example_config
from run_output import files_of
from tensorflow_transform.beam import impl as tft_impl

from skewless.config import load_config
from skewless.pipelines import run
from skewless.pipelines.analyze import analysis_graph_reuse
from skewless.pipelines.analyze.preprocessing import build_preprocessing_fn
from skewless.pipelines.plan.plan import plan

ROWS = {"format": "synthetic", "rows": 300, "seed": 5}
SIGNATURE = {"age": tf.TensorSpec([None], tf.float32)}


def _outputs(result) -> dict:
    return files_of(result.output_dir, ("data", "transform_graph"))


@pytest.fixture
def writes(monkeypatch):
    """The analysis SavedModels tf.Transform itself writes during the test, one per phase (True for the first
    phase's, whose replacements are None), and "load" where it loads an analysis graph."""
    written = []
    original_write = tft_impl._create_v2_saved_model
    original_load = tft_impl._RunMetaGraphDoFn._make_graph_state

    def counted_write(tensor_replacement_map, *rest):
        written.append(tensor_replacement_map is None)
        return original_write(tensor_replacement_map, *rest)

    def counted_load(self, saved_model_dir):
        written.append("load")
        return original_load(self, saved_model_dir)

    analysis_graph_reuse.forget()
    monkeypatch.setattr(tft_impl, "_create_v2_saved_model", counted_write)
    monkeypatch.setattr(tft_impl._RunMetaGraphDoFn, "_make_graph_state", counted_load)
    yield written
    analysis_graph_reuse.forget()


def test_a_rerun_reuses_the_first_graph_and_writes_the_same_bytes(tmp_path, writes):
    run(example_config(tmp_path / "first", input=ROWS))
    assert writes == [True, "load", False]  # the analysis graph written and loaded, then the final graph
    # another output directory (the kept graph's table names hold the first run's temporary paths)
    config = example_config(tmp_path / "out", input=ROWS)
    again = _outputs(run(config))
    assert writes[3:] == [False]  # only the final graph, which holds the data's statistics
    # the same bytes as a process that never kept a graph, to the same directory (the final graph names its
    # vocabularies' tables by their paths)
    analysis_graph_reuse.forget()
    fresh = _outputs(run(config, overwrite=True))
    assert writes[4:] == [True, "load", False]
    assert fresh == again


def test_a_graph_that_reads_a_file_of_its_run_is_not_kept(tmp_path, writes):
    """A most_frequent fill reads its top-1 vocabulary by path (pipelines/analyze/missing.py), a temporary file
    of the run that traced it: a rerun after that run's folder is gone writes what a fresh trace writes."""
    from example_job import gaps_run

    for folder in ("first", "again", "fresh"):
        (tmp_path / folder).mkdir()
    gaps_run(tmp_path / "first")
    shutil.rmtree(tmp_path / "first")
    again, _ = gaps_run(tmp_path / "again")
    assert writes.count(True) == 2  # traced both times
    analysis_graph_reuse.forget()
    fresh, _ = gaps_run(tmp_path / "fresh")
    # the shards (the graphs differ by the output folder their tables are named after)
    assert files_of(again.output_dir, ("data",)) == files_of(fresh.output_dir, ("data",))


def test_a_changed_config_traces_its_graph_anew(tmp_path, writes):
    config = example_config(tmp_path / "out", input=ROWS)
    run(config)
    config["features"] = {**config["features"], "hours_per_week": {"transform": "bucketize", "num_buckets": 5}}
    changed = _outputs(run(config, overwrite=True))
    assert writes == [True, "load", False] * 2
    analysis_graph_reuse.forget()
    assert _outputs(run(config, overwrite=True)) == changed


def test_only_the_last_few_graphs_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(analysis_graph_reuse, "KEPT", 2)
    analysis_graph_reuse.forget()
    graph = tmp_path / "graph"
    graph.mkdir()
    (graph / "saved_model.pb").write_bytes(b"graph")
    for key in ("a", "b", "a", "c"):  # "a" used again before "c" arrives: "b" is the least recently used
        if analysis_graph_reuse._kept_folder(key) is None:
            analysis_graph_reuse._keep(key, str(graph))
    assert list(analysis_graph_reuse._copies) == ["a", "c"]
    analysis_graph_reuse.forget()


def _key(config: dict, signature=None, columns_change=None):
    job = load_config(config)
    columns = plan(job).columns
    if columns_change:
        columns = [dataclasses.replace(c, **columns_change) if c.name == "age" else c for c in columns]
    return analysis_graph_reuse.reuse_key(build_preprocessing_fn(job, columns), signature or SIGNATURE, None, None)


def test_the_key_follows_the_config_the_schema_and_the_versions(tmp_path, monkeypatch):
    config = example_config(tmp_path / "out", input=ROWS)
    base = _key(config)
    assert base is not None and _key(example_config(tmp_path / "elsewhere", input=ROWS)) == base  # the output dir is not in the graph
    options = {**config["features"], "education": {"transform": "vocabulary", "top_k": 6, "num_oov_buckets": 2}}
    assert _key({**config, "features": options}) != base
    assert _key(config, columns_change={"default": 1.0}) != base  # a raw column's fill value
    assert _key(config, signature={"age": tf.TensorSpec([None], tf.int64)}) != base  # the raw schema's type
    assert analysis_graph_reuse.reuse_key(
        build_preprocessing_fn(load_config(config), plan(load_config(config)).columns), SIGNATURE, {"x": "y:0"},
        None) != base  # the analyzers' input names
    monkeypatch.setattr(analysis_graph_reuse, "_versions", lambda: (("tensorflow-transform", "0.0"),))
    assert _key(config) != base


def test_a_hook_is_never_keyed(tmp_path):
    config = example_config(tmp_path / "out", input=ROWS, preprocessing_fn="test_analysis_graph_reuse:squared_age")
    job = load_config(config)
    assert analysis_graph_reuse.reuse_key(build_preprocessing_fn(job, plan(job).columns), SIGNATURE, None, None) is None


def squared_age(inputs, outputs):
    """A hook: code the key cannot see (it may call anything)."""
    return {"age_squared": tf.square(inputs["age"])}
