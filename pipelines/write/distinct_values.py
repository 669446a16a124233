"""Scalar string columns through the transform graph once per distinct value (issue 40).

A chunk's string column holds few distinct values (census: 2 to 42 among 16,384 rows), and turning every row's
string into a tensor element and looking it up was most of the job's transform call. For a column whose every
output is row-wise (a function of the row's own value alone, bit for bit wherever the row sits in a batch:
`Transform.row_wise`), the graph is given the column's distinct values once (`dictionary_encode`, in order of
first occurrence, a missing value as one more), the other columns all rows, in one call: each input of the graph
has a batch size of its own, and no op of the graph reads such a column with another input (checked on the
graph's own ops: `graph_checked`). Each of the column's outputs is then taken back by row (`tf.gather`): the
tensors the graph gives over all rows, so the written bytes are the same.

Row-wise (each transform kind's `row_wise`): vocabulary (ids, one_hot), hash (ids, one_hot), text_vocabulary's ids
and bag_of_words, passthrough, datetime_parts, a missing indicator, the label's map or vocabulary. Not, so fed
as before: tfidf (a float log of each token's document frequency, whose bits may depend on the row's place in
the batch), image, lists, feature lists and fixed shapes (a row holds several values), a column another feature
reads (a cross's columns, a per-key statistic's key, vocabulary weights), a column whose graph ops read another
input too (a vocabulary ordered by the label: its analyzer's assert compares their row counts), number columns,
and every column of a config with a `preprocessing_fn` hook (its code may combine inputs in ways no output shows).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import tensorflow as tf
from tfx_bsl.tfxio import tensor_adapter

from skewless.pipelines.reading.columns import RawColumn, tensor_adapter_config, to_record_batch


def row_wise_columns(config, columns: list[RawColumn]) -> dict[str, tuple[str, ...]]:
    """{raw column: the outputs computed from it} for each scalar string column of `columns` whose every output
    is row-wise by its transform kind (`config`: the JobConfig); the graph check is `DistinctFeed`'s."""
    if config.preprocessing_fn is not None:
        return {}
    read_by_others = {column for name, feature in config.features.items()
                      for column in feature.transform_kind.reads(feature)}
    outputs: dict[str, list[str]] = {}
    refused = set(read_by_others)
    for name, feature in config.features.items():
        if feature.transform_kind.new_output:
            continue
        column = feature.raw_column(name)
        if feature.transform_kind.row_wise(feature):
            outputs.setdefault(column, []).extend(feature.outputs(name))
        else:
            refused.add(column)
    if config.label is not None and (config.label.map is not None or config.label.transform in (None, "vocabulary")):
        outputs.setdefault(config.label.column, []).append(config.label.column)
    scalar_strings = {column.name for column in columns if column.kind == "bytes" and not column.is_list
                      and not column.sequence and column.shape is None}
    return {column: tuple(names) for column, names in outputs.items()
            if column in scalar_strings and column not in refused}


class DistinctFeed:
    """The graph of `output` (a TFTransformOutput) over raw tables, `row_wise` columns (`row_wise_columns`) fed by
    distinct value: what `ChunkTransformer.transform` gives, with fewer elements converted and looked up."""

    def __init__(self, output, columns: list[RawColumn], row_wise: dict[str, tuple[str, ...]]):
        self._output = output
        distinct = graph_checked(output, row_wise)
        self._distinct = [column for column in columns if column.name in distinct]
        self._rest = [column for column in columns if column.name not in distinct]
        self._outputs = distinct
        self._rest_adapter = tensor_adapter.TensorAdapter(tensor_adapter_config(self._rest))
        self._adapters = {column.name: tensor_adapter.TensorAdapter(tensor_adapter_config([column]))
                          for column in self._distinct}

    @property
    def columns(self) -> list[str]:
        """The columns fed by distinct value (those `row_wise` named that the graph confirms)."""
        return [column.name for column in self._distinct]

    def transform(self, table: pa.Table) -> dict:
        """Raw rows (typed columns, nulls where missing) -> transformed tensors, one row each."""
        features = self._rest_adapter.ToBatchTensors(to_record_batch(table, self._rest), produce_eager_tensors=True)
        rows = {}
        for column in self._distinct:
            encoded = table.column(column.name).combine_chunks().dictionary_encode()
            values = encoded.dictionary
            if encoded.null_count:  # a missing value is one more distinct value, the last
                values = pa.concat_arrays([values, pa.nulls(1, values.type)])
            rows[column.name] = tf.constant(pc.fill_null(encoded.indices, len(encoded.dictionary)).to_numpy())
            features.update(self._adapters[column.name].ToBatchTensors(
                to_record_batch(pa.table({column.name: values}), [column]), produce_eager_tensors=True))
        transformed = dict(self._output.transform_raw_features(features))
        for column in self._distinct:
            for name in self._outputs[column.name]:
                transformed[name] = take_rows(transformed[name], rows[column.name])
        return transformed


def graph_checked(output, row_wise: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """The columns of `row_wise` whose outputs in the graph are among those it names, each with those outputs (the
    ones taken back by row), and none of whose graph ops reads another input too: an output computed from two
    inputs, or an op no output needs that the graph runs all the same (an analyzer's assert that its input and the
    label have as many rows), would see batches of other sizes."""
    # tf.Transform 1.21 keeps the loaded function's graph and its inputs and outputs on its loader
    # (saved_transform_io_v2.SavedModelLoader), no public API
    loader = output.transform_features_layer()._saved_model_loader
    inputs = {id(tensor.op): name for name, value in loader._structured_inputs.items()
              for tensor in tf.nest.flatten(value, expand_composites=True)}
    reads = _inputs_read(loader._func_graph, inputs)
    mixed = set().union(*(names for names in reads.values() if len(names) > 1))
    outputs = {name: set().union(*(reads[id(tensor.op)] for tensor in tf.nest.flatten(value, expand_composites=True)))
               for name, value in loader._structured_outputs.items()}
    reading = {column: tuple(name for name, read in outputs.items() if column in read) for column in row_wise}
    return {column: reading[column] for column, names in row_wise.items()
            if column not in mixed and all(name in names for name in reading[column])}


def _inputs_read(graph, inputs: dict[int, str]) -> dict[int, frozenset[str]]:
    """{id of each op of `graph`: the inputs (names; `inputs` maps their placeholders' ids) its data reads},
    control dependencies aside (they order ops, whatever their batch sizes)."""
    reads: dict[int, frozenset[str]] = {}
    for op in graph.get_operations():
        stack = [(op, False)]
        while stack:
            current, ready = stack.pop()
            if id(current) in reads:
                continue
            parents = [tensor.op for tensor in current.inputs]
            if not ready:
                stack.append((current, True))
                stack.extend((parent, False) for parent in parents if id(parent) not in reads)
                continue
            found = {inputs[id(current)]} if id(current) in inputs else set()
            reads[id(current)] = frozenset(found.union(*(reads[id(parent)] for parent in parents)))
    return reads


def take_rows(tensor, rows: tf.Tensor):
    """Row `rows[i]` of `tensor` (dense, sparse or ragged, first axis = rows) as its row i."""
    if isinstance(tensor, tf.SparseTensor):
        return tf.gather(tf.RaggedTensor.from_sparse(tensor), rows).to_sparse()
    return tf.gather(tensor, rows)
