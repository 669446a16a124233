"""Beam's pickles are compressed with zlib level 1 where a job's workers are this process
(pipelines/runner/quick_pickles.py): the same objects come back, a bz2 payload pickled outside still loads, Beam is
as shipped outside a job, the direct runner's multi_processing mode keeps bz2 (its workers are other processes), and
a job writes the same files either way."""

import base64
import bz2
import contextlib

import apache_beam as beam
import pytest
from apache_beam.internal import cloudpickle_pickler, pickler
from apache_beam.options.pipeline_options import PipelineOptions

from example_job import example_config
from run_output import files_of
from skewless.pipelines.runner import quick_pickles, runners


def _compression(payload: bytes) -> str:
    """bz2, or zlib at level 1 (header 78 01) or at Beam's level 9 for coders (78 da)."""
    head = base64.b64decode(payload)[:3]
    return "bz2" if head == b"BZh" else {b"\x78\x01": "zlib1", b"\x78\xda": "zlib9"}[head[:2]]


def test_pickles_are_zlib_within_the_block_and_load_either_way():
    value = {"fn": len, "rows": list(range(1000)), "text": "é" * 50}
    shipped = pickler.dumps(value)
    assert _compression(shipped) == "bz2"
    with quick_pickles.installed():
        quick = pickler.dumps(value)
        assert _compression(quick) == "zlib1"
        assert pickler.loads(quick) == value
        assert pickler.loads(shipped) == value  # pickled before the block
    assert cloudpickle_pickler.bz2 is bz2
    with pytest.raises(OSError):
        pickler.loads(quick)  # Beam's own loads reads bz2 only: whatever reads a job's pickles runs in the block


# Beam pickles coders with zlib level 9 itself; the rest with bz2 unless quick
@pytest.mark.parametrize("mode, bz2_left", [("in_memory", False), ("multi_threading", False),
                                            ("multi_processing", True)])
def test_a_pipelines_pickles_are_quick_only_where_its_workers_are_this_process(mode, bz2_left, monkeypatch, tmp_path):
    seen = []
    dumps = cloudpickle_pickler.dumps

    def recorded(*args, **kwargs):
        payload = dumps(*args, **kwargs)
        seen.append(_compression(payload))
        return payload

    monkeypatch.setattr(cloudpickle_pickler, "dumps", recorded)
    out = tmp_path / "out.txt"
    with runners.pipeline(PipelineOptions([f"--direct_running_mode={mode}", "--direct_num_workers=2"])) as pipeline:
        _ = (pipeline | beam.Create([1, 2, 3]) | beam.Map(lambda x: str(x * 2))
             | beam.io.WriteToText(str(out), shard_name_template=""))
    assert sorted(out.read_text().split()) == ["2", "4", "6"]  # the workers read what was pickled
    assert seen and ("bz2" in seen) == bz2_left and ("zlib1" in seen) != bz2_left
    assert cloudpickle_pickler.bz2 is bz2


def test_a_job_writes_the_same_files_with_quick_pickles(tmp_path, monkeypatch):
    from skewless.pipelines import run

    # the same output folder: tf.Transform names a vocabulary's table by its temporary path
    config = example_config(tmp_path / "out", input={"format": "synthetic", "rows": 300, "seed": 1})
    run(config)
    quick = files_of(tmp_path / "out")
    monkeypatch.setattr(quick_pickles, "installed", contextlib.nullcontext)
    run(config, overwrite=True)
    assert quick and quick == files_of(tmp_path / "out")
