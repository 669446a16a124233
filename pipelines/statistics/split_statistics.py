"""Raw statistics per split, written as TFX StatisticsGen writes them: RUN_DIR/statistics/Split-{split}/FeatureStats.pb.

A row's split is decided in the transform pass, so each unit counts the raw rows it writes to each split
(`SplitStatistics`, the values through `stats.ColumnStats`) and puts their mergeable state in its summary;
the assembly merges the units' states in unit order and writes one binary
`tensorflow_metadata.proto.v0.statistics_pb2.DatasetFeatureStatisticsList` per split.

Exact: num_examples, missing counts, values per row (and their num_values_histogram), mean, std_dev, num_zeros,
min, max, avg_length; unique and rank_histogram while a string feature has at most `stats.EXACT_DISTINCT`
values, its top_values always (only truly frequent values: `ColumnStats.frequent_values`; past that many
values, the analysis pass's candidates counted here); the median, the QUANTILES histogram's boundaries and the
"distribution" custom histogram `skewless validate` bins (`_distribution`) while a numeric feature has at most
`stats.EXACT_NUMBERS` values, else read from the quantiles sketch (values of the data, within its rank error).
Always from the sketch: the STANDARD histogram (its sample counts are interpolated, and sum to the exact
count). No weights are read, so no weighted_* statistics are written (TFDV too writes them only with a weight
feature). Each feature names its approximate statistics in a custom_stats entry "approximate"
(`statistics_files.APPROXIMATE`). docs/statistics.md says what each figure is.
"""

from __future__ import annotations

import base64

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tensorflow_metadata.proto.v0 import statistics_pb2

from skewless.pipelines.output import files
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.analyze.stats import (
    HISTOGRAM_BINS, QUANTILES, TOP_VALUES, ColumnStats, RawStatsFn, capped, column_values,
)
from skewless.statistics_files import APPROXIMATE, DISTRIBUTION, statistics_path

RANK_HISTOGRAM_BUCKETS = 1000  # TFDV's default num_rank_histogram_buckets
NUM_VALUES_BUCKETS = 10  # TFDV's default num_values_histogram_buckets


def _values_per_row(values: pa.Array, column: RawColumn) -> tuple[np.ndarray, np.ndarray]:
    """Whether each row of a list column has the feature, and how many values it has (all steps' values for a
    feature list)."""
    present = values.is_valid().to_numpy(zero_copy_only=False)
    offsets = np.asarray(values.offsets, dtype=np.int64)
    if column.sequence:
        # values up to each step, read at the rows' step offsets
        step_lengths = pc.fill_null(pc.list_value_length(values.values), 0).to_numpy(zero_copy_only=False)
        upto = np.concatenate([[0], np.cumsum(step_lengths, dtype=np.int64)])
        return present, upto[offsets[1:]] - upto[offsets[:-1]]
    return present, np.diff(offsets)


class ValuesPerRow:
    """Rows with the feature and how many values they hold, counted per number of values: TFDV's common statistics
    and its num_values_histogram. The numbers of values a column's rows take are few (1 for a plain column, the
    list lengths for a list), so they are counted exactly."""

    def __init__(self, state: dict | None = None):
        self.rows: dict[int, int] = {int(length): rows for length, rows in (state or {}).get("lengths", [])}

    def add(self, present: np.ndarray, counts: np.ndarray) -> None:
        lengths, rows = np.unique(counts[present], return_counts=True)
        for length, count in zip(lengths.tolist(), rows.tolist()):
            self.add_rows(length, count)

    def add_rows(self, length: int, rows: int) -> None:
        """`rows` more rows with `length` values each."""
        if rows:
            self.rows[length] = self.rows.get(length, 0) + rows

    def merge(self, other: "ValuesPerRow") -> None:
        for length, count in other.rows.items():
            self.rows[length] = self.rows.get(length, 0) + count

    def state(self) -> dict:
        return {"lengths": sorted(self.rows.items())}

    @property
    def present(self) -> int:
        return sum(self.rows.values())

    @property
    def total(self) -> int:
        return sum(length * count for length, count in self.rows.items())

    def quantiles(self, buckets: int) -> list[int]:
        """The `buckets + 1` boundaries of equally filled buckets of values per row, each a number some row has."""
        lengths = sorted(self.rows)
        cumulative = np.cumsum([self.rows[length] for length in lengths])
        ranks = np.searchsorted(cumulative, np.linspace(0, 1, buckets + 1) * cumulative[-1], side="left")
        return [lengths[rank] for rank in np.minimum(ranks, len(lengths) - 1)]


class SplitStatistics:
    """The raw statistics of the rows one unit writes to one split; `state()` is plain JSON for its summary.

    An int column in `categorical` (a vocabulary or hash of ints) is also counted by value, as text: TFDV
    gives such a feature string statistics, so its values compare as categories.
    """

    def __init__(self, columns: list[RawColumn], categorical: frozenset[str] = frozenset(),
                 candidates: dict[str, dict] | None = None, counted_columns: dict | None = None):
        self._columns = columns
        # string columns past EXACT_DISTINCT values: the analysis pass's candidates for their most frequent values
        # (`stats.top_candidates`), counted exactly here
        self._candidates = {name: (pa.array(c["values"], pa.binary()), c["floor"])
                            for name, c in (candidates or {}).items()}
        self.candidate_counts: dict[str, dict[bytes, int]] = {name: {} for name in self._candidates}
        self._values = RawStatsFn(columns)  # the job's one way to turn a raw table into column statistics
        self.rows = 0
        # `counted_columns`: the `RawStatsFn` state of exactly the rows this split will be given, in the same
        # tables (the analysis pass's, when every row goes to this split): its columns are not counted again
        self._counted_columns = counted_columns
        self.columns = self._values.create_accumulator() if counted_columns is None else None
        self.per_row = {column.name: ValuesPerRow() for column in columns}
        self._categorical_ints = [c for c in columns if c.kind == "int" and c.name in categorical]
        self.values_as_text = {column.name: ColumnStats("bytes") for column in self._categorical_ints}

    def add(self, table: pa.Table) -> None:
        self.rows += table.num_rows
        if self.columns is not None:
            self._values.add_input(self.columns, table)
        for column in self._columns:
            values = table.column(column.name)
            if column.is_list or column.sequence:
                self.per_row[column.name].add(*_values_per_row(values.combine_chunks(), column))
            else:  # one value in each row that has one: no array to count (a sort of every column's rows before)
                self.per_row[column.name].add_rows(1, len(values) - values.null_count)
        for column in self._categorical_ints:
            self.values_as_text[column.name].add(column_values(table, column, as_text=True))
        for column in self._columns:
            if column.name in self._candidates:
                # a categorical int's candidates are its values as text
                values = capped(column_values(table, column, column.name in self.values_as_text).drop_null())
                counted = pc.value_counts(values.filter(pc.is_in(values, value_set=self._candidates[column.name][0])))
                counts = self.candidate_counts[column.name]
                for value, count in zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist()):
                    counts[value] = counts.get(value, 0) + count

    def state(self) -> dict:
        return {
            "rows": self.rows,
            "columns": self._counted_columns if self.columns is None
            else {name: stats.state() for name, stats in self.columns.items()},
            "per_row": {name: counts.state() for name, counts in self.per_row.items()},
            "values_as_text": {name: stats.state() for name, stats in self.values_as_text.items()},
            "candidates": {name: {"floor": self._candidates[name][1],
                                  "counts": [[base64.b64encode(v).decode(), c] for v, c in counts.items()]}
                           for name, counts in self.candidate_counts.items()},
        }


def add_by_split(statistics: dict[str, SplitStatistics], table: pa.Table, split_index: np.ndarray) -> None:
    """Adds each row of `table` to its split's statistics (`split_index`: the place of its split in `statistics`),
    the whole table where all its rows go to one split (the sketches' results depend on how rows are grouped)."""
    for index, split in enumerate(statistics):
        rows = np.flatnonzero(split_index == index)
        if len(rows) == table.num_rows:
            statistics[split].add(table)
        elif len(rows):
            statistics[split].add(table.take(pa.array(rows)))


def _merged(merged: dict, name: str, part) -> None:
    if name in merged:
        merged[name].merge(part)
    else:
        merged[name] = part


def candidate_counts(states: list[dict]) -> dict[str, tuple[dict[bytes, int], int]]:
    """The rows of each candidate value (`SplitStatistics`' candidates), summed over `states`, and the fewest rows
    a listed value has: {column: (counts, floor)}."""
    summed = {}
    for state in states:
        for name, found in state["candidates"].items():
            counts, _ = summed.setdefault(name, ({}, found["floor"]))
            for value, count in found["counts"]:
                value = base64.b64decode(value)
                counts[value] = counts.get(value, 0) + count
    return summed


def merge_states(states: list[dict]) -> tuple[int, dict[str, ColumnStats], dict[str, ValuesPerRow],
                                               dict[str, ColumnStats]]:
    """The units' `SplitStatistics.state()`s of one split, merged in the order given: rows, and per column its
    values' statistics, its values per row, and (categorical ints) its values' counts as text."""
    rows, columns, per_row, as_text = 0, {}, {}, {}
    for state in states:
        rows += state["rows"]
        for name, column_state in state["columns"].items():
            _merged(columns, name, ColumnStats.from_state(column_state))
        for name, counts_state in state["per_row"].items():
            _merged(per_row, name, ValuesPerRow(counts_state))
        for name, text_state in state["values_as_text"].items():
            _merged(as_text, name, ColumnStats.from_state(text_state))
    return rows, columns, per_row, as_text


def dataset_statistics(split: str, states: list[dict], columns: list[RawColumn]):
    """One split's units' states -> a DatasetFeatureStatisticsList holding that split's dataset."""
    rows, stats, per_row, as_text = merge_states(states)
    candidates = candidate_counts(states)
    result = statistics_pb2.DatasetFeatureStatisticsList()
    dataset = result.datasets.add(name=split, num_examples=rows)
    for column in columns:
        feature = dataset.features.add()
        feature.path.step.append(column.name)
        common = _common_statistics(rows, per_row[column.name])
        column_stats = stats[column.name]
        if column.name in as_text:  # a categorical int: its values counted as text, as TFDV does
            feature.type = statistics_pb2.FeatureNameStatistics.INT
            exact = _string(feature.string_stats, common, as_text[column.name])
            approximate = "" if exact else "unique, top_values, rank_histogram"
        elif column.kind != "bytes":
            feature.type = statistics_pb2.FeatureNameStatistics.INT if column.kind == "int" else \
                statistics_pb2.FeatureNameStatistics.FLOAT
            _numeric(feature.num_stats, common, column_stats)
            if column_stats.count:
                _distribution(feature, column_stats)
            # counted exactly while the column has at most stats.EXACT_NUMBERS values, else read from the sketch
            approximate = "histograms" if column_stats.exact is not None else "median, histograms, distribution"
        elif column.image:
            feature.type = statistics_pb2.FeatureNameStatistics.BYTES
            feature.bytes_stats.common_stats.CopyFrom(common)
            if column_stats.count:
                feature.bytes_stats.avg_num_bytes = column_stats.total_length / column_stats.count
            approximate = ""
        else:
            feature.type = statistics_pb2.FeatureNameStatistics.STRING
            exact = _string(feature.string_stats, common, column_stats, candidates.get(column.name))
            approximate = "" if exact else "unique, top_values, rank_histogram"
            if not exact and column.name in candidates:  # top values and rank histogram: the candidates' exact rows
                approximate = "unique"
        if approximate:
            feature.custom_stats.add(name=APPROXIMATE, str=approximate)
    return result


def _common_statistics(rows: int, counts: ValuesPerRow):
    """TFDV's CommonStatistics, with its num_values_histogram: QUANTILES buckets of the values per row (as TFDV,
    `NUM_VALUES_BUCKETS` of equal rows, boundaries that rows have)."""
    present = counts.present
    common = statistics_pb2.CommonStatistics(num_non_missing=present, num_missing=rows - present,
                                             tot_num_values=counts.total)
    if present:
        common.min_num_values, common.max_num_values = min(counts.rows), max(counts.rows)
        common.avg_num_values = counts.total / present
        histogram = common.num_values_histogram
        histogram.type = statistics_pb2.Histogram.QUANTILES
        boundaries = counts.quantiles(NUM_VALUES_BUCKETS)
        for low, high in zip(boundaries[:-1], boundaries[1:]):
            histogram.buckets.add(low_value=low, high_value=high, sample_count=present / NUM_VALUES_BUCKETS)
    return common


def _numeric(numeric, common, stats: ColumnStats) -> None:
    numeric.common_stats.CopyFrom(common)
    result = stats.result()
    if not stats.count:
        return
    numeric.mean, numeric.std_dev = result["mean"], result["std"]
    numeric.min, numeric.max, numeric.num_zeros = stats.min, stats.max, stats.zeros
    quantiles = stats.quantiles_of(QUANTILES)
    numeric.median = quantiles[QUANTILES // 2]
    edges, counts = stats.histogram(HISTOGRAM_BINS)
    standard = numeric.histograms.add(type=statistics_pb2.Histogram.STANDARD)
    for low, high, count in zip(edges[:-1], edges[1:], counts):
        standard.buckets.add(low_value=low, high_value=high, sample_count=count)
    quantile = numeric.histograms.add(type=statistics_pb2.Histogram.QUANTILES)
    for low, high in zip(quantiles[:-1], quantiles[1:]):
        quantile.buckets.add(low_value=low, high_value=high, sample_count=stats.count / QUANTILES)


def _distribution(feature, stats: ColumnStats) -> None:
    """The custom statistic `skewless validate` bins numeric values with (`statistics_files.DISTRIBUTION`):
    `ColumnStats.distribution`'s values as buckets (previous value, value] holding their rows, the first
    [min, min]."""
    values, rows = stats.distribution()
    histogram = feature.custom_stats.add(name=DISTRIBUTION).histogram
    histogram.type = statistics_pb2.Histogram.STANDARD
    for low, high, count in zip(np.concatenate([values[:1], values[:-1]]), values, rows):
        histogram.buckets.add(low_value=low, high_value=high, sample_count=count)


def _string(strings, common, stats: ColumnStats, candidates: tuple[dict[bytes, int], int] | None = None) -> bool:
    """Fills StringStatistics; whether its unique count and value counts are exact. Top values: the truly frequent
    ones (`ColumnStats.frequent_values`), from `candidates` (their exact rows, and the fewest rows listed) past
    EXACT_DISTINCT values."""
    strings.common_stats.CopyFrom(common)
    result = stats.result()
    strings.unique = result["distinct"]
    if stats.count:
        strings.avg_length = stats.total_length / stats.count
    top, _ = stats.frequent_values(TOP_VALUES, *(candidates or (None, None)))
    for value, count in top:
        strings.top_values.add(value=value.decode("utf-8", "replace"), frequency=count)
    # as TFDV: up to 1,000 values in the rank histogram, the value distribution `skewless validate` compares;
    # past EXACT_DISTINCT values, the candidates with their exact rows
    ranked = stats.top_values(RANK_HISTOGRAM_BUCKETS) if candidates is None else sorted(
        candidates[0].items(), key=lambda item: (-item[1], item[0]))[:RANK_HISTOGRAM_BUCKETS]
    for rank, (value, count) in enumerate(ranked):
        strings.rank_histogram.buckets.add(low_rank=rank, high_rank=rank, label=value.decode("utf-8", "replace"),
                                           sample_count=count)
    return result["exact"]["distinct"]


def write_states(run_dir: str, states: dict[str, list[dict]], columns: list[RawColumn]) -> None:
    """Writes every split's FeatureStats.pb from its `SplitStatistics.state()`s ({split: states, merged in order})."""
    for split, split_states in states.items():
        proto = dataset_statistics(split, split_states, columns)
        files.write_bytes(statistics_path(run_dir, split), proto.SerializeToString(deterministic=True))

