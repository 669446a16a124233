"""The analysis pass: raw statistics and the tf.Transform graph, optionally with tf.Transform's analyzer cache.

    dataset ──read──> raw tables ──> RawStatsFn ──> partial statistics (one JSON file per dataset)
                          └──> record batches ──> AnalyzeDataset[WithCache] ──> WriteTransformFn

A *dataset* is what the analyzer cache keys on: without a cache the whole input is one dataset; with
one, every input file (or, with `cache_key: directory`, every folder: a dated partition) is its own
dataset, keyed by its files' paths, sizes and modification times, so a rerun after new files arrive
reads only those (and any that changed) for analysis, and tf.Transform
combines their partial analyzer results with the cached ones of the old files. The raw statistics
are cached beside tf.Transform's, as the mergeable JSON of `stats.ColumnStats`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from dataclasses import dataclass
from typing import Callable

import apache_beam as beam
import pyarrow as pa
import tensorflow_transform.beam as tft_beam
from apache_beam.io.filesystems import FileSystems
from tensorflow_transform.beam import analysis_graph_builder, analyzer_cache
from tfx_bsl.tfxio import tensor_adapter

from skewless.pipelines.analyze.distinct_limits import DistinctValuesFn
from skewless.pipelines.analyze.stats import ColumnStats, RawStatsFn
from skewless.pipelines.output.progress import RowCounter, counted
from skewless.pipelines.reading.columns import tensor_adapter_config, to_record_batch
from skewless.pipelines.output.files import read_json, write_json
from skewless.pipelines.reading.parse_ahead import Handoff
from skewless.pipelines.reading.parsed_units import in_input_order, kept, stream_path
from skewless.pipelines.reading.read_ahead import read_ahead
from skewless.pipelines.reading.sources import RowReader, WorkUnit
from skewless.pipelines.runner.arrow_coder import carrying
from skewless.pipelines.runner.bundle_threads import ThreadedMap
from skewless.pipelines.runner.element_stop import Stopped
from skewless.pipelines.runner.freed_memory import return_freed_memory
from skewless.pipelines.runner.stage_thread import StageThread
from skewless.run_directory import progress_unit

STATS_CACHE = "skewless-stats"
COLUMN_STATES = "column_states"  # the analysis's RawStatsFn state of the input, before `as_restored`
_STATISTICS_THREADS = 2  # the raw statistics' counting threads (`tables_and_statistics`)


def cached_stats(cache_dir: str, name: str) -> dict | None:
    path = FileSystems.join(cache_dir, STATS_CACHE, f"{name}.json")
    if not FileSystems.exists(path):
        return None
    return read_json(path)


def _read_chunks(unit: WorkUnit, reader: RowReader, staging_dir: str, dataset: str, parsed_dir: str | None,
                 ahead: bool = True):
    """The unit's chunks read from the input (by a thread of their own, `ahead`), counted (and kept for the
    transform pass under `parsed_dir`)."""
    counter = RowCounter(staging_dir, "analyze", progress_unit(unit.index, dataset))
    chunks = reader.read(unit)
    if parsed_dir is not None:
        chunks = kept(chunks, stream_path(parsed_dir, unit.index))
    return counted(read_ahead(chunks) if ahead else chunks, counter)


def _keep_unit(unit: WorkUnit, reader: RowReader, staging_dir: str, dataset: str, parsed_dir: str,
               ahead: Handoff | None, stop: threading.Event) -> int:
    """Parses the unit into its kept stream, on a thread of `ThreadedMap` (beside the bundle's other units), unless
    `skewless run`'s parsing process (`ahead`) wrote it; returns its index. Once `stop` is set (another unit
    failed) it stops after the chunk it is on (`Stopped`), its stream left incomplete."""
    if ahead is not None:
        rows = ahead.parsed(unit.index, stop)
        if rows is not None:
            RowCounter(staging_dir, "analyze", progress_unit(unit.index, dataset)).add(rows)
            return unit.index
    with contextlib.closing(_read_chunks(unit, reader, staging_dir, dataset, parsed_dir, ahead=False)) as chunks:
        for _ in chunks:
            if stop.is_set():
                raise Stopped(f"unit {unit.index} stopped")
    return unit.index


def canonical_tables(_ready, units: list[WorkUnit], reader: RowReader, staging_dir: str, dataset: str,
                     parsed_dir: str | None, overlap: bool = True):
    """Every unit's good rows in input order, in tables of ROW_CHUNK rows wherever the units end
    (`parsed_units.in_input_order`): the same rows give the same tables, in the same order, from every format and
    every cut into units.

    tf.Transform's analyzers are order-sensitive (scale_to_gaussian estimates L-moments per batch and averages
    them; means and variances sum floats; quantile sketches depend on the order of their inputs), so the analysis
    takes this one stream in one bundle. The units' kept streams are read back when there are (`_ready`: their
    parsing is done); else the units are read from the input here, one after the other.
    """
    def read(unit: WorkUnit):
        return _read_chunks(unit, reader, staging_dir, dataset, None)

    for chunk in in_input_order(units, parsed_dir, read, overlap):
        if chunk.table.num_rows:
            yield chunk.table


def tables_and_statistics(_ready, units: list[WorkUnit], reader: RowReader, staging_dir: str, dataset: str,
                          parsed_dir: str | None, overlap: bool, counting: RawStatsFn):
    """`canonical_tables`, then (tagged `COLUMN_STATES`) the `counting` state of all of them: the raw statistics
    counted on the way, once, for the analysis's partial statistics (`as_restored`) and, where `counting` counts as
    a split does (`AnalysisSpec.counts_as_splits_do`), for a split that receives every row
    (`statistics.in_input_order.split_states`), which would count the same tables again."""
    if _ready is not None:  # the units were parsed on all cores: what that freed is not this stage's to reuse
        return_freed_memory()
    accumulator = counting.create_accumulator()
    # counted on threads of their own, each column in order, while the analysis graph runs on the tables
    # (`overlap`): Arrow's kernels and the sketches release the GIL and run beside TensorFlow's. On one thread the
    # counting was this stage's longest path (1M census rows: 1.39 s of counting, 0.40 s of it waited for by the
    # graph's thread); the columns are shared between two
    parts = counting.column_parts(_STATISTICS_THREADS)
    counters = [StageThread(f"skewless-raw-stats-{index}", 2, overlap) for index in range(len(parts))]
    try:
        for table in canonical_tables(_ready, units, reader, staging_dir, dataset, parsed_dir, overlap):
            for counter, part in zip(counters, parts):
                counter.submit(counting.add_columns, accumulator, table, part)
            yield table
        for counter in counters:
            counter.drain()
    finally:
        for counter in counters:
            counter.abort()
    yield beam.pvalue.TaggedOutput(COLUMN_STATES, counting.extract_output(accumulator))


def as_restored(column_states: dict) -> dict:
    """The partial statistics of `column_states` as the analysis always wrote them: each column's state restored,
    then its state taken again. They were a Beam `CombineGlobally`'s output, whose accumulator crossed Beam's coder
    once (a `ColumnStats` pickles as its state), and a quantiles sketch restored from its points gives points of
    its own: run.json's figures stay those of the restored sketch."""
    return {name: ColumnStats.from_state(state).state() for name, state in column_states.items()}


@dataclass(frozen=True)
class AnalysisSpec:
    """What the analysis pass reads, what it analyzes it with and where it writes."""

    datasets: dict[str, list[WorkUnit]]  # dataset name -> its work units (one dataset without an analyzer cache)
    reader: RowReader  # the input's reader; its columns are the raw columns the graph takes
    preprocessing_fn: Callable  # the tf.Transform preprocessing function
    graph_dir: str  # where the graph is written
    stats_dir: str  # where each dataset's partial statistics are written
    staging_dir: str  # the run's staging directory: the workers' progress goes under it
    cache_dir: str | None = None  # tf.Transform's analyzer cache, when there is one
    parsed_dir: str | None = None  # where to keep the units' parsed chunks for the transform pass
    overlap_stages: bool = True  # kept streams are read back on a thread of their own (runner.overlap_stages)
    categorical: frozenset[str] = frozenset()  # int columns whose values are categories: counted as text
    dates: dict[str, str] | None = None  # datetime columns -> the zone their statistics' date range is read in
    # raw columns whose distinct values are counted as they are read, refused past their limit (distinct_limits.py)
    distinct_limits: tuple = ()
    parse_ahead: Handoff | None = None  # `skewless run`'s process parsing the units into parsed_dir meanwhile

    def stats_fn(self):
        """How the pass counts the raw columns' statistics."""
        return RawStatsFn(self.reader.columns, self.categorical, self.dates)

    @property
    def counts_as_splits_do(self) -> bool:
        """Whether `stats_fn` counts the columns as the split statistics do (`SplitStatistics`, a plain
        `RawStatsFn`): not where an int column is counted as text or a datetime keeps its date range."""
        return not self.dates and not any(column.name in self.categorical and column.kind != "bytes"
                                          for column in self.reader.columns)


class AnalyzeInputs(beam.PTransform):
    """Reads the spec's datasets, writes their partial statistics to its `stats_dir` and the graph to its `graph_dir`.

    Returns {"graph": the PCollection that completes once the graph is written (for the transform pass to wait
    on), "statistics": every dataset's partial statistics, read now or cached}, and without an analyzer cache
    {COLUMN_STATES: the input's `RawStatsFn` state (`tables_and_statistics`)}.
    """

    def __init__(self, spec: AnalysisSpec):
        super().__init__()
        self._spec = spec
        self._adapter_config = tensor_adapter_config(spec.reader.columns)
        # the analyzer cache reads a unit per file (or not at all), so it keeps no unit whole
        self._parsed_dir = spec.parsed_dir if spec.cache_dir is None else None

    def expand(self, pipeline):
        spec = self._spec
        self._statistics = []
        if spec.cache_dir is None:
            batches = self._read(pipeline, next(iter(spec.datasets)))
            analyze = tft_beam.AnalyzeDataset(spec.preprocessing_fn)
            transform_fn = (batches, self._adapter_config) | "Analyze" >> analyze
        else:
            transform_fn = self._analyze_with_cache(pipeline)
        statistics = tuple(self._statistics) | "AllStatistics" >> beam.Flatten(pipeline=pipeline.pipeline)
        analyzed = {"graph": transform_fn | "WriteGraph" >> tft_beam.WriteTransformFn(spec.graph_dir),
                    "statistics": statistics}
        if spec.cache_dir is None and spec.counts_as_splits_do:  # one dataset, every unit in input order
            analyzed[COLUMN_STATES] = self._column_states
        return analyzed

    def _read(self, pipeline, name: str):
        """One dataset's record batches; its partial statistics are written on the way."""
        spec = self._spec
        units = spec.datasets[name]
        if self._parsed_dir is not None:
            # the units are parsed in parallel into their kept streams, which the one canonical stream reads back;
            # a bundle's units on all of its worker's cores (on an in-process runner the bundle holds them all)
            ready = (
                pipeline
                | f"Plan[{name}]" >> beam.Create(units, reshuffle=True)
                | f"Read[{name}]" >> beam.ParDo(
                    ThreadedMap(_keep_unit, spec.reader, spec.staging_dir, name, self._parsed_dir, spec.parse_ahead,
                                threads=None if spec.overlap_stages else 1))
                | f"AllRead[{name}]" >> beam.combiners.ToList()
            )
        else:
            ready = pipeline | f"Plan[{name}]" >> beam.Create([None])
        read = ready | f"InInputOrder[{name}]" >> beam.FlatMap(
            tables_and_statistics, units, spec.reader, spec.staging_dir, name, self._parsed_dir, spec.overlap_stages,
            spec.stats_fn()).with_outputs(COLUMN_STATES, main="tables")
        # typed, so Beam sizes them with `arrow_coder.ArrowCoder` rather than by pickling each one
        tables = carrying(read.tables, pa.Table)
        path = os.path.join(spec.stats_dir, f"{name}.json")
        statistics = read[COLUMN_STATES] | f"Stats[{name}]" >> beam.Map(as_restored)
        _ = statistics | f"WriteStats[{name}]" >> beam.Map(write_json, path)
        if spec.distinct_limits:
            # counted in the stage that feeds the analyzers, chunk by chunk: a job past a limit fails before the
            # analyzers' memory grows past the limit's cost
            _ = tables | f"DistinctLimits[{name}]" >> beam.CombineGlobally(
                DistinctValuesFn(list(spec.distinct_limits), spec.reader.columns))
        self._statistics.append(statistics)
        self._column_states = read[COLUMN_STATES]  # the last dataset's: the whole input's where there is one
        return carrying(tables | f"ToRecordBatches[{name}]" >> beam.Map(to_record_batch, spec.reader.columns),
                        pa.RecordBatch)

    def _analyze_with_cache(self, pipeline):
        spec = self._spec
        keys = {name: analyzer_cache.DatasetKey(name) for name in spec.datasets}
        input_cache = pipeline | "ReadAnalyzerCache" >> analyzer_cache.ReadAnalysisCacheFromFS(
            spec.cache_dir, list(keys.values())
        )
        to_read = self._datasets_to_read(keys, input_cache)
        # every dataset takes part in the analysis; one whose analyzer results are all cached is not read
        inputs = {
            key: self._read(pipeline, name) if name in to_read else pipeline | f"Cached[{name}]" >> beam.Create([])
            for name, key in keys.items()
        }
        cached = [cached_stats(spec.cache_dir, name) for name in keys if name not in to_read]
        self._statistics.append(pipeline | "CachedStatistics" >> beam.Create(cached))
        transform_fn, output_cache = (inputs, input_cache, self._adapter_config) | "Analyze" >> (
            tft_beam.AnalyzeDatasetWithCache(spec.preprocessing_fn)
        )
        _ = output_cache | "WriteAnalyzerCache" >> analyzer_cache.WriteAnalysisCacheToFS(
            pipeline.pipeline, spec.cache_dir, list(keys.values())
        )
        return transform_fn

    def _datasets_to_read(self, keys: dict, input_cache) -> set[str]:
        """The datasets whose analyzer results or raw statistics are not all in the cache."""
        spec = self._spec
        type_specs = tensor_adapter.TensorAdapter(self._adapter_config).OriginalTypeSpecs()
        with _without_inspection_table_warnings():
            needed = analysis_graph_builder.get_analysis_dataset_keys(
                spec.preprocessing_fn, type_specs, list(keys.values()), input_cache, False
            )
        # statistics cached when a column was counted otherwise (its transform changed) are counted anew
        counts = spec.stats_fn()
        return {name for name, key in keys.items()
                if key in needed or not counts.counts_like(cached_stats(spec.cache_dir, name))}


# tf.Transform's graph analyzer warns of every lookup table of a graph traced as a tf.function
_TABLE_IN_FUNCTION = re.compile(r"Tables initialized inside a tf\.function +will be re-initialized")


def _not_a_table_in_function_warning(record: logging.LogRecord) -> bool:
    return not _TABLE_IN_FUNCTION.match(record.getMessage())


@contextlib.contextmanager
def _without_inspection_table_warnings():
    """Drops "Tables initialized inside a tf.function will be re-initialized on every invocation" while tf.Transform
    traces preprocessing_fn to find the datasets the cache lacks: that trace is inspected, never invoked, and
    every --cache-dir run printed the warning once per vocabulary. Other messages, and this one elsewhere, pass.
    """
    logger = logging.getLogger("absl")
    logger.addFilter(_not_a_table_in_function_warning)
    try:
        yield
    finally:
        logger.removeFilter(_not_a_table_in_function_warning)
