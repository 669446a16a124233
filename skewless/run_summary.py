"""`RunSummary`: what a run's run.json holds, typed, for the job that writes it and every reader.

The job builds one and writes `to_json()`; inspect, the report, make_dataset and the Keras layers read
it with `from_json` (through `skewless.run_directory.RunDirectory.read_summary`). Each feature's entry
(transform, statistics, vocabulary file...) is passed through as the job built it: its fields depend on
the transform, and the report and inspect read the ones they know.

`PredictionSummary` is the run.json of `skewless predict`'s output; `output_summary` reads either, for
`--overwrite`, which replaces only what skewless wrote.

`schema_version` says which layout a file has. A run.json without it was written before the field
existed, with the same layout as version 1: it reads as version 0. One written by a newer skewless
(a higher version) is refused in one line rather than misread.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from skewless.errors import InputError

SCHEMA_VERSION = 1
# What a run.json without schema_version is read as (its layout is version 1's)
UNVERSIONED = 0


class _Part(BaseModel):
    # a key the model does not know is refused, so the writer and the readers cannot drift apart
    model_config = ConfigDict(extra="forbid")


class RowCounts(_Part):
    read: int
    written: dict[str, int]  # per split
    quarantined: int
    # rows without a label, left out with label.missing: drop (absent otherwise): read = written + quarantined
    # + unlabeled
    unlabeled: int | None = None


class Label(_Part):
    column: str  # the raw column
    name: str  # the transformed feature holding it
    # a regression label written transformed (label.transform: log, z_score, scale_0_1): the transform and the
    # statistics the graph scaled it with, which the export inverts (skewless/layers/label_scale.py)
    transform: str | None = None
    statistics: dict[str, float] | None = None
    # a label written as class ids (label.map, label.transform: vocabulary): the class each id stands for, in id
    # order, which the export's classification signature returns (skewless/layers/api_signatures.py)
    classes: list[str] | None = None

    @property
    def scale(self) -> dict | None:
        """``{"transform": ..., **statistics}`` of a transformed regression label, else None."""
        return None if self.statistics is None else {"transform": self.transform, **self.statistics}


class Shard(_Part):
    path: str  # relative to the run directory
    rows: int
    bytes: int


class Analysis(_Part):
    datasets: int  # the input files with an analyzer cache (else the whole input)
    analyzed: int  # those read this run
    cache_dir: str | None


class Applied(_Part):
    """What `skewless apply` applied: the run whose graph it took, and that graph's digest."""

    run: str
    graph_sha256: str
    label_left_out: bool


class AppliedInput(_Part):
    format: str
    paths: list[str]


class Platform(_Part):
    machine: str
    cpus: int | None
    python: str


class _Summary(_Part):
    """What every run.json shares: its layout's version, and how it is written and read back."""

    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> bytes:
        # the fields given (a job's run has no `applied`, an applied one no `features`), and the version always
        fields = {**self.model_dump(exclude_unset=True), "schema_version": self.schema_version}
        return json.dumps(fields, indent=2, sort_keys=True).encode()

    @classmethod
    def from_json(cls, text: str | bytes, source: str):
        """Parses run.json's text; InputError naming `source` (its path) when it is not such a summary, or one
        of a newer layout than this skewless reads."""
        return cls._from_data(_json_object(text, source), source)

    @classmethod
    def _from_data(cls, data: dict, source: str):
        data = {"schema_version": UNVERSIONED, **data}
        version = data["schema_version"]
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            # checked before pydantic, which would take "99" for 99 past the version check
            raise InputError(f"{source}: not a skewless run summary (schema_version {json.dumps(version)[:40]} is not "
                             "a whole number)")
        if version > SCHEMA_VERSION:
            raise InputError(f"{source}: run summary schema_version {version} is newer than this skewless reads "
                             f"({SCHEMA_VERSION}); upgrade skewless to read this run")
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, item['loc']))}: {item['msg']}" for item in error.errors()[:3]
            ).replace("\n", " ")
            raise InputError(f"{source}: not a skewless run summary ({problems})") from None


class RunSummary(_Summary):
    name: str
    rows: RowCounts
    label: Label | None
    shards: dict[str, list[Shard]]
    compression: str
    format: str
    # a run of `skewless run` has features and analysis; an output of `skewless apply` has the other three
    features: dict[str, dict[str, Any]] | None = None
    analysis: Analysis | None = None
    applied: Applied | None = None
    input: AppliedInput | None = None
    oov_rows: dict[str, int] | None = None  # per vocabulary feature
    seconds: dict[str, float]  # by stage, and "total"
    versions: dict[str, str | None]  # of skewless and the packages it runs on
    platform: Platform

    @property
    def transformed_rows(self) -> int:
        """Rows that went through the graph (written to any split): the denominator of the OOV rate."""
        return sum(self.rows.written.values())

    @property
    def label_column(self) -> str | None:
        return self.label.column if self.label is not None else None


class PredictionSummary(_Summary):
    """The run.json of an output of `skewless predict` (pipelines/commands/predict.py)."""

    predicted: dict[str, Any]  # the export, its signature and outputs
    input: AppliedInput
    keys: list[str]
    format: str
    files: list[str]
    rows: dict[str, int]
    seconds: dict[str, float]
    versions: dict[str, str | None]


def output_summary(text: str | bytes, source: str) -> RunSummary | PredictionSummary:
    """The run.json of any output skewless writes (a run, an applied run, predictions), read as its own
    summary; InputError naming `source` when it is neither, or of a newer layout: what `--overwrite` asks of
    a folder before it replaces it."""
    data = _json_object(text, source)
    return (PredictionSummary if "predicted" in data else RunSummary)._from_data(data, source)


def _json_object(text: str | bytes, source: str) -> dict:
    try:
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else error
        raise InputError(f"{source}: cannot read run summary: {reason}") from None
    if not isinstance(data, dict):
        raise InputError(f"{source}: not a skewless run summary (not a JSON object)")
    return data
