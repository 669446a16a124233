"""Beam's local job service, running each job on as many SDK workers as the job asks for.

Beam 2.77's `local_job_service_main` runs every job on ONE SDK worker, whatever `--sdk_worker_parallelism`
says: its FnApiRunner reads `--direct_num_workers` only when it builds a pipeline itself (`run_pipeline`),
not for a pipeline proto a job service hands it (`run_via_runner_api`). Flink and Spark spread a job over
their task slots; to rehearse that on one machine, this job service applies the job's `--direct_num_workers`
before Beam's own code runs the job. Start it as `python tests/pipelines/portable_job_service.py --port PORT`.
"""

import sys

from apache_beam.options.pipeline_options import DirectOptions
from apache_beam.runners.portability import local_job_service_main
from apache_beam.runners.portability.fn_api_runner import fn_runner

_beam_run_via_runner_api = fn_runner.FnApiRunner.run_via_runner_api


def _run_on_the_requested_workers(runner, pipeline_proto, options):
    # the attribute run_pipeline sets from the same option (a job service passes it as a string); the worker
    # handlers then ask the pool for that many workers and split each stage's input between them
    runner._num_workers = int(options.view_as(DirectOptions).direct_num_workers or 1)
    return _beam_run_via_runner_api(runner, pipeline_proto, options)


if __name__ == "__main__":
    fn_runner.FnApiRunner.run_via_runner_api = _run_on_the_requested_workers
    local_job_service_main.run(sys.argv[1:])
