"""`DirectRunner` runs in this process, never on a runner downloaded at run time; other names pass through."""

from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.portability.fn_api_runner.fn_runner import FnApiRunner

from skewless.pipelines.runner import runners


def test_direct_runner_is_the_in_process_fn_api_runner_with_the_job_options():
    options = PipelineOptions(["--runner=DirectRunner", "--direct_num_workers=2"])
    pipeline = runners.pipeline(options)
    assert isinstance(pipeline.runner, FnApiRunner)
    # the workers see the job's options through the provision info
    provided = pipeline.runner._provision_info.provision_info.pipeline_options
    assert provided["beam:option:direct_num_workers:v1"] == "2"


def test_the_default_runner_is_direct_and_other_runners_pass_through():
    assert isinstance(runners.pipeline(PipelineOptions([])).runner, FnApiRunner)
    for name in ("direct", "directrunner", "SwitchingDirectRunner"):
        assert isinstance(runners.pipeline(PipelineOptions([f"--runner={name}"])).runner, FnApiRunner)
    prism = runners.pipeline(PipelineOptions(["--runner=PrismRunner"])).runner
    assert type(prism).__name__ == "PrismRunner"
