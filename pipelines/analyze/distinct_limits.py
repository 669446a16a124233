"""Stated limits on the distinct values the analysis holds in memory (issue 41 item 11, docs/errors.md).

Two costs grow with distinct values, not rows: per-key statistics hold every key of their key column (its
accumulators, then the keys with their statistics as constants of the graph: 2-3.5 KB a key), and a vocabulary
counts every distinct value or text token before `top_k` keeps the first (about 0.7 KB each). Nothing bounds
them but the data, so the config does: `analysis.max_keys` and `analysis.max_vocabulary`. A job past one fails
in one line naming the feature, the count and the option, while the analysis pass counts: the count is checked
after each chunk of rows, in the same Beam stage that feeds tf.Transform's analyzers, so memory stops growing
at about the limit's cost instead of the data's.

Where each count is taken:

- a per-key statistic's key column, and the column of a vocabulary tf.Transform counts itself (`labels` or
  `weights`: `tft.vocabulary`), are counted here, on the raw rows (`DistinctValuesFn`), exactly: a set of the
  values seen, long values by their `capped` form (a few hundred bytes at most), far less than what the
  analyzers keep per value;
- the vocabularies skewless counts itself (pipelines/analyze/vocabularies.py: the config's, the label's, each
  `fill: most_frequent`) check their own exact count of tokens, which for text are the tokenizer's, not the raw
  values.
"""

from __future__ import annotations

from dataclasses import dataclass

import apache_beam as beam
import pyarrow as pa

from skewless.config import JobConfig
from skewless.errors import LimitError
from skewless.pipelines.analyze.stats import capped, column_values
from skewless.pipelines.reading.columns import RawColumn
from skewless.transforms.numeric import NumericTransform

# what one distinct value costs a job that holds it to the end, said in the refusal (measured: docs/errors.md,
# "What a value may cost")
_KEY_COST = "3 KB"
_VOCABULARY_COST = "0.7 KB"
_KEYS_INSTEAD = "key by a coarser column"
_VOCABULARY_INSTEAD = "hash the column (transform: hash)"


@dataclass(frozen=True)
class DistinctLimit:
    """At most `limit` distinct values of what `counted` names, set by config option `option`."""

    counted: str  # what is counted, as the refusal starts: "features.price: its key column 'store'"
    limit: int
    option: str  # "analysis.max_keys"
    cost: str  # the memory one distinct value costs: "3 KB"
    instead: str  # what else to do: "key by a coarser column"
    column: str | None = None  # the raw column whose values are counted here (DistinctValuesFn); None: tokens

    def check(self, seen: int) -> None:
        """Raises the one-line refusal once `seen` distinct values are past the limit."""
        if seen > self.limit:
            raise LimitError(f"{self.counted} has at least {seen:,} distinct values, more than {self.option} "
                             f"({self.limit:,}) allows; raise it (each costs about {self.cost} of memory), or "
                             f"{self.instead}")


def vocabulary_limit(counted: str, limit: int) -> DistinctLimit:
    """The limit of a vocabulary skewless counts (`counted`: "features.review: its vocabulary", ...)."""
    return DistinctLimit(counted, limit, "analysis.max_vocabulary", _VOCABULARY_COST, _VOCABULARY_INSTEAD)


def raw_column_limits(config: JobConfig) -> list[DistinctLimit]:
    """The limits counted on raw columns: each per-key statistic's key column (analysis.max_keys), each vocabulary
    tf.Transform counts itself (analysis.max_vocabulary: `labels` or `weights`). A column several features key by
    is counted once, named by the first."""
    limits: dict[tuple[str, str], DistinctLimit] = {}
    analysis = config.analysis
    for name, feature in config.features.items():
        kind = feature.transform_kind
        if isinstance(kind, NumericTransform) and kind.reads(feature):
            key = feature.key
            limits.setdefault((key, "keys"), DistinctLimit(
                f"features.{name}: its key column {key!r}", analysis.max_keys, "analysis.max_keys", _KEY_COST,
                _KEYS_INSTEAD, column=key))
        elif feature.labels or feature.weights is not None:  # options of transform vocabulary only
            limits.setdefault((name, "vocabulary"), DistinctLimit(
                f"features.{name}: its vocabulary's column", analysis.max_vocabulary, "analysis.max_vocabulary",
                _VOCABULARY_COST, _VOCABULARY_INSTEAD, column=name))
    return list(limits.values())


class DistinctValuesFn(beam.CombineFn):
    """Counts the distinct values of each limited raw column in Arrow tables of raw rows, and fails the pipeline
    with the limit's refusal once one is past it. The output (column -> distinct values) is not used: the count
    is the point."""

    def __init__(self, limits: list[DistinctLimit], columns: list[RawColumn]):
        by_name = {column.name: column for column in columns}
        self._limits = [(limit, by_name[limit.column]) for limit in limits]

    def create_accumulator(self):
        return {limit.column: set() for limit, _ in self._limits}

    def add_input(self, accumulator, table: pa.Table):
        for limit, column in self._limits:
            values = column_values(table, column).drop_null()
            if column.kind == "bytes":
                values = capped(values)  # a long value is held by its start, length and digest
            seen = accumulator[limit.column]
            seen.update(values.unique().to_pylist())
            limit.check(len(seen))
        return accumulator

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        merged = next(accumulators)
        for other in accumulators:
            for limit, _ in self._limits:
                merged[limit.column] |= other[limit.column]
                limit.check(len(merged[limit.column]))
        return merged

    def extract_output(self, accumulator):
        return {column: len(values) for column, values in accumulator.items()}
