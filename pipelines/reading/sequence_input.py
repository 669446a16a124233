"""Feature lists of `tf.train.SequenceExample` input, as the reader judges and types them.

tfx_bsl's decoder gives a record's context features as list columns and its feature lists as
list<list> children (steps of values) of one struct column. `lift_feature_lists` makes each feature
list a column of its own, named like the feature, and finds the records that hold a feature in the
other place than the config declares (a feature list among the context features, or the reverse): they
go to quarantine with that reason, never read as "missing" silently.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skewless.pipelines.reading.columns import RawColumn
from skewless.schemas.row_checks import RowProblem
from skewless.sequence_specs import SEQUENCE_COLUMN


def lift_feature_lists(batch: pa.RecordBatch, columns: list[RawColumn]) -> tuple[pa.RecordBatch, dict]:
    """(the batch with each declared feature list as a top-level list<list> column, row -> misplacement problems)."""
    struct = batch.column(SEQUENCE_COLUMN) if SEQUENCE_COLUMN in batch.schema.names else None
    listed = {field.name: index for index, field in enumerate(struct.type)} if struct is not None else {}
    children = struct.flatten() if struct is not None else []  # with the struct's own nulls and offset applied
    problems: dict[int, list[RowProblem]] = {}

    def flag(column: pa.Array, detail: str, name: str) -> None:
        for row in np.flatnonzero(column.is_valid().to_numpy(zero_copy_only=False)):
            problems.setdefault(int(row), []).append(RowProblem("misplaced", name, detail))

    arrays, names = [], []
    for name in batch.schema.names:
        if name == SEQUENCE_COLUMN:
            continue
        column = batch.column(name)
        if any(c.name == name and c.sequence for c in columns):
            flag(column, "is a context feature in this record; the config declares a feature list (sequence: true)",
                 name)
            continue
        arrays.append(column)
        names.append(name)
    for column in columns:
        if column.name not in listed:
            continue
        steps = children[listed[column.name]]
        if column.sequence:
            arrays.append(steps)
            names.append(column.name)
        else:
            flag(steps, "is a feature list in this record; the config declares a context feature", column.name)
    return pa.RecordBatch.from_arrays(arrays, names), problems


def values_per_row(column: pa.Array) -> pa.Array:
    """A list<list<T>> column -> list<T>: each row's values of all its steps, in order (for the row checks)."""
    if not _is_list(column.type):
        return column  # absent from every record: no values to judge
    steps = pc.list_flatten(column)
    step_lengths = pc.fill_null(pc.list_value_length(steps), 0).to_numpy(zero_copy_only=False)
    rows = pc.list_parent_indices(column).to_numpy(zero_copy_only=False)
    counts = np.bincount(rows, weights=step_lengths, minlength=len(column)).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pc.list_flatten(steps))


def _is_list(arrow_type: pa.DataType) -> bool:
    return pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
