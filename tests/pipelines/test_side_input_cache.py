"""The in-process runner's worker caches no state during a job (pipelines/runner/side_input_cache.py): side inputs
are still what they hold, in every bundle, and Beam's cache size is back after the run."""

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.portability.fn_api_runner import worker_handlers
from apache_beam.runners.worker import statecache

from skewless.pipelines.runner import runners


def test_side_inputs_are_read_without_a_state_cache_and_beams_size_is_back(tmp_path, monkeypatch):
    sizes = []
    beams_init = statecache.StateCache.__init__

    def recorded(self, max_weight):
        sizes.append(max_weight)
        beams_init(self, max_weight)

    monkeypatch.setattr(statecache.StateCache, "__init__", recorded)
    out = tmp_path / "out.txt"
    shipped = worker_handlers.STATE_CACHE_SIZE_MB
    with runners.pipeline(PipelineOptions(["--direct_running_mode=in_memory"])) as pipeline:
        table = pipeline | "Table" >> beam.Create([("a", 1), ("b", 2), ("c", 3)])
        total = table | beam.Map(lambda pair: pair[1]) | beam.CombineGlobally(sum)
        _ = (pipeline | "Keys" >> beam.Create(list("abcabc")) | beam.Reshuffle()
             | beam.Map(lambda key, looked, whole: f"{key}{looked[key]}/{whole}",
                        beam.pvalue.AsDict(table), beam.pvalue.AsSingleton(total))
             | beam.io.WriteToText(str(out), shard_name_template=""))
    assert sorted(out.read_text().split()) == ["a1/6", "a1/6", "b2/6", "b2/6", "c3/6", "c3/6"]
    assert sizes and set(sizes) == {0}  # the worker the run made
    assert worker_handlers.STATE_CACHE_SIZE_MB == shipped == 100
