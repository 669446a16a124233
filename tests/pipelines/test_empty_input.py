"""An input without a row is refused in every format, in one line naming it, and nothing is written
(docs/errors.md, "Empty input"): tf.Transform would analyze zero rows into statistics of nothing (a mean of 0, an
empty vocabulary) that the graph would then serve. Where the input's sizes show it empty (an empty file, a
Parquet file or a TFRecord file of no rows) the refusal comes from the plan, before the job starts; a CSV
holding its header alone is refused after the pass that finds no row."""

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf

from skewless.config import load_config
from skewless.errors import InputError
from skewless.pipelines.plan.plan import plan


def _csv_header(path):
    path.write_text("x,c\n")


def _empty(path):
    path.write_bytes(b"")


def _parquet(path):
    pq.write_table(pa.table({"x": pa.array([], pa.float64()), "c": pa.array([], pa.string())}), path)


def _tfrecord(path):
    with tf.io.TFRecordWriter(str(path)):
        pass


# file name, input options, how the file is written, whether the plan refuses it (before the job)
CASES = {
    "csv, empty": ("rows.csv", {"format": "csv", "columns": ["x", "c"]}, _empty, True),
    "csv, its header alone": ("rows.csv", {"format": "csv", "header": True}, _csv_header, False),
    "parquet, no row group rows": ("rows.parquet", {"format": "parquet"}, _parquet, True),
    "jsonl, empty": ("rows.jsonl", {"format": "jsonl"}, _empty, True),
    "tfrecord, no record": ("rows.tfrecord", {"format": "tfrecord"}, _tfrecord, True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_input_without_rows_is_refused_in_one_line(case, tmp_path):
    from skewless.pipelines import run

    name, options, write, by_the_plan = CASES[case]
    path = tmp_path / name
    write(path)
    config = load_config({"name": "empty", "input": {**options, "paths": [str(path)]},
                          "features": {"x": {"transform": "z_score"}, "c": {"transform": "vocabulary"}},
                          "output": {"dir": str(tmp_path / "out")}})
    expected = f"{path}: holds no rows"
    if by_the_plan:
        with pytest.raises(InputError) as planned:
            plan(config)
        assert str(planned.value) == expected
    with pytest.raises(InputError) as refused:
        run(config)
    assert str(refused.value) == expected
    assert not os.path.exists(tmp_path / "out")


def test_an_empty_sql_result_is_refused_naming_its_database_and_table(tmp_path):
    # the refusal named "the input" where a SQL input has no paths
    import duckdb

    from skewless.pipelines import run

    database = tmp_path / "rows.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.sql("CREATE TABLE t (x DOUBLE, c VARCHAR)")
    config = load_config({"name": "empty", "input": {"format": "sql", "url": f"duckdb://{database}", "table": "t"},
                          "features": {"x": {"transform": "z_score"}, "c": {"transform": "vocabulary"}},
                          "output": {"dir": str(tmp_path / "out")}})
    with pytest.raises(InputError) as refused:
        run(config)
    assert str(refused.value) == f"duckdb://{database} t: holds no rows"
    assert not os.path.exists(tmp_path / "out")
