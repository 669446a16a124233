"""SQL databases (`input.format: sql`): the rows of `input.query` (or of `input.table`) at `input.url`, as Arrow.

Two engines, chosen by the URL's scheme, both handing over Arrow record batches without a row-by-row step:
- ``duckdb://PATH`` opens a DuckDB database file read-only (several workers may read it at once); ``duckdb://``
  alone is an empty in-memory database, for SQL over files (``SELECT * FROM 'rows.parquet'``). DuckDB is
  embedded: nothing to run.
- ``postgresql://user@host:port/db`` goes through ADBC's PostgreSQL driver (Apache Arrow's own database
  interface): it reads PostgreSQL's binary COPY stream straight into Arrow, and is a small wheel with no server
  library to install; psycopg would build Python objects per value, and connectorx partitions on its own
  terms, not by our work units.

Work units: with ``input.order_by`` (columns that order the rows totally, ideally a primary key) the result is
cut into row ranges, unit i reading ``... ORDER BY key LIMIT n OFFSET start``: each unit fetches its own rows
only, and planning counts the rows (``SELECT count(*)``) without fetching any. Without `order_by` a SQL result
has no order to cut by, so it is one work unit, read in the order the engine returns it. Either way a row's
split comes from its values (docs/values.md, "Splits"), never from the unit that read it.

Values are made plain as Parquet's are (`parquet.plain_column`: decimals to float, timestamps to seconds, ...),
and types are inferred from the result's Arrow types. Errors (a bad URL, a server that does not answer, a
query the engine refuses, a missing table) are one `InputError` line naming the URL without its password.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skewless.config import InputConfig
from skewless.errors import InputError
from skewless.pipelines.reading.columns import arrow_kind
from skewless.pipelines.reading.batches import SourceBatch, row_as_json
from skewless.pipelines.reading.format import ROW_CHUNK, InputFormat, Segment
from skewless.pipelines.reading.interruptible import interruptible
from skewless.pipelines.reading.parquet import plain_batch, plain_type
from skewless.redaction import url_password, url_secrets, url_without_credentials, without_credentials
from skewless.schemas.infer import majority_kind, text_counts

SAMPLE_ROWS = 1000  # column types come from the Arrow types of the result's first rows
SCHEMES = ("duckdb", "postgresql", "postgres")
_SQL_EXTRA = "pip install 'skewless[sql]'"


def source_name(config: InputConfig) -> str:
    """The URL without its password, then the table (or "query"): what quarantine and errors name."""
    return f"{url_without_credentials(config.url)} {config.table or 'query'}"


def base_query(config: InputConfig) -> str:
    """The rows to read: the config's query (without the semicolon that may end it) or every row of its table."""
    if config.query:
        return _without_final_semicolon(config.query.strip())
    return f"SELECT * FROM {'.'.join(quoted(part) for part in config.table.split('.'))}"


def rows_of(config: InputConfig) -> str:
    """The rows to read as a subquery: on lines of their own, so that a query ending in a `-- comment` does not
    comment out the closing parenthesis."""
    return f"(\n{base_query(config)}\n) AS skewless_rows"


# what a semicolon may stand in without ending the statement: quoted text and names, comments, dollar quotes
_SQL_PART = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/|(\$\w*\$).*?\1|;", re.S)
_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)


def _without_final_semicolon(query: str) -> str:
    """`query` cut before a semicolon that only whitespace and comments follow (`SELECT 1; -- rows`)."""
    ends = [part.start() for part in _SQL_PART.finditer(query) if part.group() == ";"]
    if ends and not _COMMENTS.sub("", query[ends[-1] + 1:]).strip():
        return query[: ends[-1]].rstrip()
    return query


def quoted(name: str) -> str:
    """A SQL identifier, quoted (both engines follow the standard: double quotes, doubled inside)."""
    return '"' + name.replace('"', '""') + '"'


class _Rows:
    """A query's rows: their Arrow `schema`, and their batches as the engine streams them (its errors InputErrors)."""

    def __init__(self, reader: pa.RecordBatchReader, errors: tuple, source: str, cursor=None,
                 secrets: tuple[str, ...] = ()):
        self.schema = reader.schema
        self._reader, self._errors, self._source, self._secrets = reader, errors, source, secrets
        self._cursor = cursor  # an ADBC cursor closes its stream when collected: kept while the rows are read

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        while True:
            try:
                if self._cursor is None:
                    batch = self._reader.read_next_batch()
                else:  # ADBC: see `connection`
                    batch = interruptible(self._reader.read_next_batch, self._cursor.adbc_cancel)
            except StopIteration:
                return
            except self._errors as error:
                raise _refused(self._source, error, self._secrets) from None
            yield batch

    def read_all(self) -> pa.Table:
        return pa.Table.from_batches(list(self), self.schema)


def _first_line(error: Exception, secrets: tuple[str, ...] = ()) -> str:
    """The driver's message, first line, without the URL's credentials (libpq quotes a token it cannot read)."""
    lines = str(error).strip().splitlines()
    line = without_credentials(lines[0]) if lines else type(error).__name__
    for secret in secrets:
        line = line.replace(secret, "…")
    return line


def _refused(source: str, error: Exception, secrets: tuple[str, ...] = ()) -> InputError:
    return InputError(f"{source}: the database refuses the query: {_first_line(error, secrets)}")


def _misread_password(url: str) -> str | None:
    """What libpq would misread in the URL's password: it ends the user information at the first "/" or "@",
    and quotes a bad percent-escape back in its error, so such a password would be sent cut and shown in part."""
    password = url_password(url)
    if "/" in password or "@" in password:
        # the user information runs to the URL's last "@" (so a raw "@" in a password is cut whole, never shown in
        # part): an "@" in the query string after it takes the host and path into the password as read here
        after_query = ", or the query string after '?' holds an '@' (write it %40 too)" if "?" in password else ""
        return f"holds a raw '/' or '@' (write them %2F and %40){after_query}"
    if re.search(r"%(?![0-9A-Fa-f]{2})", password):
        return "holds a '%' not followed by two hex digits (write it %25)"
    return None


@contextmanager
def connection(config: InputConfig) -> Iterator[Callable[[str], _Rows]]:
    """A function running a query at `config.url` and giving its rows (`_Rows`)."""
    source = source_name(config)
    scheme = config.url.split("://", 1)[0].lower() if "://" in config.url else ""
    if scheme not in SCHEMES:
        raise InputError(f"input.url {source}: expected a duckdb:// or postgresql:// URL")
    try:
        # optional dependencies (the `sql` extra): imported only when a job reads a database
        if scheme == "duckdb":
            import duckdb as driver  # a boundary: the ImportError of a missing extra is caught right here
        else:
            import adbc_driver_postgresql.dbapi as driver  # as duckdb: caught here when the extra is missing
    except ImportError as error:
        raise InputError(f"input.url {source}: {error.name} is not installed ({_SQL_EXTRA})") from None
    errors = (driver.Error,)
    secrets = url_secrets(config.url)
    misread = _misread_password(config.url) if scheme != "duckdb" else None
    if misread:
        raise InputError(f"input.url {source}: the password {misread}; better, give it in PGPASSWORD, a service "
                         "file or ~/.pgpass (docs/recipes/sql.md)")
    try:
        if scheme == "duckdb":
            path = config.url[len("duckdb://"):]
            handle = driver.connect(path or ":memory:", read_only=bool(path))
        else:
            handle = interruptible(lambda: driver.connect(config.url))
    except errors as error:
        raise InputError(f"input.url {source}: cannot connect: {_first_line(error, secrets)}") from None

    def run(query: str) -> _Rows:
        try:
            # DuckDB checks for Ctrl-C itself (Python's handler runs, the query ends with an error); ADBC takes SIGINT
            # from Python in the main thread, so each call that waits on PostgreSQL goes through `interruptible`
            if scheme == "duckdb":
                return _Rows(handle.sql(query).to_arrow_reader(ROW_CHUNK), errors, source)
            cursor = handle.cursor()
            interruptible(lambda: cursor.execute(query), cursor.adbc_cancel)
            return _Rows(cursor.fetch_record_batch(), errors, source, cursor, secrets)
        except errors as error:
            raise _refused(source, error, secrets) from None

    try:
        yield run
    finally:
        handle.close()


def _engine_type(arrow_type: pa.DataType) -> pa.DataType:
    """The type `_engine_plain` gives a column of `arrow_type`."""
    if pa.types.is_union(arrow_type):
        return pa.string()
    if not isinstance(arrow_type, pa.BaseExtensionType):
        return arrow_type
    return pa.float64() if getattr(arrow_type, "type_name", None) == "numeric" else arrow_type.storage_type


def _engine_plain(column: pa.Array) -> pa.Array:
    """A column without the engine's own types: ADBC hands PostgreSQL types Arrow has no match for as opaque
    extension types over their text (numeric, uuid, json, ...). A numeric is a decimal: a float, as Parquet's
    decimals are; the others are their text. A DuckDB UNION holds a value of one of several types a row: its
    text, read as a CSV column is (a row whose value is not of the column's kind is quarantined, naming it)."""
    if pa.types.is_union(column.type):
        return _union_text(column)
    if not isinstance(column.type, pa.BaseExtensionType):
        return column
    return pc.cast(column.storage, _engine_type(column.type))


def _union_text(column: pa.Array) -> pa.Array:
    def text(value) -> str | None:
        if value is None or isinstance(value, str):
            return value
        return value.decode("utf-8", errors="backslashreplace") if isinstance(value, bytes) else str(value)

    return pa.array([text(value) for value in column.to_pylist()], pa.string())


class SqlFormat(InputFormat):
    """A SQL result, cut into row ranges over `input.order_by` (one unit without it)."""

    def inputs(self, config: InputConfig) -> list[str]:
        return [source_name(config)]

    def sizes(self, config: InputConfig, paths: list[str]) -> list[int]:
        with connection(config) as run:
            count = run(f"SELECT count(*) AS n FROM {rows_of(config)}").read_all()
        return [int(count.column(0)[0].as_py())]

    def splittable(self, config: InputConfig, path: str) -> bool:
        return bool(config.order_by)  # without an order, row ranges would not be the same rows twice

    def read(self, reader, segment: Segment):
        for part in self._batches(reader.config, segment.start, segment.stop):
            yield reader.chunk(part.batch, part.numbers, [], segment.path, row_as_json(part.batch))

    def batches(self, config: InputConfig, paths: list[str], batch_rows: int) -> Iterator[SourceBatch]:
        for part in self._batches(config, 0, -1):
            for lo in range(0, part.batch.num_rows, batch_rows):
                yield SourceBatch(part.path, "record", part.batch.slice(lo, batch_rows),
                                  part.numbers[lo : lo + batch_rows])

    def infer_types(self, config: InputConfig, paths: list[str], lists=(), wanted=None) -> dict[str, str]:
        with connection(config) as run:
            rows = run(f"SELECT * FROM {rows_of(config)} LIMIT {SAMPLE_ROWS}")
            unions = [field.name for field in rows.schema if pa.types.is_union(field.type)]
            sample = rows.read_all() if unions else None
        source = source_name(config)
        kinds = {}
        for field in rows.schema:
            if field.name in unions:  # typed by its values' text, as a CSV column is
                text = _union_text(sample.column(field.name).combine_chunks())
                kinds[field.name] = majority_kind(text_counts(text, config.missing_tokens(field.name)))
                continue
            try:
                plain = plain_type(_engine_type(field.type), f"{source}: column {field.name!r}")
                kinds[field.name] = arrow_kind(plain)
            except InputError:
                if wanted is None or field.name in wanted:
                    raise
        return kinds

    def _batches(self, config: InputConfig, start: int, stop: int) -> Iterator[SourceBatch]:
        """Rows `start` to `stop - 1` (0-based; -1: all) of the result, made plain, numbered from 1."""
        query = base_query(config)
        if config.order_by:
            order = ", ".join(quoted(name) for name in config.order_by)
            query = f"SELECT * FROM {rows_of(config)} ORDER BY {order}"
            if stop >= 0:
                query += f" LIMIT {stop - start} OFFSET {start}"
        source = source_name(config)
        number = start + 1
        with connection(config) as run:
            for batch in run(query):
                if batch.num_rows:
                    numbers = np.arange(number, number + batch.num_rows, dtype=np.int64)
                    columns = [_engine_plain(column) for column in batch.columns]
                    unions = frozenset(name for name, column in zip(batch.schema.names, batch.columns)
                                       if pa.types.is_union(column.type))
                    batch = pa.RecordBatch.from_arrays(columns, batch.schema.names)
                    yield SourceBatch(source, "record", plain_batch(batch, source), numbers, text_columns=unions)
                    number += batch.num_rows


FORMAT = SqlFormat()
