"""Validating data against a tf.metadata Schema: anomalies with row counts and example rows.

Rows are judged by `row_checks.check_batch`, the same function that sends rows to quarantine in
`skewless run`, and by the reading layer's rejections (CSV field counts, quoting, UTF-8, undecodable
records). Columns the schema does not declare are reported too, although the job ignores them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Iterable

from tensorflow_metadata.proto.v0 import schema_pb2

from skewless.schemas.row_checks import PROBLEM_KINDS, check_batch, string_domain_values, unexpected_columns

UNEXPECTED_COLUMN = "unexpected_column"
_KIND_TITLES = {**PROBLEM_KINDS, UNEXPECTED_COLUMN: "column not in the schema"}


@dataclass
class Anomaly:
    """One kind of problem with one feature (or with whole rows): how many rows have it, and the first few."""

    kind: str
    feature: str | None
    rows: int = 0
    examples: list[tuple[str, str]] = field(default_factory=list)  # ("file:line", what is wrong)

    @property
    def title(self) -> str:
        return _KIND_TITLES[self.kind]


@dataclass
class ValidationReport:
    rows: int  # rows read, rejected ones included
    bad_rows: int  # rows that `skewless run` would put in quarantine
    anomalies: list[Anomaly]

    @property
    def clean(self) -> bool:
        return not self.anomalies

    def to_json(self) -> dict:
        """For `schema validate --json`: the counts, and per anomaly its kind, title, feature, rows and examples."""
        return {
            "rows": self.rows,
            "bad_rows": self.bad_rows,
            "clean": self.clean,
            "anomalies": [
                {"kind": a.kind, "title": a.title, "feature": a.feature, "rows": a.rows,
                 "examples": [{"where": where, "detail": detail} for where, detail in a.examples]}
                for a in self.anomalies
            ],
        }

    def count(self, kind: str, feature: str | None = None) -> int:
        """Rows with anomaly `kind` (for `feature`, when given)."""
        return sum(a.rows for a in self.anomalies if a.kind == kind and (feature is None or a.feature == feature))


def validate(
    batches: Iterable,
    schema: schema_pb2.Schema,
    optional: Collection[str] = (),
    max_examples: int = 3,
) -> ValidationReport:
    """Checks every row of `batches` against `schema`; `optional` as in `check_batch`.

    `batches` are `skewless.pipelines.reading.SourceBatch`es (`read_batches(config)`), read as the job reads.
    """
    for feature in schema.feature:
        string_domain_values(feature, schema)  # a dangling domain reference fails before any reading
    found: dict[tuple[str, str | None], Anomaly] = {}

    def note(kind: str, feature: str | None, where: str, detail: str) -> None:
        anomaly = found.setdefault((kind, feature), Anomaly(kind, feature))
        anomaly.rows += 1
        if len(anomaly.examples) < max_examples:
            anomaly.examples.append((where, detail))

    rows = bad_rows = 0
    for source in batches:
        rows += source.batch.num_rows + len(source.rejected)
        bad_rows += len(source.rejected)
        for rejected in source.rejected:
            problem = rejected.problem
            note(problem.kind, problem.feature, source.where(rejected.number), problem.detail)
        problems = check_batch(source.batch, schema, optional)
        bad_rows += len(problems)
        for row in sorted(problems):
            where = source.where(int(source.numbers[row]))
            for problem in problems[row]:
                note(problem.kind, problem.feature, where, problem.detail)
        for name, found_rows in unexpected_columns(source.batch, schema).items():
            for row in found_rows:
                note(UNEXPECTED_COLUMN, name, source.where(int(source.numbers[row])), "the schema has no such feature")
    order = list(_KIND_TITLES)
    anomalies = sorted(found.values(), key=lambda a: (order.index(a.kind), a.feature or ""))
    return ValidationReport(rows, bad_rows, anomalies)
