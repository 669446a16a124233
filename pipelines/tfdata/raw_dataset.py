"""`make_raw_dataset`: a job's raw input as a tf.data pipeline, optionally transformed on the fly.

For trying a model in a notebook before (re-)running the Beam job: the rows are read by the job's
own `RowReader`, so they are typed, cleaned and skipped exactly as the job would (a row the job
would quarantine is left out here), and batches look like ``tf.io.parse_example`` output of the raw
feature spec: required features dense ``(batch,)``, optional and list ones sparse ``(batch, n)``. With
``transform=True`` each batch goes through `skewless.layers.TransformLayer`, so the features are the
ones a model trained on the job's shards would see.

Reading uses Apache Beam's file systems (as the job does), so this module is for machines that
have Beam; `make_dataset` is the reader for training containers.
"""

from __future__ import annotations

import logging
import os
from typing import Sequence, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import tensorflow as tf

from skewless.config import InputConfig, JobConfig, load_config
from skewless.errors import ConfigError
from skewless.input_formats import reader_of
from skewless.input_options import InputOptions, absolute_path
from skewless.layers.transform_graph import FROM_RUN, find_graph_dir, label_column
from skewless.lazy_imports import lazy_import
from skewless.pipelines.output import object_store
from skewless.pipelines.plan.raw_types import infer_types, resolve_columns
from skewless.pipelines.reading import input_config
from skewless.pipelines.reading.columns import RawColumn, column_of_spec
from skewless.pipelines.reading.files import format_of
from skewless.run_directory import RunDirectory

# on first use: the row reader, the plan and the split rule load the job's reading stage and pandas, the
# TransformLayer Keras 3, which a training container that only parses a run's records never loads
sources = lazy_import("skewless.pipelines.reading.sources")
plan = lazy_import("skewless.pipelines.plan.plan")
split_rule = lazy_import("skewless.pipelines.reading.split_rule")
tft = lazy_import("tensorflow_transform")
transform_layer = lazy_import("skewless.layers.transform_layer")

_log = logging.getLogger(__name__)

# Units per input of a format whose units start mid-file cheaply (`InputFormat.cheap_to_split`: a byte seek,
# a computed row range, a generator's shard); the others would re-read the head of the file for every unit,
# so they get one unit per file.
_UNITS_PER_INPUT = 4


def make_raw_dataset(
    source: Union[JobConfig, InputConfig, dict, str, os.PathLike, Sequence[Union[str, os.PathLike]]],
    graph_dir: Union[str, os.PathLike, None] = None,
    batch_size: int = 256,
    label: str | None = FROM_RUN,
    transform: bool = False,
    shuffle_buffer: int = 0,
    seed: int | None = None,
    num_epochs: int | None = 1,
    drop_remainder: bool = False,
    split: str | None = None,
) -> tf.data.Dataset:
    """Batches of raw rows, straight from the input files (or generator) of a job.

    Args:
      source: a run directory (its config.yaml is read, and it is the `graph_dir` unless one is given),
        a job config (`JobConfig`, a dict, or a YAML path), a job's `InputConfig`, or data file paths (.csv with a header row, .tfrecord of tf.train.Example, .parquet; the suffixes
        `skewless schema infer` knows; gzip is told by the bytes).
        A config's input may be any format the job reads, a `python` generator included: its
        rows reach tf.data through `Dataset.from_generator`, typed by an explicit signature.
      graph_dir: a run directory or its transform_graph/. Its raw feature spec then types the
        columns; without it the config's schema, else the data's head, does.
      batch_size: rows per batch.
      label: the raw label column to return apart from the features. By default the config's
        label column (or the one the run's run.json names); None returns only the features.
      transform: map each batch through `TransformLayer(graph_dir)`; the features and label are
        then the transformed ones (the transformed label is named like its column).
      shuffle_buffer: rows held for shuffling (the work units are shuffled too); 0 does not
        shuffle: the work units (parts of the input) are read in parallel and their chunks of rows
        taken in turn, in the same order on every pass.
      seed: makes the shuffled order the same on every run.
      num_epochs: passes over the input; None repeats forever.
      drop_remainder: drop the last, smaller batch of each epoch.
      split: only the rows the job writes to this split of its `output.splits` (the same row hash picks
        it), with the label as the job writes it: its `label.map` applied (an int, or a float when the
        map has one), so raw rows train like the run's shards. Needs a config or a run directory.

    Returns:
      A `tf.data.Dataset` of `(features, label)` pairs, or of `features` when there is no label.

    Raises:
      ConfigError: bad arguments, an unknown label, or data paths of an unknown format.
      InputError: the input cannot be read.

    Examples:
      After ``skewless run configs/example.yaml -o out/example``, the raw rows of the run's input the job
      wrote to its eval split, with the label mapped as the job maps it (``<=50K`` is 0):

      >>> from skewless.pipelines.tfdata.raw_dataset import make_raw_dataset
      >>> evaluation = make_raw_dataset("out/example", split="eval", batch_size=1024)
      >>> features, label = next(iter(evaluation))
      >>> features["workclass"][:2].numpy().tolist(), label.dtype, set(label.numpy().tolist())
      ([b'Private', b'Private'], tf.int64, {0, 1})
      >>> sum(int(label.shape[0]) for _, label in evaluation)   # run.json's rows.written.eval
      10055
    """
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    if _is_run_directory(source):
        graph_dir = source if graph_dir is None else graph_dir
        source = RunDirectory.of(source).config_file
    if transform and graph_dir is None:
        raise ConfigError("transform=True needs graph_dir (the run whose transform graph to apply)")
    if graph_dir is not None:
        graph_dir = object_store.local_run(graph_dir)
    config, input_config = _input_of(source)
    split_index = _split_index(config, split)
    input_config, paths = _expanded(config, input_config)
    if input_config.sequence_examples:
        # its batches follow parse_example's layout, which has no place for steps of values
        raise ConfigError("make_raw_dataset reads tf.train.Example input, not SequenceExample "
                          "(input.record: sequence_example); read the records with tf.io.parse_sequence_example")
    columns = _columns(config, input_config, paths, graph_dir)
    if split_index is not None and graph_dir is not None:
        # the split key hashes the row's columns in the job's order; the graph's raw spec has them sorted
        order = [column.name for column in _columns(config, input_config, paths, None)]
        columns.sort(key=lambda column: order.index(column.name) if column.name in order else len(order))
    if label == FROM_RUN:
        label = _default_label(config, graph_dir)
    if label is not None and label not in [column.name for column in columns]:
        known = ", ".join(column.name for column in columns)
        raise ConfigError(f"label {label!r} is not a raw column (columns: {known})")

    # The job's reader judges rows by the config (label map, schema domains) when there is one.
    reader = (sources.RowReader.for_job(config, input_config, columns) if config
              else sources.RowReader(input_config, columns))
    cheap = reader_of(input_config.format).cheap_to_split
    units_wanted = max(len(paths), 1) * (_UNITS_PER_INPUT if cheap else 1)
    units = plan.plan_units(input_config, paths, plan.input_sizes(input_config, paths), units_wanted)
    shuffle = shuffle_buffer > 0
    fractions = list(config.output.splits.values()) if split_index is not None else []

    def unit_tables(index):
        unit = units[int(index)]
        for chunk in reader.read(unit):
            table = chunk.table
            if split_index is not None:
                table = table.filter(pa.array(split_rule.split_of(chunk.keys, fractions) == split_index))
            if chunk.bad:
                first = chunk.bad[0]
                _log.warning(
                    "skipped %d row(s) the job would quarantine; first: %s:%s: %s",
                    len(chunk.bad), first.source, first.line, first.reason,
                )
            if table.num_rows:
                yield _column_arrays(table, columns)

    signature = _signature(columns)
    indices = tf.data.Dataset.range(len(units))
    if shuffle:
        indices = indices.shuffle(len(units), seed=seed, reshuffle_each_iteration=True)
    rows = indices.interleave(
        lambda index: tf.data.Dataset.from_generator(unit_tables, args=(index,), output_signature=signature),
        cycle_length=min(len(units), _UNITS_PER_INPUT),
        num_parallel_calls=tf.data.AUTOTUNE,
    ).map(_features_of(columns)).unbatch()
    if shuffle:
        rows = rows.shuffle(shuffle_buffer, seed=None if seed is None else seed + 1, reshuffle_each_iteration=True)
    batches = rows.batch(batch_size, drop_remainder=drop_remainder)
    if transform:
        batches = batches.map(_transformer(graph_dir, label))
    if label is not None:
        batches = batches.map(lambda features: (features, features.pop(label)))
        if split_index is not None and not transform:
            batches = batches.map(_label_mapper(config, label))
    if num_epochs != 1:
        batches = batches.repeat(num_epochs)
    return batches.prefetch(tf.data.AUTOTUNE)


def _is_run_directory(source) -> bool:
    """A run directory of `skewless run`: its config.yaml says how the job read its input."""
    if not isinstance(source, (str, os.PathLike)) or not tf.io.gfile.isdir(os.fspath(source)):
        return False
    return tf.io.gfile.exists(RunDirectory.of(source).config_file)


def _split_index(config: JobConfig | None, split: str | None) -> int | None:
    """The position of `split` in the job's output.splits (the order split_of numbers them in)."""
    if split is None:
        return None
    if config is None:
        raise ConfigError(f"split={split!r} needs the job's config or run directory: data paths have no splits")
    splits = list(config.output.splits)
    if split not in splits:
        raise ConfigError(f"no split {split!r} in the job (splits: {', '.join(splits)})")
    return splits.index(split)


def _label_mapper(config: JobConfig, label: str):
    """The raw label -> the value the job writes for it (its label.map); the job's reader already left out
    the rows whose label is outside the map, so every label has a value."""
    if config.label is None or config.label.map is None or label != config.label.column:
        return lambda features, value: (features, value)
    keys = [str(key) for key in config.label.map]
    values = list(config.label.map.values())
    dtype = tf.int64 if all(isinstance(value, int) for value in values) else tf.float32
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant(keys), tf.constant(values, dtype)),
        default_value=tf.constant(-1, dtype))

    def mapped(features, value):
        return features, table.lookup(tf.strings.as_string(value) if value.dtype != tf.string else value)

    return mapped


def _input_of(source) -> tuple[JobConfig | None, InputConfig]:
    if isinstance(source, JobConfig):
        return source, source.input
    if isinstance(source, InputOptions):  # paths of its own are the caller's: relative to the current directory
        return None, source.model_copy(update={"paths": _absolute(source.paths)})
    if isinstance(source, dict):
        config = load_config(source)
        return config, config.input
    paths = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    paths = [os.fspath(path) for path in paths]
    if len(paths) == 1 and paths[0].endswith((".yaml", ".yml")):
        config = load_config(paths[0])
        return config, config.input
    data_format = format_of(paths, "pass a config to read other files, one format at a time")
    return None, input_config(_absolute(paths), data_format, header=True)


def _absolute(paths: list[str]) -> list[str]:
    return [absolute_path(path, os.getcwd()) for path in paths]


def _expanded(config: JobConfig | None, input_config: InputConfig) -> tuple[InputConfig, list[str]]:
    """The input files, and for a CSV with a header the column names read from it."""
    input_format = reader_of(input_config.format)
    paths = input_format.inputs(input_config)
    return input_format.resolved(input_config, paths), paths


def _columns(config: JobConfig | None, input_config: InputConfig, paths: list[str], graph_dir) -> list[RawColumn]:
    """The raw columns to read, typed by the graph's raw feature spec, the config, or the data."""
    if graph_dir is not None:
        spec = tft.TFTransformOutput(find_graph_dir(graph_dir)).raw_feature_spec()
        return [column_of_spec(name, feature) for name, feature in spec.items()]
    if config is not None:
        return resolve_columns(config, input_config, paths)
    return [RawColumn(name, kind) for name, kind in infer_types(input_config, paths).items()]


def _default_label(config: JobConfig | None, graph_dir) -> str | None:
    if config is not None:
        return config.label.column if config.label is not None else None
    if graph_dir is not None:
        return label_column(graph_dir)
    return None


def _signature(columns: list[RawColumn]) -> dict:
    signature = {}
    for column in columns:
        signature[column.name] = tf.TensorSpec([None, *(column.shape or ())], column.tf_dtype())
        if column.optional:
            signature[_lengths(column.name)] = tf.TensorSpec([None], tf.int64)
    return signature


def _lengths(name: str) -> str:
    # "/" cannot occur in a column name the job accepts as a feature, so this never collides.
    return f"{name}/lengths"


def _column_arrays(table: pa.Table, columns: list[RawColumn]) -> dict[str, np.ndarray]:
    """An Arrow chunk as NumPy columns. An optional column (a value or none, or a list of 0..n
    values) gives its values flat and the number of values in each row; a fixed shape (rows, *shape)."""
    arrays = {}
    for column in columns:
        values = table.column(column.name).combine_chunks()
        if column.shape is not None:  # the reader kept only rows holding exactly the shape's values
            flat = pc.list_flatten(values).to_numpy(zero_copy_only=False)
            arrays[column.name] = flat.reshape(len(values), *column.shape)
            continue
        if column.optional:
            if pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
                lengths = pc.fill_null(pc.list_value_length(values), 0)
                values = pc.list_flatten(values)
            else:
                lengths = values.is_valid()
                values = values.drop_null()
            arrays[_lengths(column.name)] = lengths.to_numpy(zero_copy_only=False).astype(np.int64)
        arrays[column.name] = values.to_numpy(zero_copy_only=False)
    return arrays


def _features_of(columns: list[RawColumn]):
    """Chunk arrays -> features as `parse_example` gives them: optional columns sparse (rows, values)."""

    def convert(arrays: dict) -> dict:
        features = {}
        for column in columns:
            values = arrays[column.name]
            if column.optional:
                values = tf.RaggedTensor.from_row_lengths(values, arrays[_lengths(column.name)]).to_sparse()
            features[column.name] = values
        return features

    return convert


def _transformer(graph_dir, label: str | None):
    layer = transform_layer.TransformLayer(graph_dir, label=label)
    if label is not None and label not in layer.transformed_feature_spec:
        known = ", ".join(sorted(layer.transformed_feature_spec))
        raise ConfigError(f"{graph_dir}: no transformed feature named like the label {label!r} (features: {known})")

    def apply(features: dict) -> dict:
        return layer(features)

    return apply
