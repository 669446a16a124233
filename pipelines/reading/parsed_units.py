"""A work unit's parsed chunks, kept by the analysis pass for the transform pass.

Reading the input is the largest part of a pass after encoding (a CSV is split, typed and judged row
by row in bulk). The analysis pass has done that for every row, so it keeps each unit's chunks — the
typed table, the split keys, the bad rows — as an Arrow IPC stream in the run's temporary folder, and
the transform pass reads them back instead of reading the input again: zero-copy buffers, no
parsing. The stream is uncompressed (written and read once, it is cheaper so) and about the size of
the decoded rows; `input.keep_parsed: false` parses three times instead (the analysis, the split statistics,
the transform pass), for disks that cannot hold it. The analysis and the split statistics read the streams back
in input order (`in_input_order`).

A unit has a stream only if the analysis read it whole and in one piece: not under the analyzer cache
(which reads a unit per file, or not at all when its analysis is cached). The transform pass reads
any unit without a complete stream from the input, so a missing stream costs time, never rows.
"""

from __future__ import annotations

import json
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems

from skewless.pipelines.reading.format import ROW_CHUNK
from skewless.pipelines.reading.read_ahead import read_ahead
from skewless.pipelines.reading.sources import BadRow, Chunk, regrouped
from skewless.run_directory import parsed_unit_name

_KEYS = "__skewless_split_key"
# A chunk is written as batches of this many rows: the transform pass reads a batch at a time, up to three per
# unit in flight (read ahead, queued, transformed), so batches of the transform pass's slice
# (write/transform.TRANSFORM_BATCH_ROWS) rather than of whole 65,536-row chunks: at 1M census rows the peak was
# 30-50 MiB lower (2 units at once, 2026-11-29). The analysis regroups them into its chunks (`in_input_order`).
STREAM_BATCH_ROWS = 16_384
_BAD = b"skewless.bad_rows"
_UNLABELED = b"skewless.unlabeled_rows"


def stream_path(folder: str, unit: int) -> str:
    return FileSystems.join(folder, parsed_unit_name(unit))


def kept(chunks: Iterator[Chunk], path: str) -> Iterator[Chunk]:
    """Passes `chunks` through, writing them to `path`; the stream is complete (renamed to `path`) only
    once the last chunk went through."""
    temp = f"{path}.partial"
    writer = None
    with FileSystems.create(temp) as handle:
        for chunk in chunks:
            batch = _as_batch(chunk)
            if writer is None:
                writer = pa.ipc.new_stream(handle, batch.schema)
            # the chunk's bad and unlabeled rows go with its first batch, as `regrouped` places them
            metadata = {_BAD: json.dumps([row.to_json() for row in chunk.bad]), _UNLABELED: str(chunk.unlabeled)}
            for start in range(0, max(batch.num_rows, 1), STREAM_BATCH_ROWS):
                writer.write_batch(batch.slice(start, STREAM_BATCH_ROWS), custom_metadata=metadata)
                metadata = {_BAD: "[]", _UNLABELED: "0"}
            yield chunk
        if writer is None:
            # a unit without rows (its byte range lies inside one long line) still has a complete stream
            writer = pa.ipc.new_stream(handle, pa.schema([]))
        writer.close()
    FileSystems.rename([temp], [path])


def read_kept(path: str) -> Iterator[Chunk] | None:
    """The chunks `kept` wrote to `path`, or None when it wrote no complete stream there."""
    if not FileSystems.exists(path):
        return None
    return _chunks(path)


def in_input_order(units: list, parsed_dir: str | None, read: Callable, overlap: bool = True) -> Iterator[Chunk]:
    """Every unit's chunks in input order, unit after unit, cut into chunks of ROW_CHUNK good rows wherever the
    units end: the same rows give the same chunks from every format and every cut into units. A unit's kept
    stream is read back where there is one (on a thread of its own with `overlap`: `runner.overlap_stages`),
    else `read(unit)` reads it from the input."""
    def unit_chunks(unit):
        stream = read_kept(stream_path(parsed_dir, unit.index)) if parsed_dir is not None else None
        if stream is None:
            return read(unit)
        return read_ahead(stream) if overlap else stream

    ordered = sorted(units, key=lambda unit: unit.index)
    yield from regrouped((chunk for unit in ordered for chunk in unit_chunks(unit)), ROW_CHUNK)


def _chunks(path: str) -> Iterator[Chunk]:
    with FileSystems.open(path) as handle:
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


def _as_batch(chunk: Chunk) -> pa.RecordBatch:
    columns = [column.combine_chunks() for column in chunk.table.columns]
    keys = pa.array(np.asarray(chunk.keys, np.uint64))
    return pa.RecordBatch.from_arrays([*columns, keys], [*chunk.table.column_names, _KEYS])
