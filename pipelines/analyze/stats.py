"""Per-column statistics of the raw data, for run.json and the report, computed in the analysis pass.

Exact count, missing count, mean, population standard deviation (what `tft.scale_to_z_score` uses),
min and max; quantiles that are values of the data, exact while a numeric column has at most
`EXACT_NUMBERS` distinct values and read from tfx_bsl's quantiles sketch (eps 0.005) past that; a
histogram from that sketch. A string column's distinct count is exact while it has at most
`EXACT_DISTINCT` distinct values, and a KMV sketch's estimate past that; its top values are only the
truly frequent ones, with exact counts (`frequent_values`): counted exactly up to `EXACT_DISTINCT`
values, past that the Misra-Gries summary's candidates (`top_candidates`) counted by the transform
pass. `result()["exact"]` says which statistics are exact, so the run.json, the report and `inspect`
can mark the estimates ("~1,446"). A string value past `MAX_VALUE_BYTES` is kept cut (`capped`).
docs/statistics.md says what each figure is.

The statistics follow what the transform makes of a column, not its storage type: an int column whose values are
categories (a vocabulary, a hash: `RawStatsFn`'s `categorical`) is counted as text (distinct and top values, the
OOV rate's context), and a datetime column (`dates`) also keeps its date range, read by the graph's own parser
(`datetime_parts.wall_clock`). A column holding one value is `constant`.

The pass yields *partial* statistics (`state()`: plain JSON) per dataset key, and `summarize` merges
them. That JSON is also what the analyzer cache keeps per input file, so a rerun over mostly
unchanged files reads only the new ones and still reports statistics over all of them. A quantile
sketch is kept as `SKETCH_POINTS` weighted points, which is what bounds its precision across reruns.
"""

from __future__ import annotations

import base64
import hashlib
import math
from datetime import datetime, timedelta

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import tensorflow as tf
from tfx_bsl import sketches

from skewless.pipelines.reading.columns import RawColumn
from skewless.transforms.datetime_parts import wall_clock

TOP_BUCKETS = 1000
EXACT_DISTINCT = 10_000
EXACT_NUMBERS = 1_000  # a numeric column's values are counted exactly up to this many distinct ones
# rows of one value that a float32 weight (what the Misra-Gries sketch takes) holds exactly
_EXACT_FLOAT32 = 2**24
TOP_VALUES = 20
QUANTILES = 10  # deciles: 11 boundaries from min to max
HISTOGRAM_BINS = 20
SKETCH_POINTS = 1000
# A string value longer than this is counted, kept and shown cut (`capped`): one 50 MB field must not be copied
# into every sketch, state, run.json and report
MAX_VALUE_BYTES = 256
SHOWN_BYTES = 64  # the start of a cut value that is kept


class ColumnStats:
    """One column's mergeable statistics."""

    def __init__(self, kind: str, count_exactly: bool = True, timezone: str | None = None):
        self.kind = kind
        # a datetime column's: the zone whose wall clock its date range is read on (None: no date range), and the
        # earliest and latest values as that wall clock's seconds since 1970 (the graph's `<name>` output)
        self.timezone = timezone
        self.first_second = math.inf
        self.last_second = -math.inf
        # value -> rows, while there are at most EXACT_DISTINCT strings or EXACT_NUMBERS numbers; None once past
        # (or for images)
        self.exact: dict | None = {} if count_exactly else None
        self.count = 0
        self.missing = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.min = math.inf
        self.max = -math.inf
        self.zeros = 0  # numeric values equal to 0
        self.total_length = 0  # bytes in all string values, for their average length
        if kind == "bytes":
            self.top = sketches.MisraGriesSketch(TOP_BUCKETS)
            self.distinct = sketches.KmvSketch(1024)
        else:
            self.quantiles = sketches.QuantilesSketch(0.005, 1 << 32, 1)

    # -- plain JSON state: Beam's pickling, the staging file and the analyzer cache all use it

    def state(self) -> dict:
        state = {"kind": self.kind, "count": self.count, "missing": self.missing, "mean": self.mean, "m2": self.m2,
                 "min": self.min if self.count else None, "max": self.max if self.count else None,
                 "zeros": self.zeros, "total_length": self.total_length}
        if self.timezone is not None:
            state["timezone"] = self.timezone
            state["seconds"] = [self.first_second, self.last_second] if self.first_second <= self.last_second else None
        if self.kind == "bytes":
            state["top"] = base64.b64encode(self.top.Serialize()).decode()
            state["distinct"] = base64.b64encode(self.distinct.Serialize()).decode()
            state["exact"] = None if self.exact is None else [
                [base64.b64encode(value).decode(), count] for value, count in self.exact.items()]
        else:
            state["points"], state["weights"] = self._sketch_points()
            state["exact"] = None if self.exact is None else [[value, count] for value, count in self.exact.items()]
        return state

    @classmethod
    def from_state(cls, state: dict) -> "ColumnStats":
        stats = cls(state["kind"])
        stats._restore(state, sketches)
        return stats

    def _restore(self, state: dict, sketches) -> None:
        self.count, self.missing, self.mean, self.m2 = state["count"], state["missing"], state["mean"], state["m2"]
        self.min = math.inf if state["min"] is None else state["min"]
        self.max = -math.inf if state["max"] is None else state["max"]
        # absent in statistics cached before they were counted
        self.zeros, self.total_length = state.get("zeros", 0), state.get("total_length", 0)
        self.timezone = state.get("timezone")
        self.first_second, self.last_second = state.get("seconds") or (math.inf, -math.inf)
        if self.kind == "bytes":
            self.top = sketches.MisraGriesSketch.Deserialize(base64.b64decode(state["top"]))
            self.distinct = sketches.KmvSketch.Deserialize(base64.b64decode(state["distinct"]))
            counts = state.get("exact")  # absent in statistics cached before exact counts existed
            self.exact = None if counts is None else {base64.b64decode(value): count for value, count in counts}
        else:
            if state["points"]:
                self.quantiles.AddValues(pa.array(state["points"], pa.float64()),
                                         pa.array(state["weights"], pa.float64()))
            counts = state.get("exact")  # absent in statistics cached before numbers were counted exactly
            self.exact = None if counts is None else {float(value): count for value, count in counts}

    def __getstate__(self):
        return self.state()

    def __setstate__(self, state):
        self.kind = state["kind"]
        if self.kind == "bytes":
            self.top = self.distinct = None
        else:
            self.quantiles = sketches.QuantilesSketch(0.005, 1 << 32, 1)
        self._restore(state, sketches)

    def _sketch_points(self) -> tuple[list[float], list[float]]:
        if self.count == 0:
            return [], []
        # reading quantiles finalizes a sketch: read a copy, so this one can still take values
        copy = sketches.QuantilesSketch(0.005, 1 << 32, 1)
        copy.Merge(self.quantiles)
        bounds, cumulative = copy.GetQuantilesAndCumulativeWeights(SKETCH_POINTS)
        bounds = np.asarray(bounds.flatten().to_numpy(), dtype=np.float64)
        weights = np.diff(np.asarray(cumulative.flatten().to_numpy(), dtype=np.float64), prepend=0.0)
        return bounds.tolist(), weights.tolist()

    # -- accumulation

    def add(self, values: pa.Array) -> None:
        present = values.drop_null()
        self.missing += len(values) - len(present)
        if len(present) == 0:
            return
        if self.timezone is not None:
            self._add_seconds(present)
        if self.kind == "bytes":
            self.total_length += pc.sum(pc.binary_length(present.cast(pa.binary()))).as_py()  # of the whole values
            present = capped(present)
            self._merge_moments(len(present), 0.0, 0.0)
            counted = pc.value_counts(present) if self.exact is not None else None
            if counted is not None and len(counted) > EXACT_DISTINCT:
                self.exact = None  # this batch alone has too many values: no Python pass over them
            elif counted is not None:
                self._add_exact(zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist()))
            if self.exact is not None and len(self.exact) <= TOP_BUCKETS and len(present) < _EXACT_FLOAT32:
                # every value so far has a bucket of the summary, which then counts each exactly, fed each distinct
                # value once with its rows as fed every row; the distinct-count sketch keeps hashes, whatever repeats
                # (tests/pipelines/test_exact_statistics.py). 1M census rows: 0.56 -> 0.21 CPU s of string columns
                self.top.AddValues(counted.field("values"), counted.field("counts").cast(pa.float32()))
                self.distinct.AddValues(counted.field("values"))
            else:
                self.top.AddValues(present)
                self.distinct.AddValues(present)
            return
        data = present.to_numpy(zero_copy_only=False).astype(np.float64)
        self._merge_moments(len(data), float(data.mean()), float(((data - data.mean()) ** 2).sum()))
        self.min = min(self.min, float(data.min()))
        self.max = max(self.max, float(data.max()))
        self.zeros += int(np.count_nonzero(data == 0))
        self.quantiles.AddValues(pa.array(data))
        if self.exact is not None:
            values, counts = np.unique(data, return_counts=True)
            if len(values) > EXACT_NUMBERS:
                self.exact = None
            else:
                self._add_exact(zip(values.tolist(), counts.tolist()))

    def _add_seconds(self, present: pa.Array) -> None:
        """Widens the date range by these values (text or epoch seconds), as the graph reads them; a value it
        cannot read went to quarantine before statistics."""
        if pa.types.is_integer(present.type):
            values = tf.constant(present.to_numpy(zero_copy_only=False).astype(np.int64))
        else:
            values = tf.constant(present.cast(pa.binary()).to_pylist(), tf.string)
        valid, seconds = wall_clock(values, self.timezone)
        seconds = seconds.numpy()[valid.numpy()]
        if len(seconds):
            self.first_second = min(self.first_second, int(seconds.min()))
            self.last_second = max(self.last_second, int(seconds.max()))

    def _add_exact(self, counts) -> None:
        """Adds (value, rows) pairs to the exact counts, and drops them once they hold too many values."""
        exact = self.exact
        for value, count in counts:
            exact[value] = exact.get(value, 0) + count
        if len(exact) > (EXACT_DISTINCT if self.kind == "bytes" else EXACT_NUMBERS):
            self.exact = None  # the sketches, fed all along, take over

    def _merge_moments(self, count: int, mean: float, m2: float) -> None:
        # Chan et al.'s pairwise update: stable when merging partial results from many workers
        total = self.count + count
        if total == 0:
            return
        delta = mean - self.mean
        self.mean += delta * count / total
        self.m2 += m2 + delta * delta * self.count * count / total
        self.count = total

    def merge(self, other: "ColumnStats") -> None:
        self.missing += other.missing
        self._merge_moments(other.count, other.mean, other.m2)
        self.min, self.max = min(self.min, other.min), max(self.max, other.max)
        self.zeros += other.zeros
        self.total_length += other.total_length
        self.first_second = min(self.first_second, other.first_second)
        self.last_second = max(self.last_second, other.last_second)
        if self.kind == "bytes":
            self.top.Merge(other.top)
            self.distinct.Merge(other.distinct)
        else:
            self.quantiles.Merge(other.quantiles)
        if self.exact is not None and other.exact is not None:
            self._add_exact(other.exact.items())
        else:
            self.exact = None

    def result(self) -> dict:
        out = {"count": self.count, "missing": self.missing}
        rows = self.count + self.missing
        out["missing_fraction"] = self.missing / rows if rows else 0.0
        if self.first_second <= self.last_second:
            out["date_range"] = {"min": wall_clock_text(self.first_second), "max": wall_clock_text(self.last_second),
                                 "timezone": self.timezone}
        if self.kind == "bytes":
            out["distinct"] = len(self.exact) if self.exact is not None else int(self.distinct.Estimate())
            top, out["listed_from"] = self.frequent_values(TOP_VALUES)
            out["top_values"] = [[value.decode("utf-8", "replace"), count] for value, count in top]
            out["exact"] = {"distinct": self.exact is not None, "top_values": out["listed_from"] is not None}
            out["constant"] = self.exact is not None and len(self.exact) == 1
            return out
        if self.count == 0:
            return out
        out.update(mean=self.mean, std=math.sqrt(self.m2 / self.count), min=self.min, max=self.max)
        out["constant"] = self.min == self.max
        # quantiles: exact counts while the column has at most EXACT_NUMBERS values, else the quantiles sketch's
        out["exact"] = {"quantiles": self.exact is not None, "histogram": False}
        out["quantiles"] = self.quantiles_of(QUANTILES)
        edges, counts = self.histogram(HISTOGRAM_BINS)
        out["histogram"] = {"edges": edges.tolist(), "counts": [int(round(c)) for c in counts]}
        return out

    def candidates(self) -> list[bytes] | None:
        """The values that may be in more than 1/(TOP_BUCKETS + 1) of the rows, past EXACT_DISTINCT values (the
        Misra-Gries summary holds every such value, among others); None while the values are counted exactly."""
        if self.kind != "bytes" or self.exact is not None:
            return None
        return [item["values"] for item in self.top.Estimate().to_pylist()]

    def frequent_values(self, n: int, counts: dict[bytes, int] | None = None,
                        floor: int | None = None) -> tuple[list[tuple[bytes, int]], int | None]:
        """The `n` most frequent values that are truly frequent, with exact rows, and the fewest rows a listed
        value may have: a value is listed when it is in 2 rows or more and, past EXACT_DISTINCT values, in more
        than 1/(TOP_BUCKETS + 1) of them (`frequent_floor`), where the summary is sure to hold it; `counts` are
        then the summary's candidates counted exactly by the transform pass, `floor` that share of all the
        rows (a split's values are listed against the whole input's). A column with no such value lists none.
        Without exact counts: the summary's estimates and None (marked as estimates)."""
        if self.exact is not None:
            counts, floor = self.exact, 2
        elif counts is None:
            return self.top_values(n), None
        floor = floor if floor is not None else frequent_floor(self.count)
        listed = sorted(((v, c) for v, c in counts.items() if c >= floor), key=lambda item: (-item[1], item[0]))
        return listed[:n], floor

    def top_values(self, n: int) -> list[tuple[bytes, int]]:
        """The `n` most frequent values with their rows, most frequent first (ties by value): exact counts
        while `self.exact` holds them, else the Misra-Gries sketch's estimates (at most `TOP_BUCKETS`)."""
        if self.exact is not None:
            return sorted(self.exact.items(), key=lambda item: (-item[1], item[0]))[:n]
        return [(item["values"], int(item["counts"])) for item in self.top.Estimate().to_pylist()[:n]]

    def distribution(self) -> tuple[np.ndarray, np.ndarray]:
        """Values of the column, increasing, and the rows each stands for: the rows above the previous value and up
        to this one. Every value with its exact count while the column has at most `EXACT_NUMBERS` values (counts,
        flags, ages); past that the quantiles sketch's points, values of the data whose ranks are within the
        sketch's error (measured: 0.00024 of the rows at 1M normal values)."""
        if self.exact:
            values = np.array(sorted(self.exact), dtype=np.float64)
            return values, np.array([self.exact[value] for value in values.tolist()], dtype=np.float64)
        points, weights = self._sketch_points()
        values, first = np.unique(np.asarray(points, dtype=np.float64), return_index=True)
        # a value read several times comes back with its rows on the first reading and 0 on the others
        rows = np.add.reduceat(np.asarray(weights, dtype=np.float64), first) if len(first) else np.zeros(0)
        return values, rows

    def quantiles_of(self, buckets: int) -> list[float]:
        """The `buckets + 1` boundaries of equally filled buckets: each the smallest value of the data (a sketch
        point) with at least that share of the rows at or below it, as TFDV's are, so an integer column's median
        is an integer; the ends are the exact min and max."""
        values, rows = self.distribution()
        cumulative = np.cumsum(rows)
        targets = np.linspace(0, 1, buckets + 1) * cumulative[-1]
        # a float sum can fall a hair short of a target it reaches: compare within a part in 1e9
        ranks = np.searchsorted(cumulative, targets * (1 - 1e-9), side="left")
        boundaries = values[np.minimum(ranks, len(values) - 1)].tolist()
        boundaries[0], boundaries[-1] = self.min, self.max
        return boundaries

    def histogram(self, bins: int) -> tuple[np.ndarray, np.ndarray]:
        """`bins` equal-width buckets from min to max: edges, and rows per bucket read from the quantiles
        sketch (fractional: interpolated), which sum to the exact count."""
        points, weights = self._sketch_points()
        bounds, cumulative = np.asarray(points), np.cumsum(weights)
        edges = np.linspace(self.min, self.max, bins + 1)
        # rows at or below each edge, from the sketch's cumulative weights, scaled to the exact count
        below = np.interp(edges, bounds, cumulative / cumulative[-1] * self.count, left=0.0)
        below[0], below[-1] = 0.0, self.count
        return edges, np.diff(below)


def wall_clock_text(seconds: int) -> str:
    """Wall-clock seconds since 1970-01-01 as ISO-8601 text: the date alone at midnight, else the date and time."""
    moment = datetime(1970, 1, 1) + timedelta(seconds=seconds)
    return moment.date().isoformat() if moment.time() == datetime.min.time() else moment.isoformat()


def frequent_floor(rows: int) -> int:
    """The fewest rows of a value listed among the most frequent past EXACT_DISTINCT values: more than
    1/(TOP_BUCKETS + 1) of `rows`, the share above which the Misra-Gries summary is sure to hold it."""
    return max(2, rows // (TOP_BUCKETS + 1) + 1)


def top_candidates(partials: list[dict], columns: list[str]) -> dict[str, dict]:
    """The analysis pass's partial statistics ({column: state}) -> per string column of `columns` (those with
    values to count: not images) past EXACT_DISTINCT values, the values its merged summary holds
    (`ColumnStats.candidates`) and the fewest rows a listed one has: what the transform pass counts exactly."""
    merged = summarized(partials)
    found = {}
    for name in columns:
        stats = merged.get(name)
        values = None if stats is None else stats.candidates()
        if values is not None:
            found[name] = {"values": values, "floor": frequent_floor(stats.count)}
    return found


def cut_value(value: bytes) -> bytes:
    """A value too long to keep: its first `SHOWN_BYTES` (whole UTF-8 characters), its length and a digest, so two
    long values stay two values and the cut one can be found in the data."""
    start = value[:SHOWN_BYTES].decode("utf-8", "ignore").encode()
    return start + f"… [{len(value):,} bytes, sha256 {hashlib.sha256(value).hexdigest()[:16]}]".encode()


def capped(values: pa.Array) -> pa.Array:
    """String values as binary, each longer than `MAX_VALUE_BYTES` replaced by its `cut_value`."""
    values = values.cast(pa.binary())
    long = pc.fill_null(pc.greater(pc.binary_length(values), MAX_VALUE_BYTES), False)
    if not pc.any(long).as_py():
        return values
    cut = [cut_value(value) for value in values.filter(long).to_pylist()]
    return pc.replace_with_mask(values, long, pa.array(cut, pa.binary()))


def column_values(table: pa.Table, column: RawColumn, as_text: bool = False) -> pa.Array:
    """The values a column's statistics are over: a list column's values, a feature list's values of all its steps;
    `as_text`: numbers as their text (categories: a vocabulary of ints counts "7" as TFDV does)."""
    values = table.column(column.name).combine_chunks()
    if column.is_list or column.sequence:
        values = pc.list_flatten(values)
    if column.sequence:
        values = pc.list_flatten(values)
    return values.cast(pa.string()) if as_text and column.kind != "bytes" else values


class RawStatsFn(beam.CombineFn):
    """Combines raw-column Arrow tables into partial statistics: {column: ColumnStats.state()}.

    `categorical`: int columns whose values are categories, counted as text; `dates`: datetime columns -> the zone
    their date range is read in."""

    def __init__(self, columns: list[RawColumn], categorical: frozenset[str] = frozenset(),
                 dates: dict[str, str] | None = None):
        self._columns = columns
        self._as_text = frozenset(c.name for c in columns if c.name in categorical and c.kind != "bytes")
        self._dates = dates or {}

    def create_accumulator(self):
        # encoded images are not values to count
        return {c.name: ColumnStats("bytes" if c.name in self._as_text else c.kind, count_exactly=not c.image,
                                    timezone=self._dates.get(c.name)) for c in self._columns}

    def counts_like(self, partial: dict | None) -> bool:
        """Whether partial statistics (cached by an earlier run) count each column as this does: a column whose
        transform became a vocabulary, or a datetime, is counted anew."""
        if partial is None:
            return False
        made = self.create_accumulator()
        return all(name in partial and partial[name]["kind"] == stats.kind
                   and partial[name].get("timezone") == stats.timezone for name, stats in made.items())

    def add_input(self, accumulator, table: pa.Table):
        return self.add_columns(accumulator, table, range(len(self._columns)))

    def add_columns(self, accumulator, table: pa.Table, positions) -> dict:
        """`add_input` for the columns at `positions` only: each column's statistics are its own, so calls on
        disjoint positions may run on threads at once."""
        for position in positions:
            column = self._columns[position]
            accumulator[column.name].add(column_values(table, column, column.name in self._as_text))
        return accumulator

    def column_parts(self, parts: int) -> list[range]:
        """The column positions cut into up to `parts` interleaved parts, for `add_columns` on as many threads."""
        parts = max(1, min(parts, len(self._columns)))
        return [range(start, len(self._columns), parts) for start in range(parts)]

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        merged = next(accumulators)
        for other in accumulators:
            for name, stats in other.items():
                merged[name].merge(stats)
        return merged

    def extract_output(self, accumulator):
        return {name: stats.state() for name, stats in accumulator.items()}


def summarized(partials: list[dict]) -> dict[str, ColumnStats]:
    """Merges partial statistics ({column: state}) into {column: ColumnStats}."""
    merged: dict[str, ColumnStats] = {}
    for partial in partials:
        for name, state in partial.items():
            stats = ColumnStats.from_state(state)
            if name in merged:
                merged[name].merge(stats)
            else:
                merged[name] = stats
    return merged


def summarize(partials: list[dict], candidate_counts: dict[str, dict[bytes, int]] | None = None) -> dict:
    """Merges partial statistics ({column: state}) into {column: statistics}; a string column's top values are
    exact where `candidate_counts` (the transform pass's) has its candidates' rows."""
    results = {}
    for name, stats in summarized(partials).items():
        results[name] = stats.result()
        if (candidate_counts or {}).get(name) is not None and stats.candidates() is not None:
            top, floor = stats.frequent_values(TOP_VALUES, candidate_counts[name])
            results[name].update(top_values=[[v.decode("utf-8", "replace"), c] for v, c in top], listed_from=floor)
            results[name]["exact"]["top_values"] = True
    return results
