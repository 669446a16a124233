"""Read throughput of `make_dataset` against the naive tf.data pipeline over the same shards (issue 4).

Three readers, each consumed in batches of --batch-size, best of --repeats passes:
  naive     TFRecordDataset -> map(parse_single_example) -> batch: one file at a time, one row at a
            time, no parallelism, no prefetch.
  make_dataset  the shipped pipeline, with its default shuffle and without shuffling.
  raw       TFRecordDataset -> batch with no parsing at all: reading and un-gzipping alone, the
            ceiling any parser can reach.
It prints examples/second and the ratios make_dataset/naive (goal >= 5x) and make_dataset/raw, and
the CPU time each reader spends per million rows (steadier than wall time when the cores are shared).

Without --run-dir it builds, once, census-shaped transformed shards in --work-dir: 6 float features
(z-scores), 8 int64 vocabulary ids and an int64 label per row, 4 gzip shards, ~1M rows.

    python tests/benchmarks/bench_read.py
    python tests/benchmarks/bench_read.py --run-dir /tmp/census-run --split train
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_transform as tft  # noqa: E402
from census_data import CATEGORICAL_COLUMNS, LABEL_COLUMN, MILLION_ROWS, NUMERIC_COLUMNS  # noqa: E402
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils  # noqa: E402
from tfx_bsl.coders import example_coder  # noqa: E402

from skewless.pipelines.tfdata.dataset import make_dataset, split_shards  # noqa: E402

SHARDS = 4


def transformed_spec() -> dict:
    spec = {name: tf.io.FixedLenFeature([], tf.float32) for name in NUMERIC_COLUMNS}
    spec.update({name: tf.io.FixedLenFeature([], tf.int64) for name in CATEGORICAL_COLUMNS})
    spec[LABEL_COLUMN] = tf.io.FixedLenFeature([], tf.int64)
    return spec


def build_run(run_dir: str, rows: int, seed: int = 0) -> None:
    """Writes a run-directory-shaped fixture: transform_graph/transformed_metadata and gzip shards."""
    done = os.path.join(run_dir, f".complete-{rows}")
    if os.path.exists(done):
        return
    rng = np.random.default_rng(seed)
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(transformed_spec()))
    metadata_io.write_metadata(metadata, os.path.join(run_dir, "transform_graph", "transformed_metadata"))
    os.makedirs(os.path.join(run_dir, "data"), exist_ok=True)
    encoder = example_coder.RecordBatchToExamplesEncoder()
    options = tf.io.TFRecordOptions(compression_type="GZIP")
    bounds = np.linspace(0, rows, SHARDS + 1).astype(int)
    for shard in range(SHARDS):
        path = os.path.join(run_dir, "data", f"train-{shard:05d}-of-{SHARDS:05d}.tfrecord.gz")
        with tf.io.TFRecordWriter(path, options) as writer:
            for start in range(bounds[shard], bounds[shard + 1], 65_536):
                count = min(65_536, bounds[shard + 1] - start)
                for record in encoder.encode(_record_batch(rng, count)):
                    writer.write(record)
    open(done, "w").close()


def _record_batch(rng: np.random.Generator, count: int) -> pa.RecordBatch:
    offsets = np.arange(count + 1, dtype=np.int32)
    columns, names = [], []
    for name in NUMERIC_COLUMNS:
        columns.append(pa.ListArray.from_arrays(offsets, rng.standard_normal(count).astype(np.float32)))
        names.append(name)
    for name in CATEGORICAL_COLUMNS:
        columns.append(pa.ListArray.from_arrays(offsets, rng.integers(0, 40, count)))
        names.append(name)
    columns.append(pa.ListArray.from_arrays(offsets, rng.integers(0, 2, count)))
    names.append(LABEL_COLUMN)
    return pa.RecordBatch.from_arrays(columns, names)


def naive(paths: list[str], spec: dict, batch_size: int) -> tf.data.Dataset:
    compression = "GZIP" if paths[0].endswith(".gz") else ""
    records = tf.data.TFRecordDataset(paths, compression_type=compression)
    return records.map(lambda record: tf.io.parse_single_example(record, spec)).batch(batch_size)


def raw(paths: list[str], batch_size: int) -> tf.data.Dataset:
    compression = "GZIP" if paths[0].endswith(".gz") else ""
    return tf.data.TFRecordDataset(paths, compression_type=compression).batch(batch_size)


def measure(dataset: tf.data.Dataset, repeats: int) -> tuple[float, float, int]:
    """Best throughput over `repeats` full passes, the CPU seconds (all threads) of that pass, and
    the rows one pass yields. CPU time is the steadier figure where other jobs share the cores."""
    best, best_cpu = 0.0, 0.0
    for _ in range(repeats):
        rows = 0
        start, start_cpu = time.perf_counter(), time.process_time()
        for batch in dataset:
            first = batch[0] if isinstance(batch, tuple) else batch
            if isinstance(first, dict):
                first = next(iter(first.values()))
            rows += int(first.shape[0])
        speed = rows / (time.perf_counter() - start)
        if speed > best:
            best, best_cpu = speed, time.process_time() - start_cpu
    return best, best_cpu, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", help="a skewless run directory to read (default: build shards in --work-dir)")
    parser.add_argument("--split", default="train")
    parser.add_argument("--label", default=LABEL_COLUMN)
    parser.add_argument("--rows", type=int, default=MILLION_ROWS, help="rows to build when there is no --run-dir")
    parser.add_argument("--work-dir", default="/tmp/skewless-bench/read")
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    run_dir = args.run_dir
    if run_dir is None:
        run_dir = os.path.join(args.work_dir, f"run-{args.rows}")
        start = time.perf_counter()
        build_run(run_dir, args.rows)
        print(f"shards in {run_dir} ({time.perf_counter() - start:.1f} s to build or find)")
    paths = [path for path, _ in split_shards(run_dir, args.split)]
    spec = tft.TFTransformOutput(os.path.join(run_dir, "transform_graph")).transformed_feature_spec()
    size = sum(os.path.getsize(path) for path in paths)
    print(f"{len(paths)} shards, {size / 1e6:.0f} MB, {len(spec)} features, batch {args.batch_size}, "
          f"best of {args.repeats}, {os.cpu_count()} cores")

    readers = {
        "raw TFRecordDataset, no parsing": raw(paths, args.batch_size),
        "naive map(parse_single_example)": naive(paths, spec, args.batch_size),
        "make_dataset, shuffle 10,000": make_dataset(run_dir, args.split, args.batch_size, label=args.label),
        "make_dataset, no shuffle": make_dataset(
            run_dir, args.split, args.batch_size, label=args.label, shuffle_buffer=0
        ),
    }
    speeds, cpu = {}, {}
    for name, dataset in readers.items():
        speeds[name], seconds, rows = measure(dataset, args.repeats)
        cpu[name] = seconds / rows * 1e6
        print(f"{name:34s} {speeds[name]:>10,.0f} examples/s  {cpu[name]:6.1f} CPU s per 1M rows  ({rows:,} rows)")
    naive_name, raw_name = "naive map(parse_single_example)", "raw TFRecordDataset, no parsing"
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in ("make_dataset, shuffle 10,000", "make_dataset, no shuffle"):
        print(
            f"{name}: {speeds[name] / speeds[naive_name]:.1f}x naive, {speeds[name] / speeds[raw_name]:.2f}x raw "
            f"reading (CPU per row: {cpu[naive_name] / cpu[name]:.1f}x less than naive, "
            f"{cpu[name] / cpu[raw_name]:.1f}x raw reading)"
        )


if __name__ == "__main__":
    main()
