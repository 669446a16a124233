"""Beam's bundle state samplers stop within 20 ms during a job (pipelines/runner/state_sampler.py), and Beam's own
class is back after it."""

import time

from apache_beam.runners.worker import statesampler
from apache_beam.utils.counters import CounterFactory

from example_job import example_config


def test_a_sampler_made_during_the_block_stops_within_its_short_period():
    from skewless.pipelines.runner import state_sampler

    beams = statesampler.StateSampler
    with state_sampler.quick():
        sampler = statesampler.StateSampler("step", CounterFactory())
        assert sampler.sampling_period_ms == state_sampler.PERIOD_MS == 20
        sampler.start()
        time.sleep(1.0)  # its sleeps have grown to the whole period
        stopping = time.monotonic()
        sampler.stop()
        assert time.monotonic() - stopping < 0.1  # Beam's 200 ms period waited up to 0.2 s here
    assert statesampler.StateSampler is beams
    assert statesampler.StateSampler("step", CounterFactory()).sampling_period_ms == 200


def test_every_bundle_of_a_job_samples_at_the_short_period(tmp_path, monkeypatch):
    from skewless.pipelines import run
    from skewless.pipelines.runner import state_sampler

    periods = []
    quick_init = state_sampler._QuickSampler.__init__

    def recorded(self, *args, **kwargs):
        quick_init(self, *args, **kwargs)
        periods.append(self.sampling_period_ms)

    monkeypatch.setattr(state_sampler._QuickSampler, "__init__", recorded)
    beams = statesampler.StateSampler
    run(example_config(tmp_path / "out", input={"format": "synthetic", "rows": 300, "seed": 1}))
    assert len(periods) > 5 and set(periods) == {20}
    assert statesampler.StateSampler is beams
