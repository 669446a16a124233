"""Statistics are exact counts while a column has at most EXACT_DISTINCT values, and labelled estimates past it.

Expected values come from collections.Counter over the same values; above the threshold the estimates are
held to the sketches' bounds (Misra-Gries: at most rows / TOP_BUCKETS off; KMV with 1024 hashes: a few %).
"""

import collections
import datetime
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
from example_job import EXAMPLE_CONFIG
from typer.testing import CliRunner

from skewless.cli import app
from skewless.pipelines.stats import EXACT_DISTINCT, TOP_BUCKETS, TOP_VALUES, ColumnStats, summarize
from skewless.pipelines.synthetic import synthetic_rows


def _statistics(values: list[str], parts: int = 4) -> dict:
    """The statistics of `values` as the job computes them: partial states of `parts` workers, merged."""
    states = []
    for chunk in np.array_split(np.array(values, dtype=object), parts):
        stats = ColumnStats("bytes")
        for batch in np.array_split(chunk, 3):
            stats.add(pa.array(batch.tolist(), pa.string()))
        states.append({"column": stats.state()})
    return summarize(states)["column"]


def _top(counter: collections.Counter) -> list[list]:
    return [[value, count] for value, count in sorted(counter.items(), key=lambda item: (-item[1], item[0]))][
        :TOP_VALUES]


def test_below_the_threshold_distinct_and_top_values_are_exact_counts():
    rng = np.random.default_rng(8)
    values = [f"v{int(v)}" for v in rng.zipf(1.3, 50_000) % 4_000]
    result = _statistics(values)
    counter = collections.Counter(values)
    assert result["exact"] == {"distinct": True, "top_values": True}
    assert result["distinct"] == len(counter)
    assert result["top_values"] == _top(counter)


def test_a_column_of_unique_dates_counts_each_once():
    start = datetime.date(2000, 1, 1)
    dates = [str(start + datetime.timedelta(days=i)) for i in range(EXACT_DISTINCT)]
    result = _statistics(dates)
    assert result["distinct"] == EXACT_DISTINCT and result["exact"]["distinct"]
    assert [count for _, count in result["top_values"]] == [1] * TOP_VALUES


def test_above_the_threshold_estimates_are_labelled_and_within_the_sketch_bounds():
    rng = np.random.default_rng(9)
    heavy = [f"h{i}" for i in range(5) for _ in range(2_000 * (i + 1))]
    values = heavy + [f"u{i}" for i in range(3 * EXACT_DISTINCT)]
    rng.shuffle(values)
    result = _statistics(values)
    counter = collections.Counter(values)
    assert result["exact"] == {"distinct": False, "top_values": False}
    assert abs(result["distinct"] - len(counter)) <= 0.1 * len(counter)
    bound = len(values) / TOP_BUCKETS
    for value, count in result["top_values"]:
        assert abs(count - counter[value]) <= bound, value
    assert [value for value, _ in result["top_values"][:5]] == [f"h{i}" for i in range(4, -1, -1)]


def test_report_and_inspect_mark_estimates_with_a_tilde(example_run, tmp_path):
    run_dir = Path(shutil.copytree(example_run.output_dir, tmp_path / "run"))
    summary = json.loads((run_dir / "run.json").read_text())
    seed, rows = EXAMPLE_CONFIG["input"]["seed"], EXAMPLE_CONFIG["input"]["rows"]
    raw = [row for _, table in synthetic_rows(seed, 0, rows) for row in table.to_pylist()]
    workclass = summary["features"]["workclass"]
    counter = collections.Counter(row["workclass"].decode() for row in raw)
    # a real run below the threshold: exact, and equal to the counts of its rows
    assert workclass["exact"] == {"distinct": True, "top_values": True}
    assert workclass["distinct"] == len(counter)
    assert workclass["top_values"] == _top(counter)[: len(workclass["top_values"])]

    workclass.update(distinct=1446, exact={"distinct": False, "top_values": False})
    (run_dir / "run.json").write_text(json.dumps(summary))
    shown = CliRunner().invoke(app, ["inspect", str(run_dir)], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "~1,446" in shown.output
    assert f"~{workclass['top_values'][0][1]:,}" in shown.output
    education = summary["features"]["education"]["distinct"]
    assert f"~{education:,}" not in shown.output  # exact statistics carry no tilde

    done = CliRunner().invoke(app, ["report", str(run_dir)])
    assert done.exit_code == 0, done.output
    page = (run_dir / "report.html").read_text()
    assert "~1,446" in page and "counts estimated by a Misra-Gries sketch" in page
    assert page.count("counts estimated by a Misra-Gries sketch") == 1  # workclass alone
    assert f">~{workclass['top_values'][0][1]:,}<" in page  # the bar's count
    numeric = sum(1 for f in summary["features"].values() if "histogram" in f)
    assert numeric and page.count("counts estimated from a quantiles sketch") == numeric
