"""`input.format: python`: rows (dicts of column -> value) that a Python generator yields, once per work unit.

Unit i calls the generator as ``generator(shard=i, num_shards=n, **input.args)``: the generator decides what
a shard is, so its size is unknown before it runs and the shard count follows the readers alone.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa

from skewless.config import InputConfig
from skewless.errors import InputError
from skewless.pipelines.reading.columns import ARROW_TYPES
from skewless.pipelines.reading.batches import row_as_json
from skewless.pipelines.reading.format import ROW_CHUNK, InputFormat, Segment, WorkUnit
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
        """Types from the first rows of shard 0 of 1: int, float (any float seen), else bytes."""
        generator = import_function(config.generator, "input.generator")
        kinds: dict[str, str] = {}
        order = {"int": 0, "float": 1, "bytes": 2}
        for row in itertools.islice(generator(shard=0, num_shards=1, **config.args), SAMPLE_ROWS):
            if not isinstance(row, dict):
                raise InputError(f"input.generator {config.generator!r} yields {type(row).__name__}, not dicts")
            for name, value in row.items():
                if value is None:
                    continue
                kind = "int" if isinstance(value, int) else "float" if isinstance(value, float) else "bytes"
                previous = kinds.get(name)
                if previous is None or order[kind] > order[previous]:
                    kinds[name] = kind
        if not kinds:
            raise InputError(f"input.generator {config.generator!r} yields no rows for shard 0 of 1")
        return kinds


    def held_rows(self, config: InputConfig, units: list[WorkUnit]):
        """What the generator yields for each unit's shard, in unit order."""
        from skewless.pipelines.reading.held_rows import HeldRow

        generator = import_function(config.generator, "input.generator")
        for unit in units:
            for segment in unit.segments:
                source = f"{config.generator}[shard {segment.start} of {segment.stop}]"
                rows = generator(shard=segment.start, num_shards=segment.stop, **config.args)
                for number, row in enumerate(rows, start=1):
                    yield HeldRow(source, number, dict(row) if isinstance(row, dict) else {})


def _chunk(reader, rows: list, source: str, first: int):
    names = [c.name for c in reader.columns]
    bad_shape = [i for i, row in enumerate(rows) if not isinstance(row, dict)]
    if bad_shape:
        raise InputError(f"{source}: row {first + bad_shape[0]} is a {type(rows[bad_shape[0]]).__name__}, "
                         "not a dict of column -> value")
    columns = {name: [row.get(name) for row in rows] for name in names}
    try:
        arrays = [pa.array(columns[c.name], ARROW_TYPES[c.kind]) for c in reader.columns]
        text = False
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        # some value does not fit its column's type: judge the rows as text, so each gets its reason
        arrays = [pa.array([_as_text(v) for v in columns[name]], pa.string()) for name in names]
        text = True
    batch = pa.RecordBatch.from_arrays(arrays, names)
    numbers = np.arange(first, first + batch.num_rows, dtype=np.int64)
    return reader.chunk(batch, numbers, [], source, row_as_json(batch), text=text)


def _as_text(value) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    return repr(value)


FORMAT = GeneratorFormat()
