"""Generated raw rows holding the edges of real data (issue 43), and the same rows written to every source.

`generated_rows(examples)` draws rows with hypothesis, derandomized (the same rows on every run): quoting and
whitespace (leading spaces inside quotes), case, booleans, NA tokens, empty and null, lists with holes, dates in
every accepted form and out of range, numbers at the float32 and int64 edges, unicode. Each row has a unique `id`.
`write_source(kind, rows, folder)` writes them as a source of `kind` holds them (tests/edge_rows.py's writers: pandas'
and R's CSV, Parquet, JSON Lines, TFRecord, DuckDB; a table of the test process's PostgreSQL server,
tests/postgres_server.py) or as a generator yields them, and returns the config's `input`.
"""

from __future__ import annotations

import json
import math

import adbc_driver_postgresql.dbapi as postgres
import numpy as np
from edge_rows import (NA_TOKENS, SQL_TABLE, arrow_table, write_csv, write_duckdb, write_jsonl, write_parquet,
                       write_tfrecord)
from hypothesis import given, settings
from hypothesis import strategies as st
from postgres_server import shared_url

NA = NA_TOKENS[0]
TAGS = ["red", "green", "blue", " blue", "Red", NA, "", None]

# what each generated column is, for the job
FEATURES = {
    "s": {"transform": "vocabulary", "default": "none", "num_oov_buckets": 1},
    # clipped: the float32 edges are read and judged, and the z-score of what is left does not overflow (the job
    # refuses a transform that overflows)
    "x": {"transform": "z_score", "fill": "mean", "missing_indicator": True, "clip": [-1e6, 1e6]},
    "n": {"transform": "passthrough", "default": 0},
    "flag": {"transform": "passthrough", "default": 0},
    "tags": {"transform": "vocabulary", "list": True, "num_oov_buckets": 1},
    "d": {"transform": "datetime", "parts": ["days", "hour"], "default": "1970-01-01"},
}
FLOAT32_MAX = float(np.finfo(np.float32).max)

texts = st.one_of(
    st.sampled_from(["NJ", " NJ", "NJ ", "nj", "New York", 'say "hi"', "a,b", "a|b", "é ü", "日本", NA, " NA", "",
                     None, "TRUE", "false", "0"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=6),
)
floats = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, width=32),
    st.sampled_from([None, math.nan, FLOAT32_MAX, -FLOAT32_MAX, 1e-45, 0.0, -0.0, 16777217.0, 4e38, math.inf]),
)
ints = st.one_of(st.integers(-1000, 1000), st.sampled_from([None, 2**63 - 1, -(2**63), 2**53 + 1]))
booleans = st.one_of(st.booleans(), st.none())
tag_lists = st.one_of(st.none(), st.lists(st.sampled_from(TAGS), max_size=4))
dates = st.one_of(
    st.dates().map(lambda d: d.isoformat()),
    st.sampled_from(["2024-02-29", "2024-02-29T23:59:59", "2024-02-29T23:59:59Z", "2024-02-29T23:59:59+05:30",
                     "2024-02-29T23:59:59.5", "1969-12-31", "9999-12-31T23:59:59", "0001-01-01", "2024-13-01",
                     "yesterday", "", None]),
)
rows_strategy = st.fixed_dictionaries({"s": texts, "x": floats, "n": ints, "flag": booleans, "tags": tag_lists,
                                       "d": dates})


def generated_rows(examples: int = 25) -> list[dict]:
    """Rows from `examples` derandomized hypothesis examples (each a list of rows), numbered by `id`."""
    drawn: list[dict] = []

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None)
    @given(st.lists(rows_strategy, min_size=1, max_size=12))
    def draw(rows):
        drawn.extend(rows)

    draw()
    return [{"id": i, **{name: row[name] for name in COLUMNS[1:]}} for i, row in enumerate(drawn)]


COLUMNS = ["id", "s", "x", "n", "flag", "tags", "d"]
SOURCES = ("csv", "r_csv", "parquet", "jsonl", "tfrecord", "duckdb", "postgresql", "python")


# the generated columns' Arrow types, for Parquet and DuckDB
ARROW_TYPES = {"id": "int64", "s": "string", "x": "float64", "n": "int64", "flag": "bool_", "tags": "list<string>",
               "d": "string"}


def write_source(kind: str, rows: list[dict], folder) -> dict:
    """`rows` written as a `kind` source holds them (tests/edge_rows.py's writers); the job config's `input`."""
    if kind in ("csv", "r_csv"):
        write_csv(folder / "rows.csv", kind == "r_csv", rows)
        return {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True,
                **({"na_values": NA_TOKENS} if kind == "r_csv" else {})}
    if kind == "jsonl":
        write_jsonl(folder / "rows.jsonl", rows)
        return {"format": "jsonl", "paths": [str(folder / "rows.jsonl")]}
    if kind == "parquet":
        write_parquet(folder / "rows.parquet", rows, ARROW_TYPES)
        return {"format": "parquet", "paths": [str(folder / "rows.parquet")]}
    if kind == "duckdb":
        write_duckdb(folder / "rows.duckdb", rows, ARROW_TYPES)
        return {"format": "sql", "url": f"duckdb://{folder / 'rows.duckdb'}", "table": SQL_TABLE, "order_by": ["id"]}
    if kind == "postgresql":
        url, table = shared_url(), f"rows_{folder.name.lower()}"  # one server per test process, a table per run
        with postgres.connect(url) as connection, connection.cursor() as cursor:
            cursor.adbc_ingest(table, arrow_table(rows, ARROW_TYPES), mode="replace")
            connection.commit()
        return {"format": "sql", "url": url, "table": table, "order_by": ["id"]}
    if kind == "tfrecord":
        write_tfrecord(folder / "rows.tfrecord", rows)
        return {"format": "tfrecord", "paths": [str(folder / "rows.tfrecord")]}
    if kind == "python":
        path = folder / "rows.json"
        path.write_text(json.dumps(rows), encoding="utf-8")
        return {"format": "python", "generator": "raw_values:rows_of_file", "args": {"path": str(path)}}
    raise ValueError(kind)


def rows_of_file(shard: int, num_shards: int, path: str):
    """The python source: the rows of a JSON file, a contiguous block per shard, so the input order (shard 0's
    rows, then shard 1's) is the file's whatever the shard count, as the CSV source's is (docs/values.md)."""
    with open(path, encoding="utf-8") as handle:
        rows = json.load(handle)
    yield from rows[len(rows) * shard // num_shards: len(rows) * (shard + 1) // num_shards]
