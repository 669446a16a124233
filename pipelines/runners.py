"""The Beam pipeline a job runs on: the runner its options name, with `DirectRunner` kept in this process.

Beam 2.77's `DirectRunner` first tries Prism, a Go runner it downloads from GitHub when the pipeline
runs, and falls back to its in-process FnApiRunner when that fails. A job that reaches the network at
run time, and runs on a different engine depending on whether it could, is not what `DirectRunner`
means here: skewless runs it on the FnApiRunner directly (`direct_num_workers` and
`direct_running_mode` apply as usual). Prism stays available by its own name, `PrismRunner`.
"""

from __future__ import annotations


def pipeline(options):
    """A `beam.Pipeline` for `options` (PipelineOptions)."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import StandardOptions

    name = options.view_as(StandardOptions).runner
    # Beam reads runner names case-insensitively, with or without the "Runner" suffix
    if name is None or name.lower().removesuffix("runner") in ("direct", "switchingdirect"):
        return beam.Pipeline(runner=_in_process_runner(options), options=options)
    return beam.Pipeline(options=options)


def _in_process_runner(options):
    from apache_beam.portability.api import beam_provision_api_pb2
    from apache_beam.runners.portability.fn_api_runner import fn_runner
    from apache_beam.runners.portability.portable_runner import JobServiceHandle

    # the workers read the pipeline options from the provision info, as under the DirectRunner
    encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
    info = beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded)
    return fn_runner.FnApiRunner(provision_info=fn_runner.ExtendedProvisionInfo(info))
