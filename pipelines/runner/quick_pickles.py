"""Beam's pickled functions compressed with zlib at level 1 instead of bz2 at level 9, where the workers are this
process.

Beam's cloudpickle pickler compresses every function, DoFn and coder it pickles with bz2 at level 9
(`apache_beam.internal.cloudpickle_pickler.dumps`), as the pipeline is translated for the runner, and the
in-process runner decompresses each again as it builds every bundle: ~280 compressions of ~7 MB of bz2 state
each and ~320 decompressions in a 1,000-row run. zlib at level 1 gives Beam the same pickles in less time: a warm
1,000-row `run()` took 2.00-2.07 s instead of 2.20-2.28 (medians of 5, bench_warm.py), a fresh `skewless run`
5.55 s instead of 5.59 (8 paired runs; idle 2-core machine, 2026-11-28).

Only a runner whose workers are this process may see these payloads (`runners.pipeline`): workers elsewhere (a
portable job service, Flink, Spark, Dataflow, the direct runner's multi_processing mode) decompress with bz2, as
Beam ships. A payload pickled outside the block (bz2, by its "BZh" magic) still loads within it.
"""

from __future__ import annotations

import bz2
import zlib

from apache_beam.internal import cloudpickle_pickler

from skewless.pipelines.runner.shared_patch import SharedPatch

_BZ2_MAGIC = b"BZh"


class _QuickCompression:
    """What `cloudpickle_pickler` calls of the `bz2` module, with zlib level 1."""

    @staticmethod
    def compress(data: bytes, compresslevel: int = 9) -> bytes:
        return zlib.compress(data, 1)

    @staticmethod
    def decompress(data: bytes) -> bytes:
        return bz2.decompress(data) if data[:3] == _BZ2_MAGIC else zlib.decompress(data)


_PATCH = SharedPatch([(cloudpickle_pickler, "bz2", _QuickCompression)])


def installed():
    """Beam's pickles compressed with zlib level 1 while the block runs (nested blocks and threads share one
    installation); only where no other process reads them."""
    return _PATCH.installed()
