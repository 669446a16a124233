"""The lookup tables tf.Transform makes in the process's eager context while it traces, destroyed when the job ends.

Where a vocabulary's file is known (the final trace of the `preprocessing_fn`, and the trace that computes the
transformed schema's domains), tf.Transform lifts the table out of the traced function into the eager context
(`tf_utils.construct_and_lookup_table`, under `tf.init_scope`). Such a table is named after its file's path and
lives as long as the process: a later table of that name is that same table, its first contents kept. A rerun
in one process to the same output folder names its vocabularies by the same temporary paths, so it read the
first run's: after the input went from 2 cities to 3, transformed_metadata/schema.pbtxt kept `int_domain max: 2`
(issue 41 item 13). Every table lifted out during a job is destroyed when the job ends, so the next job reads
its own files (a SavedModel loaded later names its tables apart: TensorFlow suffixes their names at load); but
those of an analysis graph kept in memory for a rerun (`keep_alive`), which read only tf.Transform's placeholder
files, uniquely named, and are destroyed when it is dropped (pipelines/analyze/saved_model_reuse.py).
"""

from __future__ import annotations

import threading

import tensorflow as tf
from tensorflow.python.ops import gen_resource_variable_ops
from tensorflow_transform import tf_utils

from skewless.pipelines.runner.shared_patch import SharedPatch

_lock = threading.Lock()
_lifted: list = []  # the tables made in the eager context since the first job of those running began


def _construct_and_lookup_table(construct_table_callable, asset_filepath, x):
    def construct(path):
        table = construct_table_callable(path)
        if tf.executing_eagerly():  # lifted out by tf.init_scope: a table of the process, not of the trace
            with _lock:
                _lifted.append(table)
        return table

    return _PATCH.original(tf_utils, "construct_and_lookup_table")(construct, asset_filepath, x)


def keep_alive(tables) -> None:
    """Leaves those of `tables` made during the running jobs out of the tables destroyed when they end: whoever
    keeps them destroys them (`destroy`)."""
    kept = {id(table) for table in tables}
    with _lock:
        _lifted[:] = [table for table in _lifted if id(table) not in kept]


def _destroy_lifted() -> None:
    with _lock:
        tables = list(_lifted)
        _lifted.clear()
    destroy(tables)


def destroy(tables) -> None:
    """Destroys the eager tables `tables` (a table of the same name made later is then a new one)."""
    for table in tables:
        # a StaticVocabularyTable (OOV buckets) holds its file's table inside
        for handle in {id(t.resource_handle): t.resource_handle for t in (table, getattr(table, "_table", None))
                       if t is not None}.values():
            gen_resource_variable_ops.destroy_resource_op(handle, ignore_lookup_error=True)


_PATCH = SharedPatch([(tf_utils, "construct_and_lookup_table", _construct_and_lookup_table)],
                     on_restore=_destroy_lifted)


def dropped_after():
    """tf.Transform's eager tables made while the block runs are destroyed when the last such block ends."""
    return _PATCH.installed()
