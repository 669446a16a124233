"""Beam sizes the analysis pass's Arrow tables and record batches without pickling them
(pipelines/runner/arrow_coder.py), and the job writes the same bytes as with Beam's own fallback coder."""

import contextlib

import apache_beam as beam
import pyarrow as pa
from apache_beam import coders
from arrow_pickles import arrow_pickles
from example_job import example_config
from run_output import files_of

from skewless.pipelines import run
from skewless.pipelines.analyze import saved_model_reuse
from skewless.pipelines.runner import arrow_coder


def test_the_coder_carries_a_table_and_sizes_it_without_encoding_it():
    table = pa.table({"x": list(range(1000)), "s": [f"v{i}" for i in range(1000)]})
    coder = arrow_coder.ArrowCoder()
    for value in (table, table.to_batches()[0]):
        assert coder.decode(coder.encode(value)).equals(value)
        with arrow_pickles() as pickled:
            assert coder.estimate_size(value) == value.nbytes
        assert not pickled


def test_the_registry_answers_arrow_types_only_inside_a_job():
    assert not isinstance(coders.registry.get_coder(pa.Table), arrow_coder.ArrowCoder)
    with arrow_coder.registered():
        assert isinstance(coders.registry.get_coder(pa.Table), arrow_coder.ArrowCoder)
        assert isinstance(coders.registry.get_coder(pa.RecordBatch), arrow_coder.ArrowCoder)
        assert isinstance(coders.registry.get_coder(int), beam.coders.VarIntCoder)
    assert not isinstance(coders.registry.get_coder(pa.RecordBatch), arrow_coder.ArrowCoder)


def test_the_job_pickles_no_table_and_writes_what_the_fallback_coder_wrote(tmp_path, monkeypatch):
    # 70,000 rows: two chunks of the analysis pass, each a table and a record batch Beam sampled for its size
    rows = {"format": "synthetic", "rows": 70_000, "seed": 7}
    config = example_config(tmp_path / "out", input=rows)  # one directory: the graph holds its paths
    with arrow_pickles() as pickled:
        new = files_of(run(config).output_dir)
    assert not pickled, f"Beam pickled Arrow values: {dict(pickled)}"
    # the path before: Beam's fallback coder for every PCollection, which pickles each value it sizes
    monkeypatch.setattr(arrow_coder, "registered", contextlib.nullcontext)
    saved_model_reuse.forget()  # each run traces its own graph
    with arrow_pickles() as pickled:
        old = files_of(run(config, overwrite=True).output_dir)
    assert pickled["Table"] >= 2 and pickled["RecordBatch"] >= 2
    assert new == old
