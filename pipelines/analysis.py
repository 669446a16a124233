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

import hashlib
import os

import apache_beam as beam

from skewless.pipelines.files import read_json, write_json
from skewless.pipelines.sources import WorkUnit

STATS_CACHE = "skewless-stats"


def dataset_name(path: str, fingerprint: str) -> str:
    """A cache key for a file or directory: its name for people, a digest of its contents' fingerprint for the cache."""
    digest = hashlib.sha256(f"{path}\0{fingerprint}".encode()).hexdigest()[:16]
    base = "".join(c if c.isalnum() or c in "-_" else "_" for c in os.path.basename(path.rstrip("/")))[:40]
    return f"{base}-{digest}"


def datasets_by_file(units: list[WorkUnit]) -> dict[str, list[WorkUnit]]:
    """The work units cut by input file: path -> the units' segments of that file, in order."""
    by_path: dict[str, list[WorkUnit]] = {}
    for unit in units:
        for segment in unit.segments:
            by_path.setdefault(segment.path, []).append(WorkUnit(unit.index, (segment,)))
    return by_path


def cached_stats(cache_dir: str, name: str) -> dict | None:
    from apache_beam.io.filesystems import FileSystems

    path = FileSystems.join(cache_dir, STATS_CACHE, f"{name}.json")
    if not FileSystems.exists(path):
        return None
    return read_json(path)


def _read_tables(unit: WorkUnit, reader, progress_dir: str, dataset: str, parsed_dir: str | None):
    from skewless.pipelines.parsed_units import kept, stream_path
    from skewless.pipelines.progress import RowCounter, counted
    from skewless.pipelines.read_ahead import read_ahead

    counter = RowCounter(progress_dir, "analyze", f"{dataset}-{unit.index:05d}")
    chunks = reader.read(unit)
    if parsed_dir is not None:
        chunks = kept(chunks, stream_path(parsed_dir, unit.index))
    return (chunk.table for chunk in counted(read_ahead(chunks), counter))


class AnalyzeInputs(beam.PTransform):
    """Reads the datasets, writes their partial statistics to `stats_dir` and the graph to `graph_dir`.

    Returns the PCollection that completes once the graph is written (for the transform pass to wait on).
    """

    def __init__(self, datasets, reader, adapter_config, preprocessing_fn, graph_dir, stats_dir, progress_dir,
                 cache_dir=None, parsed_dir=None):
        super().__init__()
        self._progress_dir = progress_dir
        self._datasets = datasets  # name -> list of work units
        self._reader = reader
        self._adapter_config = adapter_config
        self._preprocessing_fn = preprocessing_fn
        self._graph_dir = graph_dir
        self._stats_dir = stats_dir
        self._cache_dir = cache_dir
        # the analyzer cache reads a unit per file (or not at all), so it keeps no unit whole
        self._parsed_dir = parsed_dir if cache_dir is None else None

    def expand(self, pipeline):
        import tensorflow_transform.beam as tft_beam

        if self._cache_dir is None:
            batches = self._read(pipeline, next(iter(self._datasets)))
            transform_fn = (batches, self._adapter_config) | "Analyze" >> tft_beam.AnalyzeDataset(self._preprocessing_fn)
        else:
            transform_fn = self._analyze_with_cache(pipeline)
        return transform_fn | "WriteGraph" >> tft_beam.WriteTransformFn(self._graph_dir)

    def _read(self, pipeline, name: str):
        """One dataset's record batches; its partial statistics are written on the way."""
        from skewless.pipelines.columns import to_record_batch
        from skewless.pipelines.stats import RawStatsFn

        columns = self._reader.columns
        tables = (
            pipeline
            | f"Plan[{name}]" >> beam.Create(self._datasets[name], reshuffle=True)
            | f"Read[{name}]" >> beam.FlatMap(
                _read_tables, self._reader, self._progress_dir, name, self._parsed_dir
            )
        )
        path = os.path.join(self._stats_dir, f"{name}.json")
        _ = (
            tables
            | f"Stats[{name}]" >> beam.CombineGlobally(RawStatsFn(columns))
            | f"WriteStats[{name}]" >> beam.Map(write_json, path)
        )
        return tables | f"ToRecordBatches[{name}]" >> beam.Map(to_record_batch, columns)

    def _analyze_with_cache(self, pipeline):
        import tensorflow_transform.beam as tft_beam
        from tensorflow_transform.beam import analysis_graph_builder, analyzer_cache
        from tfx_bsl.tfxio import tensor_adapter

        keys = {name: analyzer_cache.DatasetKey(name) for name in self._datasets}
        input_cache = pipeline | "ReadAnalyzerCache" >> analyzer_cache.ReadAnalysisCacheFromFS(
            self._cache_dir, list(keys.values())
        )
        specs = tensor_adapter.TensorAdapter(self._adapter_config).OriginalTypeSpecs()
        needed = analysis_graph_builder.get_analysis_dataset_keys(
            self._preprocessing_fn, specs, list(keys.values()), input_cache, False
        )
        to_read = {name for name, key in keys.items() if key in needed or cached_stats(self._cache_dir, name) is None}
        # every dataset takes part in the analysis; one whose analyzer results are all cached is not read
        inputs = {
            key: self._read(pipeline, name) if name in to_read else pipeline | f"Cached[{name}]" >> beam.Create([])
            for name, key in keys.items()
        }
        transform_fn, output_cache = (inputs, input_cache, self._adapter_config) | "Analyze" >> (
            tft_beam.AnalyzeDatasetWithCache(self._preprocessing_fn)
        )
        _ = output_cache | "WriteAnalyzerCache" >> analyzer_cache.WriteAnalysisCacheToFS(
            pipeline.pipeline, self._cache_dir, list(keys.values())
        )
        return transform_fn
