"""tf.Transform's SavedModels, reused within a process (pipelines/analyze/saved_model_reuse.py), and the transform
graph loaded once (pipelines/write/loaded_graph.py): a rerun of the same config writes what a run that traced and
loaded everything writes, and any change to what a graph depends on (the config, the raw schema, the versions, a
hook, the data) traces it anew."""

import dataclasses
import os
import shutil

import pytest
import tensorflow as tf
from example_job import PHASE_CONFIGS, SMALL_ROWS, example_config, tfidf_config
from run_output import files_of, forget_kept_graphs
from tensorflow_transform.beam import impl as tft_impl

from skewless.config import load_config
from skewless.pipelines import run
from skewless.pipelines.analyze import construction_trace, saved_model_reuse
from skewless.pipelines.analyze.preprocessing import build_preprocessing_fn
from skewless.pipelines.plan.plan import plan
from skewless.pipelines.write import loaded_graph

SIGNATURE = {"age": tf.TensorSpec([None], tf.float32)}
PRUNED = "pruned"


def _outputs(result) -> dict:
    return files_of(result.output_dir, ("data", "transform_graph"))


@pytest.fixture
def writes(monkeypatch):
    """The SavedModels tf.Transform itself writes during the test, one per phase (True for the first phase's,
    whose replacements are None; False for a later one's, the last being the transform graph), PRUNED where the
    first phase's analysis graph is pruned from tf.Transform's construction trace instead (in memory,
    pipelines/analyze/construction_trace.py), and "load" where it loads an analysis graph."""
    written = []
    original_write = tft_impl._create_v2_saved_model
    original_prune = construction_trace.analysis_graph
    original_load = tft_impl._RunMetaGraphDoFn._make_graph_state

    def counted_write(tensor_replacement_map, *rest):
        written.append(tensor_replacement_map is None)
        return original_write(tensor_replacement_map, *rest)

    def counted_prune(*args):
        module = original_prune(*args)
        if module is not None:
            written.append(PRUNED)
        return module

    def counted_load(self, saved_model_dir):
        written.append("load")
        return original_load(self, saved_model_dir)

    forget_kept_graphs()
    monkeypatch.setattr(tft_impl, "_create_v2_saved_model", counted_write)
    monkeypatch.setattr(construction_trace, "analysis_graph", counted_prune)
    monkeypatch.setattr(tft_impl._RunMetaGraphDoFn, "_make_graph_state", counted_load)
    yield written
    forget_kept_graphs()


@pytest.fixture
def loads(monkeypatch):
    """The folders a SavedModel is loaded from (`tf.saved_model.load`): not a graph the job reads in memory (an
    analysis graph, or the transform graph its own transform pass reads)."""
    loaded = []
    original = tf.saved_model.load

    def counted(export_dir, *args, **kwargs):
        loaded.append(export_dir)
        return original(export_dir, *args, **kwargs)

    monkeypatch.setattr(tf.saved_model, "load", counted)
    return loaded


def test_a_rerun_reuses_the_first_graph_and_writes_the_same_bytes(tmp_path, writes):
    run(example_config(tmp_path / "first", input=SMALL_ROWS))
    assert writes == [PRUNED, "load", False]  # the analysis graph written and loaded, then the final graph
    # another output directory (the kept graph's table names hold the first run's temporary paths)
    config = example_config(tmp_path / "out", input=SMALL_ROWS)
    again = _outputs(run(config))
    # only the final graph, which names its vocabularies' tables by their temporary paths, in the run's folder
    assert writes[3:] == [False]
    # the same bytes as a process that never kept a graph, to the same directory
    forget_kept_graphs()
    fresh = _outputs(run(config, overwrite=True))
    assert writes[4:] == [PRUNED, "load", False]
    assert fresh == again


def test_a_rerun_on_the_same_data_traces_nothing_and_loads_the_graph_once(tmp_path, writes, loads):
    """The notebook's rerun: the same config, data and output folder. The transform graph holds the same results,
    so it is copied as the analysis graph is. The first run's transform pass read the graph it saved in memory
    (its tables end with the job), so the first rerun loads it once and later ones get the loaded graph."""
    config = example_config(tmp_path / "out", input=SMALL_ROWS)
    run(config)
    assert writes == [PRUNED, "load", False] and loads == []  # both graphs read in memory
    again = _outputs(run(config, overwrite=True))
    assert writes[3:] == [] and len(loads) == 1
    assert _outputs(run(config, overwrite=True)) == again
    assert writes[3:] == [] and len(loads) == 1
    forget_kept_graphs()
    fresh = _outputs(run(config, overwrite=True))
    assert writes[3:] == [PRUNED, "load", False] and len(loads) == 1
    assert fresh == again


def test_new_data_traces_the_transform_graph_anew(tmp_path, writes, loads):
    """Another seed: other means, vocabularies and bucket boundaries; the analysis graph alone is reused."""
    config = example_config(tmp_path / "out", input=SMALL_ROWS)
    run(config)
    other = example_config(tmp_path / "out", input={**SMALL_ROWS, "seed": 6})
    changed = _outputs(run(other, overwrite=True))
    assert writes[3:] == [False] and loads == []  # the new transform graph written, read in memory
    forget_kept_graphs()
    fresh = _outputs(run(other, overwrite=True))
    assert fresh == changed
    assert fresh["transform_graph/transform_fn/saved_model.pb"] != _outputs(run(config, overwrite=True))[
        "transform_graph/transform_fn/saved_model.pb"]


def test_a_graph_that_reads_a_file_of_its_run_is_not_kept(tmp_path, writes):
    """A most_frequent fill reads its top-1 vocabulary by path (pipelines/analyze/missing.py), a temporary file
    of the run that traced it: a rerun after that run's folder is gone writes what a fresh trace writes."""
    from example_job import gaps_run

    for folder in ("first", "again", "fresh"):
        (tmp_path / folder).mkdir()
    gaps_run(tmp_path / "first")
    shutil.rmtree(tmp_path / "first")
    again, _ = gaps_run(tmp_path / "again")
    assert writes.count(PRUNED) == 2  # made both times
    forget_kept_graphs()
    fresh, _ = gaps_run(tmp_path / "fresh")
    # the shards (the graphs differ by the output folder their tables are named after)
    assert files_of(again.output_dir, ("data",)) == files_of(fresh.output_dir, ("data",))


def test_a_changed_config_traces_its_graph_anew(tmp_path, writes):
    config = example_config(tmp_path / "out", input=SMALL_ROWS)
    run(config)
    config["features"] = {**config["features"], "hours_per_week": {"transform": "bucketize", "num_buckets": 5}}
    changed = _outputs(run(config, overwrite=True))
    assert writes == [PRUNED, "load", False] * 2
    forget_kept_graphs()
    assert _outputs(run(config, overwrite=True)) == changed


def test_only_the_last_few_graphs_are_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(saved_model_reuse, "KEPT", 2)
    saved_model_reuse.forget()
    graph = tmp_path / "graph"
    graph.mkdir()
    (graph / "saved_model.pb").write_bytes(b"graph")
    for key in ("a", "b", "a", "c"):  # "a" used again before "c" arrives: "b" is the least recently used
        if saved_model_reuse._kept_folder(key) is None:
            saved_model_reuse._keep(key, str(graph))
    assert list(saved_model_reuse._copies) == ["a", "c"]
    saved_model_reuse.forget()


def _key(config: dict, signature=None, columns_change=None):
    job = load_config(config)
    columns = plan(job).columns
    if columns_change:
        columns = [dataclasses.replace(c, **columns_change) if c.name == "age" else c for c in columns]
    return saved_model_reuse.reuse_key(build_preprocessing_fn(job, columns), signature or SIGNATURE, None, None)


def test_the_key_follows_the_config_the_schema_and_the_versions(tmp_path, monkeypatch):
    config = example_config(tmp_path / "out", input=SMALL_ROWS)
    base = _key(config)
    # the output dir is not in the graph
    assert base is not None and _key(example_config(tmp_path / "elsewhere", input=SMALL_ROWS)) == base
    options = {**config["features"], "education": {"transform": "vocabulary", "top_k": 6, "num_oov_buckets": 2}}
    assert _key({**config, "features": options}) != base
    assert _key(config, columns_change={"default": 1.0}) != base  # a raw column's fill value
    assert _key(config, signature={"age": tf.TensorSpec([None], tf.int64)}) != base  # the raw schema's type
    assert saved_model_reuse.reuse_key(
        build_preprocessing_fn(load_config(config), plan(load_config(config)).columns), SIGNATURE, {"x": "y:0"},
        None) != base  # the analyzers' input names
    monkeypatch.setattr(saved_model_reuse, "_versions", lambda: (("tensorflow-transform", "0.0"),))
    assert _key(config) != base


def test_a_hook_is_never_keyed(tmp_path):
    config = example_config(tmp_path / "out", input=SMALL_ROWS,
                            preprocessing_fn="test_saved_model_reuse:squared_age")
    job = load_config(config)
    assert saved_model_reuse.reuse_key(build_preprocessing_fn(job, plan(job).columns), SIGNATURE, None, None) is None


def squared_age(inputs, outputs):
    """A hook: code the key cannot see (it may call anything)."""
    return {"age_squared": tf.square(inputs["age"])}


def test_a_full_temporary_disk_keeps_nothing_and_the_job_goes_on(tmp_path, monkeypatch):
    def no_space(source, target):
        os.makedirs(target)
        raise OSError(28, "No space left on device")

    forget_kept_graphs()
    try:
        with monkeypatch.context() as patched:
            patched.setattr(saved_model_reuse.shutil, "copytree", no_space)
            patched.setattr(loaded_graph.shutil, "copytree", no_space)
            config = example_config(tmp_path / "out", input=SMALL_ROWS)
            full = _outputs(run(config))
            assert not saved_model_reuse._copies and os.listdir(saved_model_reuse._store()) == []
        forget_kept_graphs()
        assert _outputs(run(config, overwrite=True)) == full
    finally:
        forget_kept_graphs()


@pytest.fixture
def saves(monkeypatch):
    """The folders TensorFlow saves a SavedModel to during the test."""
    saved = []
    original = tf.saved_model.save

    def counted(obj, export_dir, *args, **kwargs):
        saved.append(str(export_dir))
        return original(obj, export_dir, *args, **kwargs)

    monkeypatch.setattr(tf.saved_model, "save", counted)
    return saved


@pytest.mark.parametrize("name", PHASE_CONFIGS)
def test_an_in_process_run_writes_only_the_transform_graph(tmp_path, monkeypatch, saves, name):
    """Every worker in this process (the default): the analysis graphs (one per phase but the last) are never saved,
    and the run writes what a run whose workers would read them from disk (saved, then loaded) writes to the same
    folder, byte for byte."""
    from skewless.pipelines.commands import run as run_command

    config = PHASE_CONFIGS[name](tmp_path)
    forget_kept_graphs()
    try:
        in_memory = files_of(run(config).output_dir)
        assert len(saves) == 1  # the transform graph
        forget_kept_graphs()
        monkeypatch.setattr(run_command.runners, "workers_in_this_process", lambda options: False)
        written = files_of(run(config, overwrite=True).output_dir)
    finally:
        forget_kept_graphs()
    assert len(saves) >= 3  # the second run's analysis graphs and its transform graph
    assert in_memory == written


def test_a_rerun_takes_the_analysis_graph_kept_in_memory(tmp_path, writes, saves, loads):
    """The first phase's tables read tf.Transform's placeholder files only: the module and its loaded graph serve
    the rerun, whose job saves and traces nothing and loads the transform graph only (read in memory by the first
    run); the same bytes as a fresh process's."""
    config = example_config(tmp_path / "out", input=SMALL_ROWS)
    run(config)
    assert len(saves) == 1 and loads == [] and writes == [PRUNED, "load", False]
    again = _outputs(run(config, overwrite=True))
    assert len(saves) == 1 and len(loads) == 1 and writes[3:] == []
    assert loads[0].endswith("transform_fn")
    forget_kept_graphs()
    assert _outputs(run(config, overwrite=True)) == again


def test_a_later_phase_reading_a_vocabulary_file_is_traced_again(tmp_path, writes):
    """TF-IDF's second phase looks up the first phase's vocabulary by its file, named after the vocabulary: a rerun's
    table of that name would be the same table, so that phase is not kept. The rerun traces and loads it again;
    the first phase and the transform graph are reused. The same bytes as a fresh process's."""
    config = tfidf_config(tmp_path)
    run(config)
    assert writes == [PRUNED, "load", False, "load", False]
    again = files_of(run(config, overwrite=True).output_dir)
    assert writes[5:] == [False, "load"]
    forget_kept_graphs()
    assert files_of(run(config, overwrite=True).output_dir) == again


def test_the_analysis_graph_is_found_whatever_module_tf_saved_model_is_now(tmp_path, monkeypatch):
    """Importing some libraries replaces TensorFlow's `tf.saved_model` module: the analysis pass, which looks it up
    as it loads, still gets the graph kept in memory."""
    import types

    replaced = types.ModuleType("tensorflow.saved_model")
    replaced.__dict__.update({name: getattr(tf.saved_model, name) for name in dir(tf.saved_model)
                              if not name.startswith("__")})
    forget_kept_graphs()
    try:
        monkeypatch.setattr(tf, "saved_model", replaced)
        result = run(example_config(tmp_path / "out", input=SMALL_ROWS))
    finally:
        forget_kept_graphs()
    assert result.rows["read"] == SMALL_ROWS["rows"]
