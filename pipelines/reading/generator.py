"""`input.format: python`: rows (dicts of column -> value) that a Python generator yields, once per work unit.

Unit i calls the generator as ``generator(shard=i, num_shards=n, **input.args)``: the generator decides what
a shard is, so its size is unknown before it runs and the shard count follows the readers alone.

Values mean what the same values mean as JSON Lines (docs/values.md): a list (or tuple, or NumPy array) is
the values of a list column, a single value there a list of one; a bool is the int 1 or 0; a column whose
values do not all fit its type is read as text, parsed and judged row by row as a JSON column mixing numbers
and text is.
"""

from __future__ import annotations

import itertools
from numbers import Integral, Real

import numpy as np
import pyarrow as pa

from skewless.boolean_values import as_int
from skewless.config import InputConfig
from skewless.errors import InputError
from skewless.pipelines.reading.columns import ARROW_TYPES
from skewless.pipelines.reading.batches import row_as_json
from skewless.pipelines.reading.format import ROW_CHUNK, InputFormat, Segment, WorkUnit
from skewless.pipelines.reading.held_rows import HeldRow
from skewless.references import import_function

GENERATOR_SOURCE = "generator"  # the segments' path: there is no file
SAMPLE_ROWS = 1000  # column types are inferred from the first rows of shard 0 of 1


class GeneratorFormat(InputFormat):
    """A generator per work unit, read lazily: the data never has to fit in memory."""

    cheap_to_split = True
    size_known = False

    def sizes(self, config: InputConfig, paths: list[str]) -> list[int]:
        return []  # a generator's size is known only by running it

    def plan_units(self, config: InputConfig, paths: list[str], sizes: list[int], num_units: int) -> list[WorkUnit]:
        return [WorkUnit(i, (Segment(GENERATOR_SOURCE, i, num_units),)) for i in range(num_units)]

    def read(self, reader, segment: Segment):
        """Calls the generator afresh for its shard (a retried bundle starts over) and reads it lazily."""
        config = reader.config
        generator = import_function(config.generator, "input.generator")
        source = f"{config.generator}[shard {segment.start} of {segment.stop}]"
        rows = generator(shard=segment.start, num_shards=segment.stop, **config.args)
        first = 1
        while True:
            block = list(itertools.islice(rows, ROW_CHUNK))
            if not block:
                return
            yield _chunk(reader, block, source, first)
            first += len(block)

    def infer_types(self, config: InputConfig, paths: list[str], lists=(), wanted=None) -> dict[str, str]:
        """Types from the first rows of shard 0 of 1: int (bools too), float (any float seen), else bytes; a list's
        type is its values' (bytes when every list seen is empty)."""
        generator = import_function(config.generator, "input.generator")
        kinds: dict[str, str] = {}
        listed = set()
        for row in itertools.islice(generator(shard=0, num_shards=1, **config.args), SAMPLE_ROWS):
            if not isinstance(row, dict):
                raise InputError(f"input.generator {config.generator!r} yields {type(row).__name__}, not dicts")
            for name, value in row.items():
                if isinstance(value, _LISTS):
                    listed.add(name)
                for item in _items(value):
                    kind = _kind(item)
                    previous = kinds.get(name)
                    if previous is None or _ORDER.index(kind) > _ORDER.index(previous):
                        kinds[name] = kind
        for name in listed - set(kinds):
            kinds[name] = "bytes"
        if not kinds:
            raise InputError(f"input.generator {config.generator!r} yields no rows for shard 0 of 1")
        return kinds

    def held_rows(self, config: InputConfig, units: list[WorkUnit]):
        """What the generator yields for each unit's shard, in unit order."""
        generator = import_function(config.generator, "input.generator")
        for unit in units:
            for segment in unit.segments:
                source = f"{config.generator}[shard {segment.start} of {segment.stop}]"
                rows = generator(shard=segment.start, num_shards=segment.stop, **config.args)
                for number, row in enumerate(rows, start=1):
                    yield HeldRow(source, number, dict(row) if isinstance(row, dict) else {})


_ORDER = ("int", "float", "bytes")  # each kind's values can be held by the kinds after it
_LISTS = (list, tuple, np.ndarray)


def _chunk(reader, rows: list, source: str, first: int):
    names = [c.name for c in reader.columns]
    bad_shape = [i for i, row in enumerate(rows) if not isinstance(row, dict)]
    if bad_shape:
        raise InputError(f"{source}: row {first + bad_shape[0]} is a {type(rows[bad_shape[0]]).__name__}, "
                         "not a dict of column -> value")
    arrays = [_column_array([row.get(c.name) for row in rows], c) for c in reader.columns]
    batch = pa.RecordBatch.from_arrays(arrays, names)
    numbers = np.arange(first, first + batch.num_rows, dtype=np.int64)
    return reader.chunk(batch, numbers, [], source, row_as_json(batch))


def _column_array(values: list, column) -> pa.Array:
    """A column's values as Arrow: of its type where they all fit it, else as text for the reader to parse and
    judge value by value (each bad row then gets its reason); a list column's values as lists."""
    arrow_type = ARROW_TYPES[column.kind]
    # a list in a column of single values is kept a list too: the reader refuses its count, never its printed form
    if column.is_list or column.sequence or any(isinstance(value, _LISTS) for value in values):
        values = [None if value is None else _as_list(value) for value in values]
        typed = [pa.list_(arrow_type), None]  # None: as Arrow infers them (a fixed shape's nested lists)
    else:
        values = [as_int(value) for value in values]
        typed = [arrow_type]
    for attempt in typed:
        try:
            return pa.array(values, attempt)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            continue
    return pa.array([_as_text(value) for value in values])


def _as_list(value) -> list:
    """A list column's value as a list: a single value is a list of one; bools are 1/0 at any depth."""
    if not isinstance(value, _LISTS):
        return [as_int(value)]
    return [_as_list(item) if isinstance(item, _LISTS) else as_int(item) for item in value]


def _items(value) -> list:
    """The single values a row's value holds (a list's items, however nested), without missing ones."""
    if isinstance(value, _LISTS):
        return [leaf for item in value for leaf in _items(item)]
    return [] if value is None else [value]


def _kind(value) -> str:
    if isinstance(value, (Integral, np.bool_)):
        return "int"
    return "float" if isinstance(value, Real) else "bytes"


def _as_text(value):
    """A value of a column whose values do not all fit its type, as text (a list's items each)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return [_as_text(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return repr(value)


FORMAT = GeneratorFormat()
