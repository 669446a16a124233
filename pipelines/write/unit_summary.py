"""`UnitSummary`: what one work unit of the transform pass reports, typed as run.json's `RunSummary` is.

`TransformUnitFn` yields one per unit and the job writes it to the staging directory's `_parts/`
(`RunDirectory.unit_summary_file`); after the pipeline, the job and `skewless apply` read them back in unit
order and sum them into run.json and each split's FeatureStats.pb. A key the model does not know is refused,
so the writer and the readers cannot drift apart.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from skewless.pipelines.output import files
from skewless.run_summary import Shard


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Moment(_Strict):
    """When, in wall and in this process's CPU seconds, and in which process (`transform.unit_clock`)."""

    wall: float
    cpu: float
    pid: int


class UnitClock(_Strict):
    started: Moment
    finished: Moment


class UnitSummary(_Strict):
    unit: int  # the work unit's index: it wrote shard `unit` of every split
    read: int
    unlabeled: int  # rows without a label, left out (label.missing: drop)
    quarantined: int
    reasons: list[str]  # "source:line: reason" of its first quarantined rows
    shards: dict[str, Shard]  # per split; path relative to the run directory
    oov: dict[str, int]  # per vocabulary feature: rows whose value the vocabulary does not know
    clock: UnitClock


class PredictionUnitSummary(_Strict):
    """What one work unit of `skewless predict` reports: its file of predictions and its rows."""

    unit: int
    file: str  # relative to the output directory
    written: int
    quarantined: int


def write_unit_summary(summary: UnitSummary | PredictionUnitSummary, path: str) -> None:
    files.write_json(summary.model_dump(mode="json"), path)


def read_unit_summary(path: str, kind: type[_Strict] = UnitSummary):
    """The summary at `path`, as a `kind` (`UnitSummary` or `PredictionUnitSummary`)."""
    return kind.model_validate(files.read_json(path))
