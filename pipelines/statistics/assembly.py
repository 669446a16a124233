"""The one place a run's raw statistics are assembled, after the pipeline (`assemble_statistics`):

    _stats/{dataset}.json (the analysis pass's partials) + the analyzer cache's ──merged──> run.json's statistics
    _parts/split_statistics.json (each split's state, `in_input_order`) ──> statistics/Split-*/FeatureStats.pb
                                     └── the top candidates' exact rows ──> run.json's top values

`skewless apply` has no analysis pass: it writes the splits' FeatureStats.pb alone.
"""

from __future__ import annotations

import os

from apache_beam.io.filesystems import FileSystems

from skewless.config import JobConfig
from skewless.pipelines.analyze.analysis import STATS_CACHE, cached_stats
from skewless.pipelines.analyze.stats import summarize
from skewless.pipelines.output import files
from skewless.pipelines.statistics.split_statistics import candidate_counts, write_states
from skewless.run_directory import RunDirectory


def assemble_statistics(config: JobConfig, job_plan, staging: str, analysis_pass: bool = True) -> dict | None:
    """Writes each split's FeatureStats.pb from the split statistics the pipeline counted and returns the raw
    statistics per column of run.json (`raw_statistics`), or None without an `analysis_pass` (`skewless apply`)."""
    split_states = files.read_json(RunDirectory(staging).split_statistics_file)
    raw_stats = raw_statistics(config, job_plan, staging, list(split_states.values())) if analysis_pass else None
    write_states(staging, {split: [split_states[split]] for split in config.output.splits}, job_plan.columns)
    return raw_stats


def raw_statistics(config: JobConfig, job_plan, staging: str, split_states: list[dict]) -> dict:
    """Merges the partial statistics this run computed with the cached ones of datasets it did not read, with
    the top values the splits' statistics counted exactly (`split_states`: `SplitStatistics.state()`s).

    With a cache, this run's partials are then stored there, under their dataset's name.
    """
    stats_dir = RunDirectory(staging).stats_dir
    partials = {}
    for name in job_plan.datasets:
        path = os.path.join(stats_dir, f"{name}.json")
        if FileSystems.exists(path):
            partials[name] = files.read_json(path)
    if config.cache_dir:
        for name in job_plan.datasets:
            if name in partials:
                files.write_json(partials[name], os.path.join(config.cache_dir, STATS_CACHE, f"{name}.json"))
            else:
                partials[name] = cached_stats(config.cache_dir, name)
    counted = candidate_counts(split_states)
    return summarize(list(partials.values()), {name: counts for name, (counts, _) in counted.items()})

