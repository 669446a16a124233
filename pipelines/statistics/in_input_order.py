"""Each split's raw statistics (statistics/Split-*/FeatureStats.pb) from the job's rows in input order.

Their moments sum floats and their sketches (quantiles, top values) depend on how rows are grouped, so statistics
counted per work unit and merged in unit order differed, in the last bits or more, between two cuts of the same
rows (another `output.shards`, another format). The job counts them here instead, from the one stream of the rows
in input order in chunks of ROW_CHUNK rows (`parsed_units.in_input_order`), once the analysis has kept the units'
streams; the transform pass then counts none (`UnitWriteSpec.split_statistics`).

The analysis pass counts the columns of the same stream in the same tables (`analysis.tables_and_statistics`), so
where one split receives every row (a config with one split), that split takes the analysis's column statistics
(`input_columns`) instead of counting them a second time: the same state, the same bytes (issue 40). Its values
per row, categorical ints and candidates are still counted here.
"""

from __future__ import annotations

import apache_beam as beam

from skewless.pipelines.analyze.analysis import COLUMN_STATES
from skewless.pipelines.analyze.stats import top_candidates
from skewless.pipelines.output import files
from skewless.pipelines.reading.parsed_units import in_input_order
from skewless.pipelines.statistics.split_statistics import SplitStatistics, add_by_split
from skewless.pipelines.reading.split_rule import split_of
from skewless.pipelines.write.transform import UnitWriteSpec
from skewless.run_directory import RunDirectory


def split_states(units: list, spec: UnitWriteSpec, candidates: dict | None, input_columns: dict | None = None
                 ) -> dict[str, dict]:
    """{split: `SplitStatistics.state()`} of every unit's rows, read in input order; `input_columns`, when given, is
    the `RawStatsFn` state of all those rows in the same tables, which a config's only split takes as its own."""
    whole = next(iter(spec.splits)) if input_columns is not None and len(spec.splits) == 1 else None
    statistics = {split: SplitStatistics(spec.reader.columns, spec.categorical_features, candidates,
                                         input_columns if split == whole else None)
                  for split in spec.splits}
    for chunk in in_input_order(units, spec.parsed_dir, spec.reader.read, spec.overlap_stages):
        if chunk.table.num_rows:
            add_by_split(statistics, chunk.table, split_of(chunk.keys, list(spec.splits.values())))
    return {split: stats.state() for split, stats in statistics.items()}


def write_split_states(_, units: list, spec: UnitWriteSpec, path: str, graph_ready=None, top_candidates=None,
                       input_columns=None) -> None:
    """`split_states` as JSON at `path`; `graph_ready` (a side input) holds it back until the analysis, which keeps
    the units' streams, is done; `input_columns` (a side input): the analysis's column statistics of every row."""
    files.write_json(split_states(units, spec, top_candidates, input_columns), path)


class CountSplitStatistics(beam.PTransform):
    """Each split's raw statistics, from the rows in input order (`write_split_states`): the same for every format
    and every cut into units, so `skewless apply` of a run's own input gives the run's statistics exactly.

    `analyzed`, the job's analysis outputs (`AnalyzeInputs`), holds the count back until the analysis, which keeps
    the units' streams, is done, and gives it the top candidates to count exactly and the analysis's column
    statistics of every row; `skewless apply` has none."""

    def __init__(self, units: list, spec: UnitWriteSpec, analyzed: dict | None = None):
        super().__init__()
        self._units = units
        self._spec = spec
        self._analyzed = analyzed

    def expand(self, pipeline):
        side_inputs = {} if self._analyzed is None else self._analysis_side_inputs()
        path = RunDirectory(self._spec.staging_dir).split_statistics_file
        return (pipeline | "PlanSplitStatistics" >> beam.Create([None])
                | "SplitStatistics" >> beam.Map(write_split_states, self._units, self._spec, path, **side_inputs))

    def _analysis_side_inputs(self) -> dict:
        analyzed, spec = self._analyzed, self._spec
        # the string columns past EXACT_DISTINCT values: the split statistics count their candidate top values
        counted = [c.name for c in spec.reader.columns
                   if (c.kind == "bytes" or c.name in spec.categorical_features) and not c.image]
        candidates = (analyzed["statistics"] | "GatherStatistics" >> beam.combiners.ToList()
                      | "TopCandidates" >> beam.Map(top_candidates, counted))
        # the analysis's column statistics of every row, for a split that receives them all (counted once)
        whole_input = ({"input_columns": beam.pvalue.AsSingleton(analyzed[COLUMN_STATES])}
                       if COLUMN_STATES in analyzed else {})
        return {"graph_ready": beam.pvalue.AsSingleton(analyzed["graph"]),
                "top_candidates": beam.pvalue.AsSingleton(candidates), **whole_input}
