"""Beam 2.77's Dask runner, on a local `distributed` cluster of 2 worker processes: the smallest pipelines
that show why it cannot run the job (docs/recipes/runners.md). Each test asserts the bug is still
there, next to the right answer from the in-process runner, so a Beam upgrade that fixes one fails here.

The runner maps each Beam transform to one dask Bag keyed by the transform, not by its output
PCollection: every consumer of a multi-output ParDo gets all of its outputs, tags dropped; and it
computes only the last Bag it built, so other sinks never run.
"""

import glob
import os
import uuid

import pytest

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from example_job import example_config
from skewless.pipelines.runner import runners

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.slow  # documents a third-party bug; proves nothing the job needs

DASK_RUNNER = "apache_beam.runners.dask.dask_runner.DaskRunner"


class Record(beam.DoFn):
    """Writes each element to its own file: what reaches a sink, whichever worker process ran it."""

    def __init__(self, folder):
        self.folder = folder

    def process(self, element):
        with open(os.path.join(self.folder, uuid.uuid4().hex), "w") as handle:
            handle.write(repr(element))


def recorded(folder) -> list[str]:
    return sorted(open(path).read() for path in glob.glob(os.path.join(folder, "*")))


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        yield local


def on_both_runners(build, cluster, tmp_path):
    """(what the in-process runner records, what the Dask runner records) for the same pipeline."""
    results = []
    for name, args in (("in_process", []),
                       ("dask", [f"--runner={DASK_RUNNER}", f"--dask_client_address={cluster.scheduler_address}"])):
        folder = tmp_path / name
        folder.mkdir()
        with runners.pipeline(PipelineOptions(args)) as pipeline:
            build(pipeline, str(folder))
        results.append(recorded(folder))
    return results


def test_dask_runner_still_reads_a_plain_side_input_right(cluster, tmp_path):
    def build(pipeline, folder):
        numbers = pipeline | beam.Create([1, 2, 3])
        total = numbers | "Sum" >> beam.CombineGlobally(sum)
        numbers | beam.Map(lambda x, t: (x, t), t=beam.pvalue.AsSingleton(total)) | beam.ParDo(Record(folder))

    expected, got = on_both_runners(build, cluster, tmp_path)
    assert expected == ["(1, 6)", "(2, 6)", "(3, 6)"] and got == expected


def test_dask_runner_still_mixes_the_outputs_of_a_multi_output_pardo(cluster, tmp_path):
    def build(pipeline, folder):
        parts = (pipeline | beam.Create([1, 2, 3])
                 | beam.FlatMap(lambda x: [x, beam.pvalue.TaggedOutput("double", 2 * x)]).with_outputs("double", main="main"))
        total = parts.double | "Sum" >> beam.CombineGlobally(sum)
        parts.main | beam.Map(lambda x, t: (x, t), t=beam.pvalue.AsSingleton(total)) | beam.ParDo(Record(folder))

    expected, got = on_both_runners(build, cluster, tmp_path)
    assert expected == ["(1, 12)", "(2, 12)", "(3, 12)"]
    # main gets the doubles too, and the side input sums both outputs (and more): wrong, silently
    assert got != expected and len(got) == 6


def test_dask_runner_still_runs_only_the_last_sink(cluster, tmp_path):
    def build(pipeline, folder):
        numbers = pipeline | beam.Create([1, 2, 3])
        numbers | "Kept" >> beam.ParDo(Record(folder))
        numbers | beam.Map(lambda x: -x) | "Negated" >> beam.ParDo(Record(folder))

    expected, got = on_both_runners(build, cluster, tmp_path)
    assert expected == ["-1", "-2", "-3", "1", "2", "3"]
    assert got == ["-1", "-2", "-3"]


def test_dask_runner_still_fails_a_hot_key_fanout_combine(cluster, tmp_path):
    def build(pipeline, folder):
        (pipeline | beam.Create([("a", 1), ("a", 2), ("b", 3)])
         | beam.CombinePerKey(sum).with_hot_key_fanout(2) | beam.ParDo(Record(folder)))

    with pytest.raises(TypeError, match="cannot unpack non-iterable int object"):
        on_both_runners(build, cluster, tmp_path)
    assert recorded(tmp_path / "in_process") == ["('a', 3)", "('b', 3)"]


def test_dask_runner_still_fails_the_job(cluster, tmp_path):
    """tf.Transform's analyzers combine with a hot-key fanout: the job fails there."""
    from skewless.pipelines import run

    config = example_config(tmp_path / "run")
    config["input"] = {**config["input"], "rows": 500}
    with pytest.raises(ValueError, match="too many values to unpack"):
        run(config, beam_args=[f"--runner={DASK_RUNNER}", f"--dask_client_address={cluster.scheduler_address}"])
