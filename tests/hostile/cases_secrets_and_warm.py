"""Issue 41, items 6, 7, 9, 13-15: no credential shown, no control character printed raw, SQL edges, the warm process.

Cases as data, run by test_hostile.py like hostile_cases.py's; each has issue=41 and the item it proves. Items 13-15
need one Python process that lives on: tests/hostile/test_warm_process.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np

from hostile_cases import SMALL, Case, job, small_config

# ---------------------------------------------------------------------------------------- 9: SQL queries and types


def duckdb_query(query: str, **input_options) -> Callable[[Path], list]:
    """A job over a DuckDB query's column `a` (a z_score), a tenth of its rows allowed to be quarantined."""
    def make(folder):
        config = small_config(folder, input={"format": "sql", "url": "duckdb://", "query": query, **input_options},
                              features={"a": {"transform": "z_score"}}, label=None,
                              output={**SMALL["output"], "max_bad_fraction": 0.1})
        return job(folder, config)
    return make


def _summary(folder: Path) -> dict:
    return json.loads((folder / "out" / "run.json").read_text())


def _quarantined(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted((folder / "out" / "quarantine").glob("*.jsonl"))
            for line in path.read_text().splitlines()]


def written_values(values: list[float]) -> Callable[[Path], None]:
    """The run kept exactly `values` of column a (count and mean as NumPy has them), and quarantined nothing."""
    def check(folder):
        summary = _summary(folder)
        assert summary["rows"]["written"] == {"train": len(values)} and summary["rows"]["quarantined"] == 0
        assert summary["features"]["a"]["count"] == len(values)
        assert np.isclose(summary["features"]["a"]["mean"], np.mean(values))
    return check


def one_row_quarantined(line: int, reason: str, kept: list[float]) -> Callable[[Path], None]:
    """Row `line` (1-based) alone went to quarantine, its reason holding `reason`; the others were kept."""
    def check(folder):
        (row,) = _quarantined(folder)
        assert row["line"] == line and reason in row["reason"], row
        summary = _summary(folder)
        assert summary["rows"] == {"read": len(kept) + 1, "written": {"train": len(kept)}, "quarantined": 1}
        assert np.isclose(summary["features"]["a"]["mean"], np.mean(kept))
    return check


_FIFTY = "SELECT i::DOUBLE AS a FROM range(50) t(i)"
_BIG = 2**64 - 1  # UBIGINT's largest value

SQL_CASES = [
    Case("sql: a DuckDB query ending in a -- comment", duckdb_query(_FIFTY + " -- the rows"), 0, None, issue=41,
         item=9, writes=("out",), after=written_values(list(range(50)))),
    Case("sql: a query ending in ; then a -- comment", duckdb_query(_FIFTY + "; -- the rows"), 0, None, issue=41,
         item=9, writes=("out",), after=written_values(list(range(50)))),
    Case("sql: a -- comment ending a query cut by order_by", duckdb_query(_FIFTY + " -- rows", order_by=["a"]), 0,
         None, issue=41, item=9, writes=("out",), after=written_values(list(range(50)))),
    Case("sql: a ; inside quoted text stays", duckdb_query("SELECT length('a;b')::DOUBLE + i AS a FROM range(50) t(i);"),
         0, None, issue=41, writes=("out",), after=written_values([3 + i for i in range(50)])),
    Case("sql: a UBIGINT of 2^64-1 in one row", duckdb_query(
        f"SELECT (CASE WHEN i = 29 THEN {_BIG} ELSE i END)::UBIGINT AS a FROM range(40) t(i) ORDER BY i"), 0, None,
        issue=41, item=9, writes=("out",),
        after=one_row_quarantined(30, f"a: {_BIG} is beyond int64", [i for i in range(40) if i != 29])),
    Case("sql: a DuckDB UNION holding text in one row", duckdb_query(
        "SELECT (CASE WHEN i = 12 THEN union_value(s := 'twelve') ELSE union_value(n := i) END)"
        "::UNION(n BIGINT, s VARCHAR) AS a FROM range(40) t(i) ORDER BY i"), 0, None, issue=41, item=9,
        writes=("out",), after=one_row_quarantined(13, "a: 'twelve' is not an int",
                                                   [i for i in range(40) if i != 12])),
    Case("sql: a DuckDB UNION of numbers is read as numbers", duckdb_query(
        "SELECT (CASE WHEN i % 2 = 0 THEN union_value(f := i / 2) ELSE union_value(n := i) END)"
        "::UNION(n BIGINT, f DOUBLE) AS a FROM range(40) t(i) ORDER BY i"), 0, None, issue=41, item=9,
        writes=("out",), after=written_values([i / 2 if i % 2 == 0 else i for i in range(40)])),
]


CASES = SQL_CASES
