"""The same logical rows holding issue 43's reader edges, written as every source holds them, and read back
independently of the job (issue 43, items 1, 2, 5, 7).

Edges: text that starts or ends with spaces (quoted in CSV: `" NJ"`), booleans, a list column (with an item
that is missing), a float with gaps (empty in pandas' CSV, NA in R's). Each writer writes them the way its
tool does: pandas' CSV (True/False, quoted text), R's write.csv (TRUE/FALSE, NA), Parquet and DuckDB with
Arrow booleans and lists, JSON Lines with JSON booleans and lists, TFRecord Examples (a bool is int64_list, as
tf.train.Example holds it), and a Python generator yielding Python values (`rows`, named as
``edge_rows:rows`` in a config).
"""

from __future__ import annotations

import json

import numpy as np

ROWS = 48
NA_TOKENS = ["NA"]
LIST_DELIMITER = "|"
STATES = [" NJ", "NJ", "  NY", "CA ", "NY"]
TAGS = [["a", "b"], ["b"], [], ["a", "", "c"], ["c", "a"], ["b", "b"]]
FEATURES = {
    "id": {"transform": "passthrough"},
    "state": {"transform": "vocabulary"},
    "flag": {"transform": "vocabulary"},
    "ok": {"transform": "passthrough", "default": -1},
    "tags": {"transform": "vocabulary", "list": True},
    "x": {"transform": "z_score", "fill": "mean"},
}
COLUMNS = list(FEATURES)


def logical_rows() -> list[dict]:
    """id, state (spaces around some), flag and ok (booleans; ok missing in every 7th row), tags (a list, an empty
    item in some), x (a float, missing in every 5th row)."""
    return [{"id": i, "state": STATES[i % len(STATES)], "flag": i % 3 == 0, "ok": None if i % 7 == 4 else i % 2 == 1,
             "tags": TAGS[i % len(TAGS)], "x": None if i % 5 == 2 else i * 0.75 - 3.0}
            for i in range(ROWS)]


def present(row: dict) -> dict:
    """A logical row as the value rules read it (docs/values.md): booleans 1/0, a list without its missing items,
    absent values left out."""
    plain = {}
    for name, value in row.items():
        if isinstance(value, list):
            value = [item for item in value if item not in ("", *NA_TOKENS)]
        elif isinstance(value, bool):
            value = int(value)
        if value is not None:
            plain[name] = value
    return plain


def rows(shard: int, num_shards: int):
    """The logical rows as a Python source yields them (`input.generator: edge_rows:rows`); `flag` as NumPy's bool,
    as a value taken from a NumPy array or a pandas frame is."""
    for row in logical_rows()[shard::num_shards]:
        yield dict(row, flag=np.bool_(row["flag"]))


def rows_with_a_list_in_state(shard: int, num_shards: int):
    """`rows`, but row 30 holds a list where a single value belongs (past the rows' first one, type inference's)."""
    for row in rows(shard, num_shards):
        if row["id"] == 30:
            row["state"] = ["NJ", "NY"]
        yield row


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _csv_field(value, r_style: bool) -> str:
    if value is None:
        return "NA" if r_style else ""
    if isinstance(value, bool):
        return ("TRUE" if value else "FALSE") if r_style else str(value)
    if isinstance(value, list):  # a missing item is an empty one (R: NA)
        return _quoted(LIST_DELIMITER.join(("NA" if r_style else "") if item is None else item for item in value))
    if isinstance(value, str):
        return _quoted(value)
    return repr(value)


def write_csv(path, r_style: bool = False, rows_=None) -> None:
    """pandas' to_csv with quoting=QUOTE_NONNUMERIC (text quoted, so its spaces are kept; True/False, a gap empty),
    or R's write.csv (`r_style`: TRUE/FALSE, NA for a gap); of `rows_` (dicts of the same columns, by default the
    logical rows)."""
    rows_ = rows_ or logical_rows()
    lines = [",".join(_quoted(name) for name in rows_[0])]
    lines += [",".join(_csv_field(row[name], r_style) for name in rows_[0]) for row in rows_]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def arrow_table(rows_=None, types=None):
    """`rows_` (by default the logical rows) as an Arrow table of `types` (column -> its pyarrow type name)."""
    import pyarrow as pa

    rows_ = rows_ or logical_rows()
    types = types or {"id": "int64", "state": "string", "flag": "bool_", "ok": "bool_", "tags": "list<string>",
                      "x": "float64"}
    arrow = {name: pa.list_(pa.string()) if kind == "list<string>" else getattr(pa, kind)()
             for name, kind in types.items()}
    return pa.table({name: pa.array([row[name] for row in rows_], kind) for name, kind in arrow.items()})


def write_parquet(path, rows_=None, types=None) -> None:
    import pyarrow.parquet as pq

    pq.write_table(arrow_table(rows_, types), path)


def write_jsonl(path, rows_=None) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows_ or logical_rows():
            handle.write(json.dumps(row) + "\n")


SQL_TABLE = "edges"


def write_duckdb(path, rows_=None, types=None) -> None:
    import duckdb

    with duckdb.connect(str(path)) as connection:
        connection.register("frame", arrow_table(rows_, types))
        connection.execute(f"CREATE TABLE {SQL_TABLE} AS SELECT * FROM frame ORDER BY id")


def write_tfrecord(path, rows_=None) -> None:
    """Examples of `rows_` (by default the logical rows); a list's missing (None) item cannot be held: left out."""
    import tensorflow as tf

    with tf.io.TFRecordWriter(str(path)) as writer:
        for row in rows_ or logical_rows():
            feature = {}
            for name, value in row.items():
                if value is None:
                    continue
                if isinstance(value, list):
                    feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(
                        value=[v.encode() for v in value if v is not None]))
                elif isinstance(value, str):
                    feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode()]))
                elif isinstance(value, float):
                    feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
                else:
                    feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


# source name -> (file suffix, writer, input options); the writer is None for the generator
SOURCES = {
    "csv": ("csv", write_csv, {"format": "csv", "header": True}),
    "csv-multiline": ("csv", write_csv, {"format": "csv", "header": True, "multiline": True}),
    "r-csv": ("csv", lambda path: write_csv(path, r_style=True), {"format": "csv", "header": True}),
    "parquet": ("parquet", write_parquet, {"format": "parquet"}),
    "jsonl": ("jsonl", write_jsonl, {"format": "jsonl"}),
    "duckdb": ("duckdb", write_duckdb, {"format": "sql"}),
    "tfrecord": ("tfrecord", write_tfrecord, {"format": "tfrecord"}),
    "python": (None, None, {"format": "python", "generator": "edge_rows:rows"}),
}


def job_config(source: str, folder) -> dict:
    """The job config reading `source`'s file (written into `folder`) into folder/out-SOURCE."""
    suffix, writer, options = SOURCES[source]
    options = dict(options)
    if writer is not None:
        path = folder / f"{source}.{suffix}"
        writer(path)
        if options["format"] == "sql":
            options.update(url=f"duckdb://{path}", table=SQL_TABLE)
        else:
            options["paths"] = [str(path)]
    return {
        "name": "edges",
        "input": {**options, "na_values": NA_TOKENS},
        "features": FEATURES,
        "output": {"dir": str(folder / f"out-{source}"), "shards": 1},
    }
