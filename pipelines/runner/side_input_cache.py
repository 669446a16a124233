"""The in-process runner's worker without Beam's state cache: side inputs are read from the runner's memory.

Beam's embedded worker keeps side inputs (and user state) in a 100 MB cache across bundles
(`worker_handlers.STATE_CACHE_SIZE_MB`), and weighs each value it caches by walking its whole object graph
(`statecache.get_deep_size`, objsize): ~34 walks in a warm 1,000-row run, through tf.Transform's analyzer outputs
and the module globals they reach, ~0.1 s of it. In this process the runner's state is memory already, a bundle
keeps the side inputs it read for its own elements (`StateBackedSideInputMap`), and the job holds no user state:
without the cache, a warm 1,000-row `run()` took 1.96-2.03 s instead of 2.12-2.13 (medians of 5, bench_warm.py,
idle 2-core machine, 2026-11-28). `off()` sets the size to 0 for the worker a pipeline run creates in the block.
"""

from __future__ import annotations

from apache_beam.runners.portability.fn_api_runner import worker_handlers

from skewless.pipelines.runner.shared_patch import SharedPatch

_PATCH = SharedPatch([(worker_handlers, "STATE_CACHE_SIZE_MB", 0)])


def off():
    """The in-process workers created while the block runs cache no state (nested blocks and threads share one
    installation)."""
    return _PATCH.installed()
