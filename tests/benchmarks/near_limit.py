"""The near-limit reference of issue 6: the census transforms with no Beam and no tf.Transform, in one process.

Arrow reads the CSV, NumPy computes the statistics (mean and population standard deviation, token counts), and
the same tfx_bsl encoder as tf.Transform's output path turns Arrow record batches into tf.Examples that one gzip
TFRecord writer writes. It shows how close to the cost of encoding + compressing a job can get on this machine;
it writes no transform graph and runs on one machine only.

    python tests/benchmarks/near_limit.py --input /tmp/skewless-bench/census-1009391.csv --output /tmp/near

Writes OUTPUT/data/train-00000-of-00001.tfrecord.gz with the same features and values as stock_tft.py.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402
import tensorflow as tf  # noqa: E402
from tfx_bsl.coders import example_coder  # noqa: E402

from census_data import CATEGORICAL_COLUMNS, COLUMNS, LABEL_COLUMN, LABEL_MAP, NUMERIC_COLUMNS  # noqa: E402

ENCODE_BATCH_ROWS = 65_536


def read_census(path: str) -> pa.Table:
    """The whole CSV as one table; string columns lose the space that follows each ', '."""
    types = {name: pa.float32() for name in NUMERIC_COLUMNS}
    types.update({name: pa.string() for name in CATEGORICAL_COLUMNS + (LABEL_COLUMN,)})
    table = pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=list(COLUMNS), block_size=16 << 20),
        convert_options=pacsv.ConvertOptions(column_types=types),
    )
    for name in CATEGORICAL_COLUMNS + (LABEL_COLUMN,):
        table = table.set_column(table.schema.get_field_index(name), name, pc.utf8_ltrim_whitespace(table[name]))
    return table


def z_score(column: pa.ChunkedArray) -> np.ndarray:
    """(x - mean) / std with the population std, or x - mean where std is 0 (tft.scale_to_z_score's rule)."""
    values = column.to_numpy().astype(np.float64)
    mean, std = values.mean(), values.std()
    centered = values - mean
    return (centered / std if std > 0 else centered).astype(np.float32)


def vocabulary_ids(column: pa.ChunkedArray) -> np.ndarray:
    """Ids in a vocabulary sorted by decreasing count, ties by decreasing value (tf.Transform's order); OOV -> size."""
    counts = pc.value_counts(column)
    tokens = counts.field("values").to_pylist()
    frequencies = counts.field("counts").to_pylist()
    # Python orders str by code point, the same order as tf.Transform's UTF-8 bytes.
    vocabulary = [token for _, token in sorted(zip(frequencies, tokens), reverse=True)]
    ids = pc.index_in(column, value_set=pa.array(vocabulary, pa.string()))
    return pc.fill_null(ids, len(vocabulary)).to_numpy().astype(np.int64)


def label_ids(column: pa.ChunkedArray) -> np.ndarray:
    keys = pa.array(list(LABEL_MAP))
    positions = pc.fill_null(pc.index_in(column, value_set=keys), -1).to_numpy()
    values = np.array(list(LABEL_MAP.values()) + [-1], dtype=np.int64)
    return values[positions]


def transform(table: pa.Table) -> dict[str, np.ndarray]:
    columns = {name: z_score(table[name]) for name in NUMERIC_COLUMNS}
    columns.update({name: vocabulary_ids(table[name]) for name in CATEGORICAL_COLUMNS})
    columns[LABEL_COLUMN] = label_ids(table[LABEL_COLUMN])
    return columns


def write_examples(columns: dict[str, np.ndarray], path: Path) -> int:
    """Encodes the columns as one-value-per-row tf.Examples, a record batch at a time, into one gzip TFRecord file."""
    encoder = example_coder.RecordBatchToExamplesEncoder()
    rows = len(next(iter(columns.values())))
    path.parent.mkdir(parents=True, exist_ok=True)
    with tf.io.TFRecordWriter(str(path), options=tf.io.TFRecordOptions(compression_type="GZIP")) as writer:
        for start in range(0, rows, ENCODE_BATCH_ROWS):
            stop = min(start + ENCODE_BATCH_ROWS, rows)
            # tf.Example features are lists; each row holds a list of exactly one value.
            offsets = pa.array(np.arange(stop - start + 1, dtype=np.int32))
            batch = pa.RecordBatch.from_arrays(
                [pa.ListArray.from_arrays(offsets, pa.array(values[start:stop])) for values in columns.values()],
                names=list(columns),
            )
            for record in encoder.encode(batch):
                writer.write(record)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="census CSV (no header, ', ' separated)")
    parser.add_argument("--output", required=True, help="output folder; data goes to OUTPUT/data/")
    args = parser.parse_args()
    start = time.perf_counter()
    table = read_census(args.input)
    read = time.perf_counter()
    columns = transform(table)
    del table
    analyzed = time.perf_counter()
    rows = write_examples(columns, Path(args.output) / "data" / "train-00000-of-00001.tfrecord.gz")
    done = time.perf_counter()
    print(
        f"near-limit: {rows:,} rows in {done - start:.1f} s "
        f"(read {read - start:.1f} s, statistics + transform {analyzed - read:.1f} s, "
        f"encode + gzip + write {done - analyzed:.1f} s)"
    )


if __name__ == "__main__":
    main()
