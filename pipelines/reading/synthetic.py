"""The bundled synthetic census-like dataset (`pipelines.reading.synthetic_rows`) as an input format: rows cut by number."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from skewless.config import InputConfig
from skewless.pipelines.reading.batches import row_as_json
from skewless.pipelines.reading.format import ROW_CHUNK, InputFormat, Segment, WorkUnit
from skewless.pipelines.reading.synthetic_rows import COLUMNS, synthetic_rows

SOURCE = "synthetic"  # the one input's name, in work units and quarantine


class SyntheticFormat(InputFormat):
    """`input.rows` rows from `input.seed`; any range of them is generated without the rows before it."""

    cheap_to_split = True

    def inputs(self, config: InputConfig) -> list[str]:
        return []  # no file: `plan_units` names the one input

    def sizes(self, config: InputConfig, paths: list[str]) -> list[int]:
        return [config.rows]

    def plan_units(self, config: InputConfig, paths: list[str], sizes: list[int], num_units: int) -> list[WorkUnit]:
        return super().plan_units(config, [SOURCE], sizes, num_units)

    def fingerprint(self, config: InputConfig, path: str) -> str:
        return f"{SOURCE}:{config.rows}:{config.seed}"

    def read(self, reader, segment: Segment):
        config = reader.config
        stop = config.rows if segment.stop < 0 else segment.stop
        for first, table in synthetic_rows(config.seed, segment.start, stop, ROW_CHUNK):
            batches = table.combine_chunks().to_batches()
            batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)
            numbers = np.arange(first + 1, first + 1 + batch.num_rows, dtype=np.int64)
            yield reader.chunk(batch, numbers, [], SOURCE, row_as_json(batch))

    def infer_types(self, config: InputConfig, paths: list[str], lists=(), wanted=None) -> dict[str, str]:
        return dict(COLUMNS)


FORMAT = SyntheticFormat()
