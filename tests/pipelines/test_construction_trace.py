"""The first analysis graph pruned from tf.Transform's construction trace (pipelines/analyze/construction_trace.py)
gives the job what tf.Transform's own trace of it gives: the same shards, transform graph and statistics, byte for
byte, for graphs of one phase, of several, with gaps filled (their later phases read a file of the run), with a
hook, and for the shipped census config."""

import pytest
import tensorflow as tf
from example_job import PHASE_CONFIGS, SMALL_ROWS, census_config_or_skip, example_config
from run_output import files_of, forget_kept_graphs

from skewless.pipelines import run
from skewless.pipelines.analyze import construction_trace

CASES = {**PHASE_CONFIGS, "census": census_config_or_skip,
         "hook": lambda folder: example_config(folder / "out", input=SMALL_ROWS,
                                               preprocessing_fn="test_construction_trace:squared_age")}


@pytest.fixture
def pruned(monkeypatch):
    """How many first-phase analysis graphs were pruned from a construction trace during the test."""
    made = []
    original = construction_trace.analysis_graph

    def counted(*args):
        module = original(*args)
        made.append(module is not None)
        return module

    monkeypatch.setattr(construction_trace, "analysis_graph", counted)
    return made


@pytest.mark.parametrize("name", CASES)
def test_the_pruned_analysis_graph_gives_what_a_trace_of_its_own_gives(tmp_path, monkeypatch, pruned, name):
    config = CASES[name](tmp_path)
    forget_kept_graphs()
    try:
        from_construction = files_of(run(config).output_dir)
        assert pruned == [True]
        forget_kept_graphs()
        monkeypatch.setattr(construction_trace, "analysis_graph", lambda *args: None)  # tf.Transform traces it
        traced = files_of(run(config, overwrite=True).output_dir)
    finally:
        forget_kept_graphs()
    assert from_construction.keys() == traced.keys()
    assert [path for path in traced if from_construction[path] != traced[path]] == []


def squared_age(inputs, outputs):
    """A hook: code no key can see."""
    return {"age_squared": tf.square(inputs["age"])}
