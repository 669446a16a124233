"""`make_dataset`: the training input pipeline over a run's transformed TFRecord shards.

The pipeline follows the tf.data performance guide: shard files are read in parallel with
`interleave`, rows are shuffled as serialized strings (cheap to hold), batched, and then parsed a
whole batch at a time with `tf.io.parse_example` (one vectorized op instead of one op per row),
and `prefetch` overlaps reading with the training step.

This module imports TensorFlow and tf.Transform's metadata reader, never Apache Beam: it runs in
training containers that have no Beam.
"""

from __future__ import annotations

import os
from typing import Sequence, Union

import tensorflow as tf

from skewless.errors import ConfigError, InputError
from skewless.layers.transform_graph import FROM_RUN, label_column
from skewless.lazy_imports import lazy_import
from skewless.output_formats import DEFAULT_FORMAT, output_format
from skewless.pipelines.output import object_store
from skewless.run_directory import SHARD_GLOB, RunDirectory, shard_split

# tf.Transform on first use: importing skewless.pipelines (make_dataset) does not load it
tft = lazy_import("tensorflow_transform")

# More files in flight than this buys nothing on a few cores and costs a read buffer per file.
_MAX_PARALLEL_FILES = 16
# Large reads amortize the per-call cost of the gzip decoder.
_READ_BUFFER_BYTES = 1 << 20
# Each file hands its records to the parallel interleave in chunks: the interleave's cost per element
# (thread hand-offs) is then paid once per chunk. One record per element roughly doubled the
# reader's CPU time on 1M rows.
_READ_CHUNK = 64


def make_dataset(
    run_dir: Union[str, os.PathLike],
    split: str = "train",
    batch_size: int = 256,
    label: str | None = FROM_RUN,
    shuffle_buffer: int = 10_000,
    seed: int | None = None,
    num_epochs: int | None = 1,
    drop_remainder: bool = False,
    cache: Union[bool, str, os.PathLike] = False,
    snapshot_dir: Union[str, os.PathLike, None] = None,
    deterministic: bool | None = None,
    data_service: str | None = None,
    features: Sequence[str] | None = None,
) -> tf.data.Dataset:
    """Batches of one split of a run, parsed with the run's transformed feature spec.

    Args:
      run_dir: the directory `skewless run` wrote (it holds transform_graph/ and data/).
      split: which split's shards to read, e.g. "train" or "eval".
      batch_size: rows per batch.
      label: the transformed label feature to return apart from the features, or None to return
        only the features dict; by default the label column named in the run's ``run.json`` (None
        when the run has no label), as `raw_inputs` and `TransformLayer` take it.
      shuffle_buffer: rows held for shuffling; 0 reads in file order (use it for evaluation).
        When shuffling, the shard files are also shuffled, both anew in every epoch.
      seed: makes the shuffled order the same on every run; None gives a fresh order each run.
      num_epochs: passes over the split; None repeats forever.
      drop_remainder: drop the last, smaller batch of each epoch (gives a static batch size).
      cache: True caches the parsed batches in memory, a path caches them to files there. The
        first epoch fills the cache; later epochs replay its batches in a shuffled order.
      snapshot_dir: keeps the read records with `Dataset.snapshot` in this directory, before the
        shuffle, so later runs of the same pipeline read the snapshot instead of the shards. The
        shard files are then read in a fixed order (the row shuffle still applies) so that the
        pipeline, and therefore the snapshot it matches, is the same from run to run.
      deterministic: False lets tf.data return elements out of order when that is faster; None
        keeps tf.data's default (deterministic).
      data_service: "grpc://host:port" of a tf.data service dispatcher; reading, shuffling and
        parsing then run on its workers, which share out the shard files so that every row is
        read once per epoch. Each worker batches the rows of its own files, so an epoch can end
        with a short batch per worker. The workers must be able to open the shard paths.
      features: the names of the features to read (default: all but the label).

    Returns:
      A `tf.data.Dataset` of `(features, label)` pairs, or of `features` when `label` is None;
      `features` maps each feature name to a tensor whose first dimension is the batch; variable-length
      features (VarLenFeature in the transformed spec: text ids, lists) are `tf.RaggedTensor`s of shape
      (batch, None), feature lists (of SequenceExample input) of shape (batch, steps, values).

    Raises:
      InputError: the run directory, its transform graph or the split's shards are missing.
      ConfigError: the split, a feature or the label is not in the run (the message lists what is).

    Examples:
      After ``skewless run configs/example.yaml -o out/example``:

      >>> from skewless.pipelines.tfdata.dataset import make_dataset
      >>> from skewless.run_directory import RunDirectory
      >>> features, label = next(iter(make_dataset("out/example", "train", batch_size=4, seed=0)))
      >>> features["age"].shape, features["workclass"].dtype, set(label.numpy().tolist()) <= {0, 1}
      (TensorShape([4]), tf.int64, True)

      Every row of the split, once per epoch:

      >>> evaluation = make_dataset("out/example", "eval", batch_size=1024, shuffle_buffer=0)
      >>> sum(int(label.shape[0]) for _, label in evaluation), RunDirectory("out/example").read_summary().rows.written
      (10055, {'eval': 10055, 'train': 39945})
    """
    run_dir = os.fspath(run_dir)
    if not object_store.tensorflow_opens(run_dir):  # tf.data cannot read s3:// in TF 2.21: read a local copy
        run_dir = object_store.local_run(run_dir, data=True)
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    if shuffle_buffer < 0:
        raise ConfigError(f"shuffle_buffer must be >= 0, got {shuffle_buffer}")
    if num_epochs is not None and num_epochs < 1:
        raise ConfigError(f"num_epochs must be >= 1 or None (forever), got {num_epochs}")
    label = label_column(run_dir, label)
    spec = _parse_spec(run_dir, label, features)
    parse = record_parser(run_dir, spec)
    shards = split_shards(run_dir, split)
    paths = [path for path, _ in shards]
    shuffle = shuffle_buffer > 0

    files = tf.data.Dataset.from_tensor_slices(paths)
    if shuffle and snapshot_dir is None:
        files = files.shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    records = files.interleave(
        _read_chunks,
        cycle_length=min(len(paths), _MAX_PARALLEL_FILES),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=deterministic,
    ).unbatch()
    if snapshot_dir is not None:
        records = records.snapshot(os.fspath(snapshot_dir), compression="AUTO")
    if shuffle:
        # A different seed than the file shuffle's, so the two permutations are independent.
        records = records.shuffle(shuffle_buffer, seed=_offset(seed, 1), reshuffle_each_iteration=True)
    batches = records.batch(batch_size, drop_remainder=drop_remainder).map(
        _with_label(parse, label), num_parallel_calls=tf.data.AUTOTUNE, deterministic=deterministic
    )
    rows = [count for _, count in shards]
    if data_service is not None:
        batches = batches.apply(
            tf.data.experimental.service.distribute(
                processing_mode=tf.data.experimental.service.ShardingPolicy.DYNAMIC,
                service=data_service,
            )
        )
    elif None not in rows:
        # A known length lets Keras show progress and size its epochs. (Under the data service
        # each worker batches its own files, so the batch count is not known in advance.)
        total = sum(rows)
        per_epoch = total // batch_size if drop_remainder else -(-total // batch_size)
        batches = batches.apply(tf.data.experimental.assert_cardinality(per_epoch))
    if cache:
        batches = batches.cache("" if cache is True else os.fspath(cache))
        if shuffle:
            # The cache replays the first epoch's batches; reorder them so epochs differ.
            batches = batches.shuffle(
                max(2, shuffle_buffer // batch_size), seed=_offset(seed, 2), reshuffle_each_iteration=True
            )
    if num_epochs != 1:
        batches = batches.repeat(num_epochs)
    if deterministic is not None:
        options = tf.data.Options()
        options.deterministic = deterministic
        batches = batches.with_options(options)
    return batches.prefetch(tf.data.AUTOTUNE)


def split_shards(run_dir: str, split: str) -> list[tuple[str, int | None]]:
    """The split's shard files as (path, rows) pairs; rows is None when run.json does not say.

    The list comes from run.json's "shards" when the run wrote one, else from the file names in
    data/ (`{split}-00000-of-00004.tfrecord.gz`).
    """
    _require_run_dir(run_dir)
    run = RunDirectory.of(run_dir)
    listed = _listed_shards(run)
    if listed is None:
        listed = _globbed_shards(run)
    if split not in listed:
        known = ", ".join(sorted(listed)) or "none"
        raise ConfigError(f"{run_dir}: no split {split!r} (splits in this run: {known})")
    shards = listed[split]
    if not shards:
        raise InputError(f"{run_dir}: split {split!r} has no shard files")
    for path, _ in shards:
        if not tf.io.gfile.exists(path):
            raise InputError(f"{path}: shard file of split {split!r} not found")
    return shards


def _require_run_dir(run_dir: str) -> None:
    # tf.io.gfile, not os.path: a run on any filesystem TensorFlow reads (gs://, ram://) is read in place
    if not tf.io.gfile.isdir(run_dir):
        raise InputError(f"{run_dir}: run directory not found")


def _listed_shards(run: RunDirectory) -> dict[str, list[tuple[str, int | None]]] | None:
    summary = run.read_summary_if_any()
    if summary is None:
        return None
    return {
        split: [(run.shard_file(shard.path), shard.rows) for shard in entries]
        for split, entries in summary.shards.items()
    }


def _globbed_shards(run: RunDirectory) -> dict[str, list[tuple[str, int | None]]]:
    found: dict[str, list[tuple[str, int | None]]] = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(run.data_dir, SHARD_GLOB))):
        split = shard_split(os.path.basename(path))
        if split is not None:
            found.setdefault(split, []).append((path, None))
    return found


def _parse_spec(run_dir: str, label: str | None, features: Sequence[str] | None) -> dict:
    """The transformed feature spec, cut down to the requested features and the label."""
    _require_run_dir(run_dir)
    run = RunDirectory.of(run_dir)
    graph_dir = run.graph_dir
    if not tf.io.gfile.isdir(run.transformed_metadata_dir):
        raise InputError(f"{graph_dir}: no transformed_metadata (is {run_dir} a skewless run directory?)")
    spec = tft.TFTransformOutput(graph_dir).transformed_feature_spec()
    available = ", ".join(sorted(spec))
    if label is not None and label not in spec:
        raise ConfigError(f"{run_dir}: no label feature {label!r} (features in this run: {available})")
    if features is None:
        names = [name for name in spec if name != label]
    else:
        if isinstance(features, str):
            raise ConfigError(f"features must be a list of names, got the string {features!r}")
        unknown = [name for name in features if name not in spec]
        if unknown:
            raise ConfigError(f"{run_dir}: unknown feature(s) {', '.join(map(repr, unknown))} (features in this run: {available})")
        if label is not None and label in features:
            raise ConfigError(f"{label!r} is the label; it cannot also be one of the features")
        names = list(features)
    if label is not None:
        names.append(label)
    return {name: _ragged_if_var_len(spec[name]) for name in names}


def _ragged_if_var_len(feature):
    """Var-len features (text ids, lists) are parsed as a `tf.RaggedTensor` of shape (batch, None)."""
    if isinstance(feature, tf.io.VarLenFeature):
        return tf.io.RaggedFeature(feature.dtype, row_splits_dtype=tf.int64)
    return feature


def _read_chunks(path: tf.Tensor) -> tf.data.Dataset:
    compression = tf.where(tf.strings.regex_full_match(path, r".*\.gz"), "GZIP", "")
    records = tf.data.TFRecordDataset(path, compression_type=compression, buffer_size=_READ_BUFFER_BYTES)
    return records.batch(_READ_CHUNK)


def record_parser(run_dir: str, spec: dict):
    """A function from a batch of the run's serialized shard records to its features, parsed by `spec`, as the
    run's output format (`run_format`) parses them: tf.train.Examples by default; with `output.format:
    sequence_example`, feature lists come back as (batch, steps, values) ragged tensors."""
    return output_format(run_format(run_dir)).parser(run_dir, spec)


def run_format(run_dir: str) -> str:
    """The output format of the run's shards: run.json's, else its config.yaml's, else the default (a bare
    tf.Transform output beside Example shards)."""
    run = RunDirectory.of(run_dir)
    summary = run.read_summary_if_any()
    if summary is not None:
        return summary.format
    return (run.read_config().get("output") or {}).get("format", DEFAULT_FORMAT)


def _with_label(parse, label: str | None):
    def parse_with_label(serialized: tf.Tensor):
        parsed = parse(serialized)
        if label is None:
            return parsed
        target = parsed.pop(label)
        return parsed, target

    return parse_with_label


def _offset(seed: int | None, offset: int) -> int | None:
    return None if seed is None else seed + offset
