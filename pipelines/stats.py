"""Per-column statistics of the raw data, for run.json and the report, computed in the analysis pass.

Exact count, missing count, mean, population standard deviation (what `tft.scale_to_z_score` uses),
min and max; quantiles and a histogram from tfx_bsl's quantiles sketch (eps 0.005); top values and
the number of distinct values from tfx_bsl's Misra-Gries and KMV sketches (exact while a column has at
most `TOP_BUCKETS` distinct values).
"""

from __future__ import annotations

import math

import apache_beam as beam
import numpy as np
import pyarrow as pa

from skewless.pipelines.columns import RawColumn

TOP_BUCKETS = 1000
TOP_VALUES = 20
QUANTILES = 10  # deciles: 11 boundaries from min to max
HISTOGRAM_BINS = 20


class _ColumnStats:
    """One column's accumulator; sketches are pickled through their own Serialize where they have one."""

    def __init__(self, kind: str):
        from tfx_bsl import sketches

        self.kind = kind
        self.count = 0
        self.missing = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.min = math.inf
        self.max = -math.inf
        if kind == "bytes":
            self.top = sketches.MisraGriesSketch(TOP_BUCKETS)
            self.distinct = sketches.KmvSketch(1024)
            self.quantiles = None
        else:
            self.top = self.distinct = None
            self.quantiles = sketches.QuantilesSketch(0.005, 1 << 32, 1)

    def __getstate__(self):
        state = dict(self.__dict__)
        if self.kind == "bytes":
            state["top"] = self.top.Serialize()
            state["distinct"] = self.distinct.Serialize()
        return state

    def __setstate__(self, state):
        from tfx_bsl import sketches

        if state["kind"] == "bytes":
            state["top"] = sketches.MisraGriesSketch.Deserialize(state["top"])
            state["distinct"] = sketches.KmvSketch.Deserialize(state["distinct"])
        self.__dict__.update(state)

    def add(self, values: pa.Array) -> None:
        present = values.drop_null()
        self.missing += len(values) - len(present)
        if len(present) == 0:
            return
        if self.kind == "bytes":
            self.top.AddValues(present)
            self.distinct.AddValues(present)
            self._merge_moments(len(present), 0.0, 0.0)
            return
        data = present.to_numpy(zero_copy_only=False).astype(np.float64)
        self._merge_moments(len(data), float(data.mean()), float(((data - data.mean()) ** 2).sum()))
        self.min = min(self.min, float(data.min()))
        self.max = max(self.max, float(data.max()))
        self.quantiles.AddValues(pa.array(data))

    def _merge_moments(self, count: int, mean: float, m2: float) -> None:
        # Chan et al.'s pairwise update: stable when merging partial results from many workers
        total = self.count + count
        if total == 0:
            return
        delta = mean - self.mean
        self.mean += delta * count / total
        self.m2 += m2 + delta * delta * self.count * count / total
        self.count = total

    def merge(self, other: "_ColumnStats") -> None:
        self.missing += other.missing
        self._merge_moments(other.count, other.mean, other.m2)
        self.min, self.max = min(self.min, other.min), max(self.max, other.max)
        if self.kind == "bytes":
            self.top.Merge(other.top)
            self.distinct.Merge(other.distinct)
        else:
            self.quantiles.Merge(other.quantiles)

    def result(self) -> dict:
        out = {"count": self.count, "missing": self.missing}
        rows = self.count + self.missing
        out["missing_fraction"] = self.missing / rows if rows else 0.0
        if self.kind == "bytes":
            top = self.top.Estimate().to_pylist()[:TOP_VALUES]
            out["distinct"] = int(self.distinct.Estimate())
            out["top_values"] = [[item["values"].decode("utf-8", "replace"), int(item["counts"])] for item in top]
            return out
        if self.count == 0:
            return out
        out.update(mean=self.mean, std=math.sqrt(self.m2 / self.count), min=self.min, max=self.max)
        self.quantiles.Compact()
        bounds, weights = self.quantiles.GetQuantilesAndCumulativeWeights(100)
        bounds = np.asarray(bounds.flatten().to_numpy(), dtype=np.float64)
        weights = np.asarray(weights.flatten().to_numpy(), dtype=np.float64)
        out["quantiles"] = [float(v) for v in bounds[:: 100 // QUANTILES]]
        edges = np.linspace(self.min, self.max, HISTOGRAM_BINS + 1)
        cumulative = np.interp(edges, bounds, weights / weights[-1] * self.count)
        cumulative[0] = 0.0
        counts = np.diff(cumulative)
        out["histogram"] = {"edges": edges.tolist(), "counts": [int(round(c)) for c in counts]}
        return out


class RawStatsFn(beam.CombineFn):
    """Combines raw-column Arrow tables into {column: statistics}."""

    def __init__(self, columns: list[RawColumn]):
        self._columns = columns

    def create_accumulator(self):
        return {c.name: _ColumnStats(c.kind) for c in self._columns}

    def add_input(self, accumulator, table: pa.Table):
        for column in self._columns:
            accumulator[column.name].add(table.column(column.name).combine_chunks())
        return accumulator

    def merge_accumulators(self, accumulators):
        accumulators = iter(accumulators)
        merged = next(accumulators)
        for other in accumulators:
            for name, stats in other.items():
                merged[name].merge(stats)
        return merged

    def extract_output(self, accumulator):
        return {name: stats.result() for name, stats in accumulator.items()}

