"""Beam jobs (sources, analyze/transform with tf.Transform, sinks) and the tf.data readers of their output.

`run` imports Apache Beam; the readers do not, so a training container can use them without Beam.
Names are imported on first use for that reason.
"""

from importlib import import_module

_EXPORTS = {
    "run": "skewless.pipelines.job",
    "apply": "skewless.pipelines.apply_graph",
    "ApplyResult": "skewless.pipelines.apply_graph",
    "RunResult": "skewless.pipelines.job",
    "predict": "skewless.pipelines.batch_prediction",
    "PredictResult": "skewless.pipelines.batch_prediction",
    "make_dataset": "skewless.pipelines.dataset",
    "make_raw_dataset": "skewless.pipelines.raw_dataset",
    "verify": "skewless.pipelines.verify",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'skewless.pipelines' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
