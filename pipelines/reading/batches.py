"""What every format's reader yields: rows of one file as an Arrow batch, and the rows that did not split."""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from typing import Callable

import numpy as np
import pyarrow as pa

from skewless.schemas.row_checks import RowProblem

BATCH_ROWS = 16_384


@dataclass(frozen=True)
class RejectedRow:
    """A row that could not be split into columns: its line or record number, raw bytes and why."""

    number: int
    raw: bytes
    problem: RowProblem


@dataclass
class SourceBatch:
    """Rows of one file: `batch.num_rows` rows numbered `numbers`, plus the rows rejected among them.

    `raw(i)` gives row i's bytes as the file holds them (for quarantine), where the reader kept them.
    """

    path: str
    unit: str  # "line" (CSV) or "record" (Parquet rows, TFRecord records; 1-based)
    batch: pa.RecordBatch
    numbers: np.ndarray
    rejected: list[RejectedRow] = field(default_factory=list)
    raw: Callable[[int], bytes] | None = None
    # columns read as text although the format is typed (a JSON column mixing numbers and text): typed as CSV is
    text_columns: frozenset[str] = frozenset()

    def where(self, number: int) -> str:
        """"file:LINE" for CSV, "file#RECORD" otherwise."""
        return f"{self.path}:{number}" if self.unit == "line" else f"{self.path}#{number}"


def row_as_json(batch: pa.RecordBatch) -> Callable[[int], str]:
    """Row i of a typed batch, as a JSON object (bytes decoded as UTF-8 where they can be), as quarantine keeps it."""

    def render(row: int) -> str:
        values = {name: batch.column(name)[row].as_py() for name in batch.schema.names}
        return json.dumps(values, default=lambda value: value.decode("utf-8", errors="backslashreplace"))

    return render
