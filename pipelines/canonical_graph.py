"""The transform graph's SavedModel, rewritten so the same job writes the same bytes on every run.

tf.Transform writes the nodes of a function in an order that varies from run to run (the graph is the
same). `canonicalize` sorts each function's nodes by name and serializes deterministically, and drops
fingerprint.pb, TensorFlow's optional telemetry hash, which changes on every write.

What this does not make equal: a graph written by another kind of process (a DirectRunner worker
process or thread, another runner's worker). TensorFlow names traced functions and their captured
inputs with counters of the process that traced them, so such a graph computes the same values under
other names (tests/test_portability.py checks the values bit for bit).
"""

from __future__ import annotations

import os


def canonicalize(saved_model_dir: str) -> None:
    from tensorflow.core.protobuf import saved_model_pb2

    model_path = os.path.join(saved_model_dir, "saved_model.pb")
    with open(model_path, "rb") as handle:
        model = saved_model_pb2.SavedModel.FromString(handle.read())
    for graph in model.meta_graphs:
        for function in graph.graph_def.library.function:
            nodes = sorted(function.node_def, key=lambda node: node.name)
            del function.node_def[:]
            function.node_def.extend(nodes)
    with open(model_path, "wb") as handle:
        handle.write(model.SerializeToString(deterministic=True))
    fingerprint = os.path.join(saved_model_dir, "fingerprint.pb")
    if os.path.exists(fingerprint):
        os.remove(fingerprint)
