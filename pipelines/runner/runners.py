"""The Beam pipeline a job runs on: the runner its options name, with `DirectRunner` kept in this process.

Beam 2.77's `DirectRunner` first tries Prism, a Go runner it downloads from GitHub when the pipeline
runs, and falls back to its in-process FnApiRunner when that fails. A job that reaches the network at
run time, and runs on a different engine depending on whether it could, is not what `DirectRunner`
means here: skewless runs it on the FnApiRunner directly (`direct_num_workers` and
`direct_running_mode` apply as usual). Prism stays available by its own name, `PrismRunner`.

Any other name must be one of Beam's runners, or the `module.path.Class` of a PipelineRunner subclass: that
module is imported (a code hook, like `preprocessing_fn`). On any other runner a job must fail in bounded
time, not hang: an unreachable job service is refused before the pipeline is submitted, and a job whose
workers never start (a portable worker pool whose `python` cannot import skewless waits forever for its SDK
harness) is cancelled after `start_timeout`.
"""

from __future__ import annotations

import contextlib
import importlib
import socket
import time
from typing import Callable

import apache_beam as beam
import apache_beam.pipeline as beam_pipeline
from apache_beam.options.pipeline_options import DirectOptions, PortableOptions, StandardOptions
from apache_beam.portability.api import beam_provision_api_pb2
from apache_beam.runners.portability.fn_api_runner import fn_runner
from apache_beam.runners.portability.portable_runner import JobServiceHandle
from apache_beam.runners.runner import PipelineRunner, PipelineState

from skewless.errors import RunnerError
from skewless.pipelines.runner import quick_pickles, side_input_cache, submodule_index

# the portable job service's own default (`--job_server_timeout`)
_DEFAULT_CONNECT_SECONDS = 60
_POLL_SECONDS = 1.0


def pipeline(options, start_timeout: float | None = None, started: Callable[[], bool] | None = None):
    """A `beam.Pipeline` for `options` (PipelineOptions).

    Off the in-process runner, `with pipeline(...)` raises `RunnerError` when no work has started
    (`started()` stays false) `start_timeout` seconds after the job was submitted.
    """
    name = options.view_as(StandardOptions).runner
    if _is_direct(name):
        pipeline_class = _InProcessPipeline if workers_in_this_process(options) else _JobPipeline
        return pipeline_class(runner=_in_process_runner(options), options=options)
    _check_runner(name)
    _check_job_endpoint(options)
    watched = None if start_timeout is None or started is None else (start_timeout, started)
    return _WatchedPipeline(options=options, watched=watched)


def workers_in_this_process(options) -> bool:
    """Whether every worker of a pipeline of `options` runs in this process (the in-process runner, on one thread or
    several): what one step leaves in memory, a later step can read. The multi_processing mode's workers are other
    processes, as are every other runner's."""
    return (_is_direct(options.view_as(StandardOptions).runner)
            and options.view_as(DirectOptions).direct_running_mode != "multi_processing")


def _is_direct(name: str | None) -> bool:
    # Beam reads runner names case-insensitively, with or without the "Runner" suffix
    return name is None or name.lower().removesuffix("runner") in ("direct", "switchingdirect")


# Beam runners the job cannot run on, and why (lowercased, without the "Runner" suffix): Beam 2.77's legacy
# BundleBasedDirectRunner drops a step's tagged output where its main output is named (`with_outputs(main=...)`,
# which the analysis uses): the job failed in its last stage with a 100 KB error, the analysis's statistics
# printed in it (2026-11-28)
_REFUSED = {
    "bundlebaseddirect": "Beam's legacy direct runner drops a step's tagged outputs, which the job uses; "
                         "use DirectRunner (the default)",
}


def _check_runner(name: str) -> None:
    """Refuses in one line what Beam would fail on obscurely: a name that is none of Beam's runners, one the job
    cannot run on (`_REFUSED`), and a dotted name (`module.path.Class`) that is not a PipelineRunner subclass.

    A dotted name is a code hook, as `preprocessing_fn` is: its module is imported, so its top-level code runs
    with the user's rights (README "Runners"). Beam's own runners off its short list need it (the Dask runner).
    """
    known = StandardOptions.KNOWN_RUNNER_NAMES
    lowered = name.lower()
    why = _REFUSED.get(lowered.removesuffix("runner"))
    if why:
        raise RunnerError(f"runner {name}: {why}")
    if lowered in {runner.lower() for runner in known} or f"{lowered}runner" in {runner.lower() for runner in known}:
        return
    if "." not in name.strip("."):
        raise RunnerError(f"runner {name!r}: not a Beam runner (one of {', '.join(known)}, or the module.path.Class "
                          "of a PipelineRunner subclass)")
    module, _, attribute = name.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError, ValueError) as error:
        raise RunnerError(f"runner {name}: cannot import it ({type(error).__name__}: {error})") from None
    if not (isinstance(found, type) and issubclass(found, PipelineRunner)):
        raise RunnerError(f"runner {name}: not a Beam PipelineRunner subclass, so not a runner")


def _check_job_endpoint(options) -> None:
    portable = options.view_as(PortableOptions)
    endpoint = portable.job_endpoint
    # "embed" starts a job service in this process; FlinkRunner/SparkRunner without one start their own
    if not endpoint or endpoint == "embed":
        return
    host, _, port = endpoint.rpartition(":")
    timeout = portable.job_server_timeout or _DEFAULT_CONNECT_SECONDS
    try:
        socket.create_connection((host or "localhost", int(port)), timeout=timeout).close()
    except (OSError, ValueError) as error:
        raise RunnerError(
            f"job_endpoint {endpoint}: job service unreachable ({error}); start it or fix --job_endpoint"
        ) from None


@contextlib.contextmanager
def _no_interactive_beam():
    """Beam, as the job's pipeline is built and run, sees no IPython session.

    In a notebook's kernel Beam renames each transform applied after the cell it was applied in, and the first
    time starts Interactive Beam, whose environment displays a script loading jQuery and DataTables from CDNs
    (code.jquery.com, cdn.datatables.net) into the notebook: a job run from a notebook fetched from the network,
    and left its temporary folder to Interactive Beam to clean up. `apache_beam.pipeline` asks through the two
    functions it imported; they are swapped for the job's own calls only, so a user's own pipeline in the same
    notebook stays interactive.
    """
    saved = beam_pipeline.alter_label_if_ipython, beam_pipeline.is_in_ipython
    beam_pipeline.alter_label_if_ipython = lambda transform, pvalueish: None
    beam_pipeline.is_in_ipython = lambda: False
    try:
        yield
    finally:
        beam_pipeline.alter_label_if_ipython, beam_pipeline.is_in_ipython = saved


class _JobPipeline(beam.Pipeline):
    """`beam.Pipeline`, built and run without Interactive Beam (`_no_interactive_beam`), its functions pickled
    with cloudpickle's submodule search by an index (`submodule_index`: the same pickles, on every runner)."""

    def apply(self, transform, pvalueish=None, label=None):
        with _no_interactive_beam(), submodule_index.installed():
            return super().apply(transform, pvalueish, label)

    def run(self, test_runner_api="AUTO"):
        with _no_interactive_beam(), submodule_index.installed():
            return super().run(test_runner_api)


class _InProcessPipeline(_JobPipeline):
    """`_JobPipeline` whose workers are this process: Beam's pickles compressed quickly (`quick_pickles`) and its
    worker without a state cache (`side_input_cache`)."""

    def apply(self, transform, pvalueish=None, label=None):
        with quick_pickles.installed():
            return super().apply(transform, pvalueish, label)

    def run(self, test_runner_api="AUTO"):
        with quick_pickles.installed(), side_input_cache.off():
            return super().run(test_runner_api)


class _WatchedPipeline(_JobPipeline):
    """Waits for the job like `beam.Pipeline`, but cancels it when no work has started in time."""

    def __init__(self, options, watched):
        super().__init__(options=options)
        self._watched = watched

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        if exc_type or self._watched is None:
            return super().__exit__(exc_type, exc_val, exc_tb)
        try:
            self.result = self.run()
            _wait_for_first_work(self.result, *self._watched)
            self.result.wait_until_finish()
        finally:
            self._extra_context.__exit__(exc_type, exc_val, exc_tb)


def _wait_for_first_work(result, start_timeout: float, started: Callable[[], bool]) -> None:
    deadline = time.monotonic() + start_timeout
    while not started():
        if PipelineState.is_terminal(result.state):
            return  # finished or failed: wait_until_finish reports which
        if time.monotonic() > deadline:
            try:
                result.cancel()
            except Exception:  # the job may end or vanish meanwhile; the timeout is what the user needs
                pass
            raise RunnerError(
                f"runner: no worker started any work within runner.start_timeout={start_timeout:g} s; "
                "the SDK workers may be failing to start (is skewless installed in the workers' python?)"
            )
        time.sleep(_POLL_SECONDS)


def _in_process_runner(options):
    # the workers read the pipeline options from the provision info, as under the DirectRunner
    encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
    info = beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded)
    return fn_runner.FnApiRunner(provision_info=fn_runner.ExtendedProvisionInfo(info))
