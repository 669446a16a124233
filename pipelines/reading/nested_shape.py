"""A fixed shape's rows given nested (JSON, Parquet lists of lists) must be nested as the shape is.

`flat_values` reads a nested row's values row-major and row_checks counts only their total, so `[[1, 2, 3], [4]]`
would pass for shape [2, 2] as [[1, 2], [3, 4]]: a row whose lists do not have the shape's lengths is quarantined
here instead. A flat row (one list of all the values) has no nesting to check: its count is row_checks'.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _is_list(data_type: pa.DataType) -> bool:
    return pa.types.is_list(data_type) or pa.types.is_large_list(data_type) or pa.types.is_fixed_size_list(data_type)


def nesting_problems(column: pa.Array, shape: tuple[int, ...]) -> dict[int, str]:
    """Row -> why its nested lists do not fit `shape`: a list at depth j must hold dims[j] items, the innermost
    the values of the remaining dims (a row nested deeper than the shape has dims never fits). Only rows of the
    shape's count of items: another count is row_checks' to name."""
    if not (_is_list(column.type) and _is_list(column.type.value_type)):
        return {}  # single values or one flat list per row: counted against the shape by row_checks
    dims = list(shape)
    wrong: dict[int, str] = {}
    rows = np.flatnonzero(~column.is_null().to_numpy(zero_copy_only=False))  # a missing row: row_checks says so
    column = column.filter(column.is_valid())
    first_rows = rows
    depth = 0
    while _is_list(column.type):
        innermost = not _is_list(column.type.value_type)
        lengths = pc.fill_null(pc.list_value_length(column), -1).to_numpy(zero_copy_only=False)
        if depth >= len(dims):
            expected = None  # deeper than the shape
        else:
            expected = math.prod(dims[depth:]) if innermost else dims[depth]
        for row, length in zip(rows[lengths != expected], lengths[lengths != expected]):
            wrong.setdefault(int(row), f"a list at depth {depth} holds {max(int(length), 0)} items where shape "
                                       f"{dims} has {expected if expected is not None else 'no list'}")
        rows = np.repeat(rows, np.maximum(lengths, 0))
        column = pc.list_flatten(column)
        depth += 1
    # a row of another count of values is named by row_checks' count, as in a flat format (CSV): one reason
    counts = np.bincount(rows, minlength=int(first_rows.max()) + 1 if len(first_rows) else 0)
    size = math.prod(dims)
    return {row: detail for row, detail in wrong.items() if counts[row] == size}


def value_nesting_problem(value: list, shape: tuple[int, ...]) -> str | None:
    """Why one row's nested value (a JSON list) does not fit `shape`, or None: `nesting_problems` of it alone."""
    try:
        column = pa.array([value])
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return f"lists nested unevenly where shape {list(shape)} has lists of lists alike"
    return nesting_problems(column, shape).get(0)
