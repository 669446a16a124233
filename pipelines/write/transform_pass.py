"""The transform pass as one PTransform, `TransformAndWrite`: the job's second pass, and all of `skewless apply`.

    work units ──PlanTransform──> one unit a bundle ──TransformUnits (`transform.TransformUnitFn`: read, apply the
    graph, split, encode, write shards and quarantine)──> unit summaries ──WriteParts──> _parts/*.json

What it writes with is one `transform.UnitWriteSpec`, built from the config by `unit_write_spec`.
"""

from __future__ import annotations

import apache_beam as beam

from skewless.config import JobConfig
from skewless.pipelines.write.distinct_values import row_wise_columns
from skewless.pipelines.write.transform import TransformUnitFn, UnitWriteSpec
from skewless.pipelines.write.unit_summary import write_unit_summary
from skewless.run_directory import RunDirectory


class TransformAndWrite(beam.PTransform):
    """Each of `units` transformed with `spec.graph_dir`, split and written (`TransformUnitFn`), its summary to
    _parts/. `graph_ready` (a side input, the job's analysis output) holds the pass back until the graph is written;
    `skewless apply` runs it without one, with a finished run's graph."""

    def __init__(self, units: list, spec: UnitWriteSpec, graph_ready=None):
        super().__init__()
        self._units = units
        self._spec = spec
        self._side_inputs = {} if graph_ready is None else {"graph_ready": graph_ready}

    def expand(self, pipeline):
        staging = self._spec.staging_dir
        return (
            pipeline
            | "PlanTransform" >> beam.Create(self._units, reshuffle=True)
            | "TransformUnits" >> beam.ParDo(TransformUnitFn(self._spec), **self._side_inputs)
            | "WriteParts" >> beam.Map(
                lambda part, d=staging: write_unit_summary(part, RunDirectory(d).unit_summary_file(part.unit)))
        )


def unit_write_spec(config: JobConfig, job_plan, reader, graph_dir: str, staging: str,
                    parsed_dir: str | None = None):
    """How the transform pass writes every unit of `job_plan` into `staging`, with the graph at `graph_dir`."""
    return UnitWriteSpec(
        reader=reader,
        graph_dir=graph_dir,
        staging_dir=staging,
        splits=config.output.splits,
        compression=config.output.compression,
        gzip_level=config.output.gzip_level,
        unit_count=len(job_plan.units),
        vocabulary_features=[n for n, f in config.features.items() if f.transform_kind.counts_oov],
        unseen_ids={n: f.transform_kind.unseen_id(f) for n, f in config.features.items()
                    if f.transform_kind.counts_oov and f.transform_kind.unseen_id(f) is not None},
        categorical_features=categorical_features(config),
        output_format=config.output.format,
        row_wise=row_wise_columns(config, reader.columns),
        parsed_dir=parsed_dir,
        overlap_stages=config.runner.overlap_stages,
    )


def categorical_features(config: JobConfig) -> frozenset[str]:
    """The raw columns of features whose values are categories whatever their type (run.json's kind
    categorical): their statistics count an int column's values as text."""
    return frozenset(f.raw_column(n) for n, f in config.features.items() if f.transform_kind.categories)

