"""The job parses (analysis) and transforms (transform pass) a bundle's work units on all cores at once
(pipelines/runner/bundle_threads.py): its outputs must be those of one unit at a time."""

import json
import os
import threading

import pytest

from example_job import example_config
from run_output import files_of


def test_units_at_once_write_what_one_at_a_time_writes(tmp_path, monkeypatch):
    from skewless.pipelines import run
    from skewless.pipelines.runner.bundle_threads import ThreadedMap
    from skewless.pipelines.write import transform

    cores = os.cpu_count() or 1
    running, most = [0], {}
    lock = threading.Lock()

    def counting(work):
        def counted(*args, **kwargs):
            with lock:
                running[0] += 1
                most[work] = max(most.get(work, 0), running[0])
            try:
                return original[work](*args, **kwargs)
            finally:
                with lock:
                    running[0] -= 1
        return counted

    # patched on the classes: Beam pickles the DoFns, and a class travels by reference (a function by value)
    original = {"parse": ThreadedMap.run_element, "transform": transform.TransformUnitFn.run_element}
    monkeypatch.setattr(ThreadedMap, "run_element", counting("parse"))
    monkeypatch.setattr(transform.TransformUnitFn, "run_element", counting("transform"))
    # one folder for both runs: the graph names its own path
    config = example_config(tmp_path / "out", input={"format": "synthetic", "rows": 40_000, "seed": 11},
                            output={"shards": 4})
    outputs, summaries = {}, {}
    for threads in (1, cores):
        monkeypatch.setattr(os, "cpu_count", lambda threads=threads: threads)
        most.clear()
        output_dir = run(config, overwrite=threads != 1).output_dir
        outputs[threads] = files_of(output_dir)
        with open(os.path.join(output_dir, "run.json")) as handle:
            summaries[threads] = json.load(handle)
        assert most == {"parse": min(threads, 2), "transform": min(threads, 2)}  # at once where the cores allow
    one_at_a_time, at_once = outputs[1], outputs[cores]
    assert len([name for name in at_once if name.startswith("data/")]) == 8  # 4 units, 2 splits
    assert at_once.keys() == one_at_a_time.keys()
    assert [name for name in at_once if at_once[name] != one_at_a_time[name]] == []
    ours, theirs = summaries[cores], summaries[1]
    assert ours["rows"] == theirs["rows"] and ours["features"] == theirs["features"] and ours["shards"] == theirs["shards"]


@pytest.mark.parametrize("work", ["parse", "transform"])
def test_a_unit_that_fails_stops_the_job_and_leaves_no_output(tmp_path, monkeypatch, work):
    """A unit failing while another runs beside it: the job fails with that unit's error, after the other stopped,
    and nothing is published."""
    from skewless.pipelines import run
    from skewless.pipelines.runner.bundle_threads import ThreadedMap
    from skewless.pipelines.write import transform

    threaded = ThreadedMap if work == "parse" else transform.TransformUnitFn
    original = threaded.run_element

    def failing(self, unit, stop):
        if unit.index == 1:
            raise RuntimeError(f"unit 1 failed while {work}")
        return original(self, unit, stop)

    monkeypatch.setattr(threaded, "run_element", failing)
    config = example_config(tmp_path / "out", input={"format": "synthetic", "rows": 20_000, "seed": 3},
                            output={"shards": 4})
    with pytest.raises(Exception, match=f"unit 1 failed while {work}"):
        run(config)
    assert not (tmp_path / "out").exists()
    assert not [t for t in threading.enumerate() if t.name.startswith("skewless-bundle")]
    assert os.listdir(tmp_path) == []  # no staging folder left beside it either
