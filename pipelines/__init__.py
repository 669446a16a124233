"""Beam jobs (sources, analyze/transform with tf.Transform, sinks) and the tf.data readers of their output.

`run` imports Apache Beam; the readers do not, so a training container can use them without Beam.
Names are imported on first use for that reason.
"""

from skewless.lazy_imports import lazy_exports
from skewless.runtime import import_tensorflow_quietly

_EXPORTS = {
    "run": "skewless.pipelines.commands.run",
    "apply": "skewless.pipelines.commands.apply",
    "ApplyResult": "skewless.pipelines.commands.apply",
    "RunResult": "skewless.pipelines.commands.run",
    "predict": "skewless.pipelines.commands.predict",
    "PredictResult": "skewless.pipelines.commands.predict",
    "make_dataset": "skewless.pipelines.tfdata.dataset",
    "make_raw_dataset": "skewless.pipelines.tfdata.raw_dataset",
    "verify": "skewless.pipelines.commands.verify",
    "VerifyResult": "skewless.pipelines.commands.verify",
}

__all__ = sorted(_EXPORTS)


# each export imports TensorFlow: without its start-up lines, as the CLI
__getattr__ = lazy_exports(__name__, _EXPORTS, before_import=import_tensorflow_quietly)
