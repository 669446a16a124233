"""Applying the written tf.Transform graph to one work unit and writing its shards.

One DoFn call per unit: read its rows in chunks, put bad rows in quarantine, run the graph on each
chunk as one batch, give every row its split from its key, encode to tf.train.Example with tfx_bsl and
append to the unit's shard of that split. Memory holds one chunk at a time, whatever the data size.
"""

from __future__ import annotations

import json
import os

import apache_beam as beam
import numpy as np
import pyarrow as pa

from skewless.pipelines.columns import RawColumn, arrow_schema, to_record_batch
from skewless.pipelines.preprocessing import vocabulary_filename
from skewless.pipelines.shards import ShardWriter, shard_name
from skewless.pipelines.sources import RowReader, WorkUnit


def split_of(keys: np.ndarray, fractions: list[float]) -> np.ndarray:
    """Split index per row: the top 53 bits of the row's 64-bit key as a uniform number in [0, 1)."""
    uniform = (keys >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return np.searchsorted(np.cumsum(fractions)[:-1], uniform, side="right")


def tensors_to_record_batch(tensors: dict) -> pa.RecordBatch:
    """Transformed tensors (dense, sparse or ragged, first axis = rows) -> a RecordBatch of list columns."""
    import tensorflow as tf

    names, arrays = [], []
    for name in sorted(tensors):
        tensor = tensors[name]
        if isinstance(tensor, tf.SparseTensor):
            tensor = tf.RaggedTensor.from_sparse(tensor)
        if isinstance(tensor, tf.RaggedTensor):
            values = tensor.flat_values.numpy()
            offsets = tensor.nested_row_splits[0].numpy() if tensor.ragged_rank == 1 else None
            if offsets is None:
                raise ValueError(f"transformed feature {name} is nested deeper than one list per row")
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
        arrays.append(pa.LargeListArray.from_arrays(pa.array(offsets.astype(np.int64)), flat))
        names.append(name)
    return pa.RecordBatch.from_arrays(arrays, names)


class TransformUnitFn(beam.DoFn):
    """Transforms and writes one work unit; yields its summary (rows per split, shards, quarantine)."""

    def __init__(
        self,
        reader: RowReader,
        columns: list[RawColumn],
        graph_dir: str,
        output_dir: str,
        splits: dict[str, float],
        compression: str,
        unit_count: int,
        vocabulary_features: list[str],
    ):
        self._reader = reader
        self._columns = columns
        self._graph_dir = graph_dir
        self._output_dir = output_dir
        self._split_names = list(splits)
        self._fractions = list(splits.values())
        self._compression = compression
        self._unit_count = unit_count
        self._vocabulary_features = vocabulary_features
        self._graph = None

    def _load(self):
        if self._graph is None:
            import tensorflow_transform as tft
            from tfx_bsl.coders import example_coder
            from tfx_bsl.tfxio import tensor_adapter, tensor_representation_util

            from skewless.pipelines.columns import raw_schema

            output = tft.TFTransformOutput(self._graph_dir)
            representations = tensor_representation_util.InferTensorRepresentationsFromSchema(
                raw_schema(self._columns)
            )
            adapter = tensor_adapter.TensorAdapter(
                tensor_adapter.TensorAdapterConfig(arrow_schema(self._columns), representations)
            )
            encoder = example_coder.RecordBatchToExamplesEncoder(output.transformed_metadata.schema)
            vocab_sizes = {
                name: output.vocabulary_size_by_name(vocabulary_filename(name)) for name in self._vocabulary_features
            }
            self._graph = (output, adapter, encoder, vocab_sizes)
        return self._graph

    def process(self, unit: WorkUnit, graph_ready=None):
        from apache_beam.io.filesystems import FileSystems

        output, adapter, encoder, vocab_sizes = self._load()
        writers = {
            split: ShardWriter(
                FileSystems.join(self._output_dir, "data", shard_name(split, unit.index, self._unit_count, self._compression)),
                self._compression,
            )
            for split in self._split_names
        }
        quarantine: list[dict] = []
        read = 0
        oov = {name: 0 for name in vocab_sizes}
        try:
            for chunk in self._reader.read(unit):
                read += chunk.rows_read
                quarantine.extend(row.to_json() for row in chunk.bad)
                if chunk.table.num_rows == 0:
                    continue
                batch = to_record_batch(chunk.table, self._columns)
                transformed = output.transform_raw_features(adapter.ToBatchTensors(batch, produce_eager_tensors=True))
                for name, size in vocab_sizes.items():
                    oov[name] += int(np.count_nonzero(transformed[name].numpy() >= size))
                encoded = tensors_to_record_batch(transformed)
                split_index = split_of(chunk.keys, self._fractions)
                for index, split in enumerate(self._split_names):
                    rows = np.flatnonzero(split_index == index)
                    if len(rows):
                        writers[split].write_all(encoder.encode(encoded.take(pa.array(rows))))
        except BaseException:
            for writer in writers.values():
                writer.abort()
            raise
        for writer in writers.values():
            writer.close()
        if quarantine:
            self._write_quarantine(unit.index, quarantine)
        yield {
            "unit": unit.index,
            "read": read,
            "quarantined": len(quarantine),
            "reasons": [row["reason"] for row in quarantine[:20]],
            "shards": {
                split: {"path": os.path.relpath(w.path, self._output_dir), "rows": w.records, "bytes": w.bytes}
                for split, w in writers.items()
            },
            "oov": oov,
        }

    def _write_quarantine(self, index: int, rows: list[dict]) -> None:
        from apache_beam.io.filesystems import FileSystems

        path = FileSystems.join(self._output_dir, "quarantine", f"rows-{index:05d}-of-{self._unit_count:05d}.jsonl")
        with FileSystems.create(path) as handle:
            handle.write("".join(json.dumps(row) + "\n" for row in rows).encode())
