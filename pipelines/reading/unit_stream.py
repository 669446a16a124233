"""A work unit's parsed chunks as an Arrow IPC stream: the form the analysis keeps them in for the transform pass
(`parsed_units`) and the parse-ahead process writes them in (`parse_ahead`).

Only pyarrow and the chunk types: the parse-ahead process imports neither Beam nor TensorFlow.
"""

from __future__ import annotations

import json
from typing import BinaryIO, Iterator

import numpy as np
import pyarrow as pa

from skewless.pipelines.reading.sources import BadRow, Chunk

_KEYS = "__skewless_split_key"
# A chunk is written as batches of this many rows: the transform pass reads a batch at a time, up to three per
# unit in flight (read ahead, queued, transformed), so batches of the transform pass's slice
# (write/transform.TRANSFORM_BATCH_ROWS) rather than of whole 65,536-row chunks: at 1M census rows the peak was
# 30-50 MiB lower (2 units at once, 2026-11-29). The analysis regroups them into its chunks (`in_input_order`).
STREAM_BATCH_ROWS = 16_384
_BAD = b"skewless.bad_rows"
_UNLABELED = b"skewless.unlabeled_rows"


def written(chunks: Iterator[Chunk], handle: BinaryIO) -> Iterator[Chunk]:
    """Passes `chunks` through, writing them to `handle` as one stream, closed once the last went through."""
    writer = None
    for chunk in chunks:
        keys = np.asarray(chunk.keys, np.uint64)
        # the chunk's bad and unlabeled rows go with its first batch, as `regrouped` places them
        metadata = {_BAD: json.dumps([row.to_json() for row in chunk.bad]), _UNLABELED: str(chunk.unlabeled)}
        for start in range(0, max(chunk.table.num_rows, 1), STREAM_BATCH_ROWS):
            # a batch's rows made contiguous at a time, not the chunk's: a quarter of the copy in memory at once
            batch = _as_batch(chunk.table.slice(start, STREAM_BATCH_ROWS), keys[start:start + STREAM_BATCH_ROWS])
            if writer is None:
                writer = pa.ipc.new_stream(handle, batch.schema)
            writer.write_batch(batch, custom_metadata=metadata)
            metadata = {_BAD: "[]", _UNLABELED: "0"}
        yield chunk
    if writer is None:
        # a unit without rows (its byte range lies inside one long line) still has a complete stream
        writer = pa.ipc.new_stream(handle, pa.schema([]))
    writer.close()


def read(handle: BinaryIO) -> Iterator[Chunk]:
    """The chunks `written` wrote to `handle`, a batch at a time."""
    reader = pa.ipc.open_stream(handle)
    while True:
        try:
            batch, metadata = reader.read_next_batch_with_custom_metadata()
        except StopIteration:
            return
        keys = batch.column(_KEYS).to_numpy()
        table = pa.Table.from_batches([batch.drop_columns([_KEYS])])
        bad = [BadRow(**row) for row in json.loads(metadata[_BAD])]
        yield Chunk(table, keys, bad, int(metadata[_UNLABELED]))


def _as_batch(table: pa.Table, keys: np.ndarray) -> pa.RecordBatch:
    columns = [column.combine_chunks() for column in table.columns]
    return pa.RecordBatch.from_arrays([*columns, pa.array(keys)], [*table.column_names, _KEYS])
