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

from typing import Callable, Iterator

from apache_beam.io.filesystems import FileSystems

from skewless.pipelines.reading import unit_stream
from skewless.pipelines.reading.format import ROW_CHUNK
from skewless.pipelines.reading.read_ahead import read_ahead
from skewless.pipelines.reading.sources import Chunk, regrouped
from skewless.run_directory import parsed_unit_name


def stream_path(folder: str, unit: int) -> str:
    return FileSystems.join(folder, parsed_unit_name(unit))


def kept(chunks: Iterator[Chunk], path: str) -> Iterator[Chunk]:
    """Passes `chunks` through, writing them to `path`; the stream is complete (renamed to `path`) only
    once the last chunk went through."""
    temp = f"{path}.partial"
    with FileSystems.create(temp) as handle:
        yield from unit_stream.written(chunks, handle)
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
        yield from unit_stream.read(handle)
