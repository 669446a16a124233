"""The ops a TensorFlow function runs: what the serving tests count."""

import tensorflow as tf
# RunMetadata of a call has no public API; the eager context reports it for the calls made while it is enabled
from tensorflow.python.eager import context


def ops_run(function, *args, **kwargs) -> list[str]:
    """The op types `function`'s first call runs after Grappler: a function's graph is instantiated, and its ops
    reported, at its first call, so `function` must not have been called before."""
    context.context().enable_run_metadata()
    try:
        function(*args, **kwargs)
        metadata = context.context().export_run_metadata()
    finally:
        context.context().disable_run_metadata()
    return [node.op for run in metadata.function_graphs for graph in run.partition_graphs for node in graph.node]
