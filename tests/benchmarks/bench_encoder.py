"""Issue 40: the Example encoder and TFRecord framing, in C and in Python, on a census run's transformed rows.

The rows are a finished census run's output (`skewless run configs/census.yaml`: 32,561 rows), parsed back with
its transformed feature spec into the transform pass's batches (`tensors_to_record_batch`), repeated `--copies`
times (31: 1,009,391 rows) and cut into the pass's slices of `TRANSFORM_BATCH_ROWS`. Each implementation encodes
and frames them slice by slice, the two taking turns for `--rounds`; the figures are the main thread's CPU seconds
(the thread that runs them in the job), and the two implementations' framed bytes are compared.

    python tests/benchmarks/bench_encoder.py --run out/census [--copies 31] [--rounds 3]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import time
from pathlib import Path

import pyarrow as pa
import tensorflow as tf
import tensorflow_transform as tft

from skewless.pipelines.write import example_encoder, native_records, shards
from skewless.pipelines.write.transform import TRANSFORM_BATCH_ROWS, tensors_to_record_batch

IMPLEMENTATIONS = {
    "Python": (example_encoder.encode_examples_in_python, shards.tfrecord_frames_in_python),
    "C": (example_encoder.encode_examples, shards.tfrecord_frames),
}


def transformed_rows(run: Path) -> pa.RecordBatch:
    spec = tft.TFTransformOutput(str(run / "transform_graph")).transformed_feature_spec()
    files = sorted(str(path) for path in (run / "data").glob("*.tfrecord*"))
    records = tf.data.TFRecordDataset(files, compression_type="GZIP" if files[0].endswith(".gz") else "")
    parsed = tf.io.parse_example(tf.stack(list(records)), spec)
    return tensors_to_record_batch(parsed)


def slices(rows: pa.RecordBatch, copies: int) -> list[pa.RecordBatch]:
    return pa.Table.from_batches([rows] * copies).combine_chunks().to_batches(max_chunksize=TRANSFORM_BATCH_ROWS)


def measure(name: str, batches: list[pa.RecordBatch]) -> tuple[float, float, str]:
    """Main-thread CPU seconds to encode the slices and to frame them, one slice after the other and each dropped
    once framed (as the job hands it to the gzip thread); and the framed bytes' digest."""
    encode, frame = IMPLEMENTATIONS[name]
    encoding = framing = 0.0
    digest = hashlib.sha256()
    for batch in batches:
        started = time.thread_time()
        records = encode(batch)
        encoded = time.thread_time()
        framed = frame(records)
        encoding, framing = encoding + encoded - started, framing + time.thread_time() - encoded
        digest.update(framed)
    return encoding, framing, digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=Path("out/census"), help="a finished census run's directory")
    parser.add_argument("--copies", type=int, default=31)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    batches = slices(transformed_rows(args.run), args.copies)
    rows = sum(batch.num_rows for batch in batches)
    print(f"{rows:,} rows in {len(batches)} slices; the C extension: {native_records.IMPLEMENTATION == 'C'}; "
          f"load average at start {', '.join(f'{value:.1f}' for value in os.getloadavg())}")
    figures = {name: [] for name in IMPLEMENTATIONS}
    digests = set()
    for round_ in range(args.rounds):
        for name in IMPLEMENTATIONS:
            encoding, framing, digest = measure(name, batches)
            figures[name].append((encoding, framing))
            digests.add(digest)
            print(f"round {round_ + 1} {name:6s}: encode {encoding:.3f} CPU s, frame {framing:.3f} CPU s "
                  f"(load {os.getloadavg()[0]:.1f})")
    for name, runs in figures.items():
        print(f"median {name:6s}: encode {statistics.median(e for e, _ in runs):.3f} CPU s, "
              f"frame {statistics.median(f for _, f in runs):.3f} CPU s")
    print("framed bytes: " + ("identical" if len(digests) == 1 else "DIFFERENT"))


if __name__ == "__main__":
    main()
