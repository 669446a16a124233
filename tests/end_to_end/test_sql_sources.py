"""`input.format: sql` against real engines: a PostgreSQL server the test starts (initdb and pg_ctl into a fresh
folder; skipped where the server binaries are absent), nothing mocked, and DuckDB over a Parquet file.

On one real dataset (diamonds, with the matrix's bad rows), each database gives the run that the CSV of the same
rows gives: the same statistics, vocabularies, quarantine and shards, byte for byte. Cut into several work units
by `input.order_by`, a database's rows still go to the splits their values pick.
"""

import os
from pathlib import Path

import pyarrow as pa
import pytest

from postgres_server import server
from real_data import (
    DATASETS,
    job_config,
    load,
    normalized_reason,
    parsed_rows,
    quarantine_by_position,
    run_json,
    schema_text,
    split_records,
    vocabulary_files,
    with_bad_rows,
    write_csv,
    write_parquet,
)

DATASET = DATASETS["diamonds"]
POSITION = "row_position"  # the PostgreSQL table's order: a column the job does not read


@pytest.fixture(scope="module")
def postgres_url():
    """A PostgreSQL server of its own for the module (tests/postgres_server.py): its URL."""
    with server() as url:
        yield url


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """diamonds with the matrix's bad rows: (frame, folder with its CSV, Parquet and schema, the CSV run)."""
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("sql")
    frame, _ = with_bad_rows(DATASET, load(DATASET, DATASET.step))
    write_csv(DATASET, frame, folder / "rows.csv")
    write_parquet(DATASET, frame, folder / "rows.parquet")
    (folder / "schema.pbtxt").write_text(schema_text(DATASET, load(DATASET, DATASET.step)))
    csv_run = run(job_config(DATASET, "csv", folder / "rows.csv", folder / "out-csv", folder / "schema.pbtxt"))
    return frame, folder, csv_run.output_dir


def _sql_run(folder, name, url, **source):
    from skewless.pipelines import run

    config = job_config(DATASET, "sql", None, folder / f"out-{name}", folder / "schema.pbtxt")
    config["input"] = {"format": "sql", "url": url, **source, "na_values": config["input"]["na_values"]}
    return run(config).output_dir


def _load_postgres(url: str, frame, table: str) -> None:
    """The rows into a PostgreSQL table through ADBC, with their position as POSITION."""
    import adbc_driver_postgresql.dbapi as postgres

    data = pa.Table.from_pandas(frame, preserve_index=False).append_column(POSITION, pa.array(range(len(frame))))
    with postgres.connect(url) as connection, connection.cursor() as cursor:
        cursor.adbc_ingest(table, data, mode="replace")
        connection.commit()


def _same_run(ours, theirs) -> None:
    """Two runs with the same statistics, vocabularies, quarantine (by row position) and shards, byte for byte."""
    assert run_json(theirs)["features"] == run_json(ours)["features"]
    # the CSV's own bad tail (a short line, text in a number) is no row of the database
    tail = 2
    csv_rows, sql_rows = run_json(ours)["rows"], run_json(theirs)["rows"]
    assert sql_rows["written"] == csv_rows["written"]
    assert (sql_rows["read"], sql_rows["quarantined"]) == (csv_rows["read"] - tail, csv_rows["quarantined"] - tail)
    assert vocabulary_files(theirs) == vocabulary_files(ours)
    csv_quarantine = quarantine_by_position(ours, "csv")
    rows = len(csv_quarantine) - tail
    found = quarantine_by_position(theirs, "sql")
    assert {position: normalized_reason(reason) for position, reason in found.items()} == \
        {position: normalized_reason(reason) for position, reason in sorted(csv_quarantine.items())[:rows]}
    for split in run_json(ours)["rows"]["written"]:
        assert split_records(theirs, split) == split_records(ours, split), split
        relative = os.path.join("statistics", f"Split-{split}", "FeatureStats.pb")
        assert Path(theirs, relative).read_bytes() == Path(ours, relative).read_bytes(), relative


def test_postgresql_gives_the_run_csv_gives(postgres_url, rows):
    frame, folder, csv_run = rows
    _load_postgres(postgres_url, frame, "diamonds")
    _same_run(csv_run, _sql_run(folder, "postgres", postgres_url, table="diamonds", order_by=[POSITION]))


def test_duckdb_over_parquet_gives_the_run_csv_gives(rows):
    _, folder, csv_run = rows
    query = f"SELECT * FROM read_parquet('{folder / 'rows.parquet'}')"
    _same_run(csv_run, _sql_run(folder, "duckdb", "duckdb://", query=query))


def test_rows_cut_into_units_by_order_by_keep_their_split(postgres_url, rows):
    from skewless.pipelines import run

    frame, folder, csv_run = rows
    _load_postgres(postgres_url, frame, "units")
    config = job_config(DATASET, "sql", None, folder / "out-units", folder / "schema.pbtxt")
    config["input"] = {"format": "sql", "url": postgres_url, "table": "units", "order_by": [POSITION],
                       "na_values": config["input"]["na_values"]}
    config["output"]["shards"] = 3
    units = run(config).output_dir
    for split in run_json(csv_run)["rows"]["written"]:
        ids = sorted(parsed_rows(units, split_records(units, split)))
        assert ids == sorted(parsed_rows(csv_run, split_records(csv_run, split))), split
    assert len(list(Path(units, "data").glob("train-*"))) == 3
    assert sorted(quarantine_by_position(units, "sql")) == sorted(quarantine_by_position(csv_run, "csv"))[:-2]


def test_postgresql_types_are_read_as_plain_values(postgres_url):
    """PostgreSQL's numeric (an opaque type to Arrow), arrays, timestamps, dates and booleans, typed and read."""
    import adbc_driver_postgresql.dbapi as postgres

    from skewless.config import parse_input
    from skewless.pipelines.reading.columns import RawColumn
    from skewless.pipelines.plan.raw_types import infer_types
    from skewless.pipelines.reading.sources import RowReader, input_sizes, plan_units

    with postgres.connect(postgres_url) as connection, connection.cursor() as cursor:
        cursor.execute("CREATE TABLE typed (n numeric(10, 2), a int[], t timestamp, d date, b boolean, s text)")
        cursor.execute("INSERT INTO typed VALUES (1.25, ARRAY[1, 2], '1970-01-02 00:00:03', '1970-01-11', true, 'x'),"
                       " (NULL, ARRAY[]::int[], NULL, NULL, false, '')")
        connection.commit()
    config = parse_input(format="sql", url=postgres_url, table="typed")
    kinds = infer_types(config, [])
    assert kinds == {"n": "float", "a": "int", "t": "int", "d": "int", "b": "int", "s": "bytes"}
    columns = [RawColumn(name, kind, optional=True, is_list=name == "a") for name, kind in kinds.items()]
    units = plan_units(config, ["typed"], input_sizes(config, []), 1)
    rows = [row for chunk in RowReader(config, columns).read(units[0]) for row in chunk.table.to_pylist()]
    # seconds and days since 1970, as Parquet's timestamps and dates are; missing values null
    assert rows == [{"n": 1.25, "a": [1, 2], "t": 86403, "d": 10, "b": 1, "s": b"x"},
                    {"n": None, "a": [], "t": None, "d": None, "b": 0, "s": None}]
