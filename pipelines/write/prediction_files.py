"""Prediction shards: one row per input row, its key columns then the model's outputs, as CSV, Parquet or JSON Lines.

Floats are written so that reading them back gives the model's float32 values exactly: CSV holds each
value's shortest float32 text, JSON a float64 that is exactly the float32, Parquet the float32 itself.
An output with several values per row (a softmax's probabilities) is a list in Parquet and JSON Lines,
and one column per value in CSV, `NAME_0`, `NAME_1`, ...
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

KEY_TYPES = {"int": pa.int64(), "float": pa.float32(), "bytes": pa.string()}


@dataclass(frozen=True)
class OutputColumn:
    """One model output of the signature: its name, NumPy dtype name and values per row (0: a scalar)."""

    name: str
    dtype: str
    width: int


def encode_shard(rows: list, keys: list[tuple[str, str]], outputs: list[OutputColumn], output_format: str) -> bytes:
    """`rows` (key values, {output: NumPy value}) as one file's bytes of `output_format` (one of
    `skewless.output_formats.PREDICTION_FORMATS`); `keys` are (column, kind) pairs."""
    return ENCODERS[output_format](rows, keys, outputs)


def _key_value(value):
    return value.decode("utf-8", errors="backslashreplace") if isinstance(value, bytes) else value


def _as_python(value: np.ndarray):
    """A value JSON and Arrow take: float32 -> the float64 equal to it, bytes -> text."""
    if value.dtype.kind == "S" or value.dtype == object:
        return [_key_value(v) for v in value.tolist()] if value.ndim else _key_value(value.item())
    return value.tolist()


def _shaped(predicted: dict, output: OutputColumn) -> np.ndarray:
    """An output's value for one row: a scalar, or a flat list of `output.width` values."""
    return np.reshape(predicted[output.name], () if output.width == 0 else (-1,))


def _json_row(row, keys, outputs) -> dict:
    key_values, predicted = row
    record = {name: _key_value(value) for (name, _), value in zip(keys, key_values)}
    record.update({output.name: _as_python(_shaped(predicted, output)) for output in outputs})
    return record


def _jsonl(rows, keys, outputs) -> bytes:
    return "".join(json.dumps(_json_row(row, keys, outputs)) + "\n" for row in rows).encode()


def _csv_text(value) -> str:
    # str of a NumPy float is the shortest text that reads back as the same value of its own width
    return "" if value is None else str(_key_value(value))


def _csv(rows, keys, outputs) -> bytes:
    header = [name for name, _ in keys]
    for output in outputs:
        header += [output.name] if output.width == 0 else [f"{output.name}_{i}" for i in range(output.width)]
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    for key_values, predicted in rows:
        line = [_csv_text(value) for value in key_values]
        for output in outputs:
            line += [_csv_text(value) for value in np.reshape(_shaped(predicted, output), -1)]
        writer.writerow(line)
    return text.getvalue().encode()


def _parquet(rows, keys, outputs) -> bytes:
    arrays, names = [], []
    for position, (name, kind) in enumerate(keys):
        arrays.append(pa.array([_key_value(row[0][position]) for row in rows], KEY_TYPES[kind]))
        names.append(name)
    for output in outputs:
        kind = pa.string() if output.dtype in ("object", "bytes") else pa.from_numpy_dtype(np.dtype(output.dtype))
        values = [_as_python(_shaped(row[1], output)) for row in rows]
        arrays.append(pa.array(values, pa.list_(kind) if output.width else kind))
        names.append(output.name)
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, names), sink)
    return sink.getvalue()


# each of `skewless.output_formats.PREDICTION_FORMATS`'s encoder
ENCODERS = {"csv": _csv, "parquet": _parquet, "jsonl": _jsonl}
