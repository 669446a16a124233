"""The split rule, whole: which split a row goes to.

A row's key is a 64-bit hash of its typed values in the split key column (`output.split_key`), or in all its raw
columns (`row_keys`: the reader computes it for every good row, `sources.RowReader`); its split is where the top
53 bits of the key, as a uniform number in [0, 1), fall among the splits' cumulative fractions (`split_of`: the
transform pass, the split statistics, `make_raw_dataset` and `skewless verify` take it). The key depends on the
values alone, not on the input's format nor on how it was cut into units (docs/values.md, "Splits"). With one
split every row goes to it whatever its key, and the job's reader leaves the keys at zero (`RowReader.keyed`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


_KEY_SEED = 0x9E3779B97F4A7C15
_NULL_HASH = 0x5BD1E9955BD1E995


def row_keys(columns: list[pa.Array], rows: int) -> np.ndarray:
    """A 64-bit key per row from the key's columns, in order (each a flat column, or lists)."""
    key = np.full(rows, _KEY_SEED, dtype=np.uint64)
    for column in columns:
        key = _mix(key ^ _value_hashes(column))
    return key


def split_of(keys: np.ndarray, fractions: list[float]) -> np.ndarray:
    """Split index per row: the top 53 bits of the row's 64-bit key as a uniform number in [0, 1)."""
    uniform = (keys >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return np.searchsorted(np.cumsum(fractions)[:-1], uniform, side="right")


def _list_hashes(column: pa.Array) -> np.ndarray:
    """A 64-bit hash per row of a list column, of its values in order (empty and null rows hash alike)."""
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    values = pc.list_flatten(column)
    ends = np.cumsum(lengths)
    hashes = np.zeros(0, dtype=np.uint64)
    if len(values):
        positions = (np.arange(len(values)) - np.repeat(ends - lengths, lengths)).astype(np.uint64)
        hashes = _mix(_value_hashes(values) ^ positions)
    totals = np.concatenate([np.zeros(1, np.uint64), np.cumsum(hashes, dtype=np.uint64)])  # sums wrap mod 2**64
    return _mix((totals[ends] - totals[ends - lengths]) ^ lengths.astype(np.uint64))


def _value_hashes(column: pa.Array) -> np.ndarray:
    """A 64-bit hash per value (per row of a list column), the same whatever type stores the value.

    The split must not depend on the input format (docs/values.md, "Splits"): a whole number hashes as
    that int whether it is stored as an int or a float (pandas writes an int column with gaps as float64),
    other floats by their float32 value (the type the job reads them as), and text by its bytes whether it
    is string, large_string, binary or dictionary-encoded. Strings are hashed once per distinct value.
    """
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        return _list_hashes(column)
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if pa.types.is_null(column.type) or column.null_count == len(column):
        return np.full(len(column), _NULL_HASH, dtype=np.uint64)
    if pa.types.is_binary(column.type) or pa.types.is_string(column.type) or pa.types.is_large_binary(column.type) \
            or pa.types.is_large_string(column.type):
        encoded = pc.dictionary_encode(column.cast(pa.binary()))
        distinct = pd.util.hash_array(encoded.dictionary.to_numpy(zero_copy_only=False))
        indices = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
        return np.where(indices >= 0, distinct[np.maximum(indices, 0)], np.uint64(_NULL_HASH))
    if pa.types.is_floating(column.type):
        hashes = _number_hashes(pc.fill_null(column, 0).to_numpy(zero_copy_only=False))
    else:
        hashes = pd.util.hash_array(pc.fill_null(column, 0).to_numpy(zero_copy_only=False))
    if column.null_count:
        hashes = np.where(column.is_valid().to_numpy(zero_copy_only=False), hashes, np.uint64(_NULL_HASH))
    return hashes


def _number_hashes(floats: np.ndarray) -> np.ndarray:
    """Floats hashed as an int64 column holding the same numbers would be where they are whole, else as float32."""
    floats32 = floats.astype(np.float32)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(floats32) & (floats32 == np.round(floats32)) & (np.abs(floats32) < 2.0**63)
    hashes = pd.util.hash_array(floats32)
    if whole.any():
        hashes[whole] = pd.util.hash_array(floats32[whole].astype(np.int64))
    return hashes


def _mix(key: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: every bit of the key affects the top bits the split is taken from."""
    key = (key ^ (key >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    key = (key ^ (key >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return key ^ (key >> np.uint64(31))

