"""Applying the written tf.Transform graph to one work unit and writing its shards.

One DoFn call per unit: read its rows in chunks, put bad rows in quarantine, run the graph on each
chunk as one batch, give every row its split from its key, encode to tf.train.Example or SequenceExample
(deterministically) and append to the unit's shard of that split. Reading the next chunk (`read_ahead`) and
gzip (each shard writer's thread) overlap with the graph and the encoder on threads of their own, each taking
its work in order, so the bytes are those of running everything on one thread (`overlap_stages=False`).
Memory holds a fixed number of chunks, whatever the data size.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field

import apache_beam as beam
import numpy as np
import pyarrow as pa
import tensorflow as tf
from apache_beam.io.filesystems import FileSystems

from skewless.errors import InputError
from skewless.output_formats import DEFAULT_FORMAT, output_format
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.reading.parsed_units import read_kept, stream_path
from skewless.pipelines.write.distinct_values import DistinctFeed
from skewless.pipelines.write.example_encoder import Records
from skewless.pipelines.write.loaded_graph import transform_output
from skewless.pipelines.output.progress import RowCounter, counted
from skewless.pipelines.reading.read_ahead import read_ahead
from skewless.pipelines.write.shards import ShardWriter
from skewless.pipelines.reading.sources import RowReader, WorkUnit
from skewless.pipelines.reading.split_rule import split_of
from skewless.pipelines.runner.bundle_threads import ThreadedBundle
from skewless.pipelines.runner.element_stop import Stopped
from skewless.pipelines.runner.freed_memory import return_freed_memory
from skewless.pipelines.write.unit_summary import Moment, UnitClock, UnitSummary
from skewless.run_directory import DATA_DIR, QUARANTINE_DIR, progress_unit, quarantine_name, shard_name
from skewless.run_summary import Shard
from skewless.safe_names import vocabulary_filename


# Rows run through the graph and the encoder at a time. A chunk is the reader's (ROW_CHUNK rows; a kept stream
# holds it in batches of this size: unit_stream.STREAM_BATCH_ROWS) and the analysis must keep it whole (its sums
# depend on the grouping), but each row's transformed bytes do not: the graph maps rows one by one (it serves
# single examples too) and the gzip stream does not depend on how its input is cut. The graph's tensors and the
# encoded rows of a whole chunk took about 240 MB at its peak (1M census rows); a slice of 16,384 rows keeps that
# to a quarter.
TRANSFORM_BATCH_ROWS = 16_384


def tensors_to_record_batch(tensors: dict) -> pa.RecordBatch:
    """Transformed tensors (dense, sparse or ragged, first axis = rows) -> a RecordBatch of list columns.

    A (batch, steps, values) ragged tensor, a transformed feature list, is a list<list> column.
    """
    names, arrays = [], []
    for name in sorted(tensors):
        tensor = tensors[name]
        if isinstance(tensor, tf.SparseTensor):
            tensor = tf.RaggedTensor.from_sparse(tensor)
        steps = None  # a feature list's step offsets per row
        if isinstance(tensor, tf.RaggedTensor):
            if tensor.ragged_rank > 2:
                raise ValueError(f"transformed feature {name} is nested deeper than steps of values per row")
            values = tensor.flat_values.numpy()
            offsets = tensor.nested_row_splits[-1].numpy()
            if tensor.ragged_rank == 2:
                steps = tensor.nested_row_splits[0].numpy()
        else:
            array = tensor.numpy()
            rows = array.shape[0]
            values = array.reshape(rows, -1).reshape(-1) if array.ndim > 1 else array
            width = values.size // rows if rows else 1
            offsets = np.arange(rows + 1, dtype=np.int64) * width
        if values.dtype == object:
            flat = pa.array(values.tolist(), pa.binary())
        else:
            flat = pa.array(values)
        array = pa.LargeListArray.from_arrays(pa.array(offsets.astype(np.int64)), flat)
        if steps is not None:
            array = pa.LargeListArray.from_arrays(pa.array(steps.astype(np.int64)), array)
        arrays.append(array)
        names.append(name)
    return pa.RecordBatch.from_arrays(arrays, names)


def refuse_nonfinite(tensors: dict) -> None:
    """Fails naming the first transformed feature holding a NaN or an infinity. The reader quarantines such raw
    values and every value a transform refuses (log: -1 and below), so one here is the transform's float32
    arithmetic overflowing on the data (scale_0_1 of values spanning -3e38..3e38: max - min is inf); no config
    asks for one, and a row of it is never written (docs/values.md)."""
    for name in sorted(tensors):
        tensor = tensors[name]
        values = tensor.values if isinstance(tensor, tf.SparseTensor) else (
            tensor.flat_values if isinstance(tensor, tf.RaggedTensor) else tensor)
        if not values.dtype.is_floating:
            continue
        values = values.numpy()
        bad = ~np.isfinite(values)
        if bad.any():
            raise InputError(
                f"transformed feature {name!r}: its transform gives {values[bad][0]} for a row (float32 overflowed "
                "on this data's range); clip the feature's values (`clip: [low, high]`) or transform it otherwise; "
                "nothing was written")


def _oov_rows(ids, vocabulary_size: int, unseen_id: int | None = None) -> int:
    """Rows with a value the vocabulary lacks: an id past the vocabulary (in an OOV bucket) or, without OOV
    buckets, `unseen_id` (the vocabulary's `unseen_id`). `ids` is dense (a padded list: (batch, n)), or sparse
    for a list column, or the ids encoded (skewless/transforms/encoded.py)."""
    def unseen(values):
        found = values >= vocabulary_size
        return found if unseen_id is None else found | (values == unseen_id)

    if isinstance(ids, tf.SparseTensor):
        rows = ids.indices[:, 0].numpy()[unseen(ids.values.numpy())]
        return len(np.unique(rows))
    if isinstance(ids, tf.RaggedTensor):  # a feature list: (batch, steps, ids)
        values = ids.merge_dims(1, 2)
        rows = values.value_rowids().numpy()[unseen(values.flat_values.numpy())]
        return len(np.unique(rows))
    columns = ids.numpy()
    if ids.dtype.is_floating:  # encoded (output: one_hot | multi_hot | count): column i is id i
        found = columns[:, vocabulary_size:].any(axis=1)
        # a negative unseen id has no column: its one_hot row is all zeros
        return int(np.count_nonzero(found if unseen_id is None else found | ~columns.any(axis=1)))
    return int(np.count_nonzero(unseen(columns.reshape(len(columns), -1)).any(axis=1)))


class ChunkTransformer:
    """The graph applied to raw tables and encoded: the one code path of the job and of `skewless verify`."""

    def __init__(self, graph_dir: str, columns: list[RawColumn], format_name: str = DEFAULT_FORMAT,
                 row_wise: dict[str, tuple[str, ...]] | None = None):
        self.columns = columns
        self._format = output_format(format_name)
        self.output = transform_output(graph_dir)
        self._transformed_spec = self.output.transformed_feature_spec()
        # `row_wise` columns (distinct_values.row_wise_columns) go through the graph once per distinct value
        self._feed = DistinctFeed(self.output, columns, row_wise or {})
        # the first call builds tf.Transform's Keras layer, once: one thread at a time until then (the transform pass
        # runs units on several threads)
        self._first_call = threading.Lock()
        self._loaded = False

    def transform(self, table: pa.Table) -> dict:
        """Raw rows (typed columns, nulls where missing) -> transformed tensors, one row each."""
        if not self._loaded:
            with self._first_call:
                transformed = self._feed.transform(table)
                self._loaded = True
                return transformed
        return self._feed.transform(table)

    def encode(self, batch: pa.RecordBatch) -> Records:
        """Transformed rows (`tensors_to_record_batch`) -> serialized records of the run's `output.format`
        (tf.train.Examples by default), the same bytes every run."""
        return self._format.encode(batch, self._transformed_spec)


class TransformTablesFn(beam.DoFn):
    """Raw tables -> their rows transformed and encoded as the job encodes them (`skewless verify`'s batch path)."""

    def __init__(self, graph_dir: str, columns: list[RawColumn], format_name: str):
        self._graph_dir = graph_dir
        self._columns = columns
        self._format_name = format_name
        self._transformer = None

    def setup(self):
        self._transformer = ChunkTransformer(self._graph_dir, self._columns, self._format_name)

    def process(self, table: pa.Table):
        transformed = tensors_to_record_batch(self._transformer.transform(table))
        yield from self._transformer.encode(transformed).to_list()


@dataclass(frozen=True)
class UnitWriteSpec:
    """What every work unit of a run is transformed and written with."""

    reader: RowReader  # the input's reader; its columns are the raw columns the graph takes
    graph_dir: str  # the tf.Transform graph the analysis pass wrote
    staging_dir: str  # the run's staging directory: shards, quarantine and progress go under it
    splits: dict[str, float]  # split name -> its fraction of the rows
    compression: str  # of the shards
    gzip_level: int  # deflate's level where they are gzip
    unit_count: int  # for the shard and quarantine file names (`-of-N`)
    vocabulary_features: list[str]  # features whose out-of-vocabulary rows are counted
    # the id a value the vocabulary lacks gets without OOV buckets, where the rows tell it apart (`unseen_id`)
    unseen_ids: dict[str, int] = field(default_factory=dict)
    output_format: str = DEFAULT_FORMAT
    # scalar string columns fed to the graph by distinct value, with their outputs (distinct_values.py)
    row_wise: dict[str, tuple[str, ...]] = field(default_factory=dict)
    parsed_dir: str | None = None  # where the analysis pass kept the units' parsed chunks, if it did
    categorical_features: frozenset[str] = frozenset()  # int features whose statistics count values (vocabulary, hash)
    overlap_stages: bool = True  # read ahead and gzip on threads of their own (the same bytes)


class TransformUnitFn(ThreadedBundle):
    """Transforms and writes one work unit; yields its summary (rows per split, shards, quarantine). A bundle's
    units run on all cores at once (`ThreadedBundle`; one at a time without `overlap_stages`): each writes its own
    shards, so their bytes are the same."""

    def __init__(self, spec: UnitWriteSpec):
        super().__init__(threads=None if spec.overlap_stages else 1)
        self._spec = spec
        self._transformer = None
        self._vocabulary_sizes = None

    def setup(self):
        # the graph exists by now: the job gives `process` the analysis pass's output as a side input
        # (`graph_ready`), so no runner starts this stage, nor sets up its DoFns, before the graph is written
        spec = self._spec
        self._transformer = ChunkTransformer(spec.graph_dir, spec.reader.columns, spec.output_format, spec.row_wise)
        self._vocabulary_sizes = {
            name: self._transformer.output.vocabulary_size_by_name(vocabulary_filename(name))
            for name in spec.vocabulary_features
        }

    def start_bundle(self):
        return_freed_memory()  # what the analysis freed: the units' chunks take other sizes, on other threads
        super().start_bundle()

    def process(self, unit: WorkUnit, graph_ready=None):
        yield from super().process(unit)

    def run_element(self, unit: WorkUnit, stop: threading.Event) -> UnitSummary:
        started = unit_clock()
        threaded = self._spec.overlap_stages
        writers = self._open_writers(unit)
        quarantine: list[dict] = []
        read = unlabeled = 0
        oov = dict.fromkeys(self._vocabulary_sizes, 0)
        try:
            counter = RowCounter(self._spec.staging_dir, "transform", progress_unit(unit.index))
            chunks = read_ahead(self._chunks(unit)) if threaded else self._chunks(unit)
            for chunk in counted(chunks, counter):
                if stop.is_set():
                    raise Stopped(f"unit {unit.index} stopped")
                read += chunk.rows_read
                unlabeled += chunk.unlabeled
                quarantine.extend(row.to_json() for row in chunk.bad)
                if chunk.table.num_rows:
                    self._write_chunk(chunk, writers, oov)
        except BaseException:
            for writer in writers.values():
                writer.abort()
            raise
        for writer in writers.values():
            writer.close()
        if quarantine:
            write_quarantine(self._spec.staging_dir, unit.index, self._spec.unit_count, quarantine)
        return self._summary(unit, read, unlabeled, quarantine, writers, oov,
                             UnitClock(started=started, finished=unit_clock()))

    def _open_writers(self, unit: WorkUnit) -> dict[str, ShardWriter]:
        spec = self._spec
        return {
            split: ShardWriter(
                FileSystems.join(
                    spec.staging_dir, DATA_DIR, shard_name(split, unit.index, spec.unit_count, spec.compression)
                ),
                spec.compression,
                spec.gzip_level,
                spec.overlap_stages,
            )
            for split in spec.splits
        }

    def _write_chunk(self, chunk, writers: dict[str, ShardWriter], oov: dict[str, int]) -> None:
        """Transforms one chunk `TRANSFORM_BATCH_ROWS` rows at a time, counts its out-of-vocabulary rows and
        appends each row to its split's shard (each split's raw statistics come from the rows in input order:
        statistics/in_input_order.py)."""
        split_index = split_of(chunk.keys, list(self._spec.splits.values()))
        for start in range(0, chunk.table.num_rows, TRANSFORM_BATCH_ROWS):
            stop = start + TRANSFORM_BATCH_ROWS
            self._write_rows(chunk.table.slice(start, TRANSFORM_BATCH_ROWS), split_index[start:stop], writers, oov)

    def _write_rows(self, table: pa.Table, split_index: np.ndarray, writers: dict[str, ShardWriter],
                    oov: dict[str, int]) -> None:
        transformed = self._transformer.transform(table)
        refuse_nonfinite(transformed)
        for name, size in self._vocabulary_sizes.items():
            oov[name] += _oov_rows(transformed[name], size, self._spec.unseen_ids.get(name))
        batch = tensors_to_record_batch(transformed)
        for index, split in enumerate(self._spec.splits):
            rows = np.flatnonzero(split_index == index)
            if len(rows) == batch.num_rows:
                writers[split].write_records(self._transformer.encode(batch))
            elif len(rows):
                writers[split].write_records(self._transformer.encode(batch.take(pa.array(rows))))

    def _summary(self, unit: WorkUnit, read: int, unlabeled: int, quarantine: list[dict], writers: dict, oov: dict,
                 clock: UnitClock) -> UnitSummary:
        return UnitSummary(
            unit=unit.index,
            read=read,
            unlabeled=unlabeled,
            quarantined=len(quarantine),
            reasons=[f"{row['source']}:{row['line']}: {row['reason']}" for row in quarantine[:20]],
            shards={
                split: Shard(path=os.path.relpath(w.path, self._spec.staging_dir), rows=w.records, bytes=w.bytes)
                for split, w in writers.items()
            },
            oov=oov,
            clock=clock,
        )

    def _chunks(self, unit: WorkUnit):
        """The unit's chunks as the analysis pass kept them, or read from the input if it kept none."""
        if self._spec.parsed_dir is not None:
            chunks = read_kept(stream_path(self._spec.parsed_dir, unit.index))
            if chunks is not None:
                return chunks
        return self._spec.reader.read(unit)


def unit_clock() -> Moment:
    """When, in wall and in this process's CPU seconds, and in which process: what
    `assemble.summary.transform_pass_seconds` reads from the units' summaries."""
    return Moment(wall=time.time(), cpu=time.process_time(), pid=os.getpid())


def write_quarantine(staging_dir: str, index: int, unit_count: int, rows: list[dict]) -> None:
    """Unit `index`'s bad rows (`BadRow.to_json()`), one JSON object a line, under quarantine/."""
    path = FileSystems.join(staging_dir, QUARANTINE_DIR, quarantine_name(index, unit_count))
    with FileSystems.create(path) as handle:
        handle.write("".join(json.dumps(row) + "\n" for row in rows).encode())
