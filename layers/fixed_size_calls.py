"""The model called on batches of one size only, so that a row's outputs do not depend on the rows served with it.

TensorFlow's CPU matrix product computes a batch's rows in groups (of 6 on an AVX2 machine) and the rows of an
unfilled last group by other code, and for large products it splits the sums otherwise as the batch grows; either
way the same row rounds otherwise in the last bits alone and among other rows (measured on this project's machine,
2026-12-02: a Dense head over 40 inputs gave other bits for rows 0-2 of a batch of 3 than for the same rows in a
batch of 200; a 1000 -> 256 -> 256 -> 1 head, for 177 of 300 rows padded to 24 alone and among 4,800). Called on
`ROWS` rows every time, each row is computed by the same code whatever the request: the rows of a batch are cut
into calls of `ROWS`, the last filled with copies of the batch's last row, and the outputs of the copies dropped.
`ROWS` is a multiple of 6 (this machine's group) and of 8 and 12 (wider vector units' groups, not measured
here), so no row of a call is in an unfilled group, and every call's sums are split alike.
"""

from __future__ import annotations

import tensorflow as tf

ROWS = 24


def in_fixed_size_calls(call, inputs):
    """`call(inputs)` computed `ROWS` rows at a time: `inputs` is a structure of tensors (dense, sparse or ragged)
    with the batch as their first axis, `call` computes row by row. An empty batch is one call of no rows.

    Outputs that are not all dense tensors cannot be joined from several calls: there the batch is filled to a
    multiple of `ROWS` and computed in one call (the groups whole, a large product's sums split as for that batch
    size).
    """
    rows = _row_count(tf.nest.flatten(inputs)[0])
    filled_rows = rows + (-rows) % ROWS
    # the batch's rows, then its last row repeated (none where there is no row: then nothing is repeated)
    order = tf.concat([tf.range(rows), tf.fill([filled_rows - rows], rows - 1)], axis=0)
    filled = tf.nest.map_structure(lambda values: _last_row_repeated(values, order, rows, filled_rows - rows), inputs)
    # the outputs' kinds, dtypes and shapes, traced apart: the graph holds the model once for one call, once in
    # the loop
    traced = tf.function(call, autograph=False).get_concrete_function(
        tf.nest.map_structure(tf.type_spec_from_value, filled)).structured_outputs
    if not all(isinstance(output, tf.Tensor) for output in tf.nest.flatten(traced)):
        return _first_rows(call(filled), rows)

    calls = filled_rows // ROWS
    # The inputs cross the `cond` and enter the loop as one tensor: each tensor a branch or the loop's body
    # captures costs a `Switch`, and in the loop an `Enter`, `Merge`, `Switch`, `NextIteration` and `Exit`
    # (while_v2 makes every capture a loop variable), visited even where the branch is not taken: 461 -> 386
    # nodes per call, one Example's p50 0.3-2.6% lower, 100 Examples' 6-7% (docs/performance.md, session 21).
    packed = tf.experimental.Optional.from_value(filled)

    def each_call():
        def one(index, pieces):
            outputs = call(tf.nest.map_structure(lambda values: _rows(values, index * ROWS), packed.get_value()))
            return index + 1, [piece.write(index, output) for piece, output in zip(pieces, tf.nest.flatten(outputs))]

        pieces = [tf.TensorArray(output.dtype, size=calls, element_shape=_any_rows(output.shape))
                  for output in tf.nest.flatten(traced)]
        _, pieces = tf.while_loop(lambda index, _: index < calls, one, (0, pieces))
        return tf.nest.pack_sequence_as(traced, [piece.concat() for piece in pieces])

    # one call needs no loop (most requests); the loop's body calls the same function on the same shapes
    return _first_rows(tf.cond(calls <= 1, lambda: call(packed.get_value()), each_call), rows)


def _any_rows(shape: tf.TensorShape) -> tf.TensorShape:
    """`shape` for any number of rows (the trace's rows are the batch it was traced for)."""
    return shape if shape.rank is None else tf.TensorShape([None]).concatenate(shape[1:])


def _row_count(values) -> tf.Tensor:
    if isinstance(values, tf.SparseTensor):
        return tf.cast(values.dense_shape[0], tf.int32)
    if isinstance(values, tf.RaggedTensor):
        return values.nrows(out_type=tf.int32)
    return tf.shape(values)[0]


def _last_row_repeated(values, order, rows, count):
    """`values` with its last row (of `rows`) repeated `count` times: its rows in `order`."""
    if not isinstance(values, tf.SparseTensor):
        return tf.gather(values, order)
    last = tf.equal(values.indices[:, 0], tf.cast(rows - 1, tf.int64))
    indices, entries = tf.boolean_mask(values.indices, last), tf.boolean_mask(values.values, last)
    steps = tf.repeat(tf.range(1, count + 1, dtype=tf.int64), tf.shape(indices)[0])
    copies = tf.tile(indices, [count, 1]) + steps[:, tf.newaxis] * tf.one_hot(0, tf.shape(indices)[1], dtype=tf.int64)
    shape = tf.concat([values.dense_shape[:1] + tf.cast(count, tf.int64), values.dense_shape[1:]], axis=0)
    return tf.SparseTensor(tf.concat([values.indices, copies], axis=0),
                           tf.concat([values.values, tf.tile(entries, [count])], axis=0), shape)


def _rows(values, start):
    """The `ROWS` rows of `values` from `start`."""
    if isinstance(values, tf.SparseTensor):
        begin = tf.concat([[tf.cast(start, tf.int64)], tf.zeros_like(values.dense_shape[1:])], axis=0)
        return tf.sparse.slice(values, begin, tf.concat([[ROWS], values.dense_shape[1:]], axis=0))
    return values[start:start + ROWS]


def _first_rows(outputs, rows):
    return tf.nest.map_structure(lambda values: values[:rows], outputs)
