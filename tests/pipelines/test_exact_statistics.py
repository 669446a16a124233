"""Statistics are exact counts while a column has at most EXACT_DISTINCT values; past it the distinct count is a
labelled estimate and the top values are the summary's candidates counted exactly by the transform pass.

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
import pytest
from example_job import EXAMPLE_CONFIG
from tfx_bsl import sketches
from typer.testing import CliRunner

from skewless.cli import app
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.statistics.split_statistics import SplitStatistics, candidate_counts, dataset_statistics
from skewless.pipelines.analyze.stats import EXACT_DISTINCT, TOP_BUCKETS, TOP_VALUES, ColumnStats, summarize, top_candidates
from skewless.report.run_files import no_frequent_value
from skewless.pipelines.reading.synthetic_rows import synthetic_rows


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


def test_a_column_of_unique_dates_counts_each_once_and_lists_no_frequent_value():
    start = datetime.date(2000, 1, 1)
    dates = [str(start + datetime.timedelta(days=i)) for i in range(EXACT_DISTINCT)]
    result = _statistics(dates)
    assert result["distinct"] == EXACT_DISTINCT and result["exact"]["distinct"]
    # a value in one row is not a frequent value: none is listed (20 dates of one row each were, before)
    assert result["top_values"] == [] and result["listed_from"] == 2


def _counted_exactly(values: list[str], parts: int = 4) -> tuple[dict, dict]:
    """As the job: the analysis pass's partial states of `parts` workers, then the transform pass counting the
    candidates of their merged summary in each part's rows. (run.json's statistics, one split's proto feature)."""
    columns = [RawColumn("column", "bytes")]
    chunks = [pa.table({"column": pa.array(chunk.tolist(), pa.string())})
              for chunk in np.array_split(np.array(values, dtype=object), parts)]
    partials = []
    for chunk in chunks:
        stats = ColumnStats("bytes")
        stats.add(chunk.column("column").combine_chunks())
        partials.append({"column": stats.state()})
    candidates = top_candidates(partials, ["column"])
    states = []
    for chunk in chunks:
        split = SplitStatistics(columns, candidates=candidates)
        split.add(chunk)
        states.append(split.state())
    counted = {name: counts for name, (counts, _) in candidate_counts(states).items()}
    (feature,) = dataset_statistics("all", states, columns).datasets[0].features
    return summarize(partials, counted)["column"], feature


@pytest.mark.parametrize("later", [0, 3 * TOP_BUCKETS, 2 * EXACT_DISTINCT])
def test_the_summaries_of_few_values_are_those_of_every_row(later):
    """While a column has at most TOP_BUCKETS values, its summaries take each distinct value once with its rows
    (`ColumnStats.add`): the same distinct-count sketch, byte for byte, as one fed every row, and the same
    Misra-Gries counts; once `later` new values come, past the summary's buckets (or the exact counts), its counts
    keep the summary's bounds (tfx_bsl's summary of every row evicts differently from process to process then:
    its hash order)."""
    rng = np.random.default_rng(7)
    few = [f"v{i}" for i in range(TOP_BUCKETS - 10)]
    weights = np.linspace(1, 50, len(few)) / np.linspace(1, 50, len(few)).sum()
    batches = [pa.array(rng.choice(few, 5000, p=weights)) for _ in range(3)]
    batches += [pa.array(rng.choice([f"w{i}" for i in range(later)], 3 * later)) for _ in range(2) if later]
    batches.append(pa.array(rng.choice(few, 4000)))
    stats = ColumnStats("bytes")
    top, distinct = sketches.MisraGriesSketch(TOP_BUCKETS), sketches.KmvSketch(1024)
    for batch in batches:
        stats.add(batch)
        top.AddValues(batch)
        distinct.AddValues(batch)

    assert stats.distinct.Serialize() == distinct.Serialize()
    assert (stats.exact is not None) == (later < EXACT_DISTINCT)
    estimates = {item["values"].decode(): item["counts"] for item in stats.top.Estimate().to_pylist()}
    if not later:
        assert estimates == {item["values"].decode(): item["counts"] for item in top.Estimate().to_pylist()}
    rows = collections.Counter(value for batch in batches for value in batch.to_pylist())
    bound = sum(rows.values()) / (TOP_BUCKETS + 1)
    assert all(rows[value] <= count <= rows[value] + bound for value, count in estimates.items())  # upper bounds
    assert {value for value, count in rows.items() if count > bound} <= set(estimates)


def test_past_the_threshold_the_top_values_are_the_truly_frequent_ones_counted_exactly():
    rng = np.random.default_rng(10)
    # 5 values of 35 to 2,000 rows among 30,000 unique ones: more than 1/1,001 of the 32,900 rows is 33 rows
    frequent = {"h0": 35, "h1": 100, "h2": 300, "h3": 465, "h4": 2_000}
    values = [value for value, count in frequent.items() for _ in range(count)]
    values += [f"u{i}" for i in range(3 * EXACT_DISTINCT)] + ["near"] * 30  # "near": 30 rows, under the floor
    rng.shuffle(values)
    result, feature = _counted_exactly(values)
    floor = len(values) // (TOP_BUCKETS + 1) + 1
    assert floor == 33
    expected = [[value, count] for value, count in collections.Counter(values).most_common() if count >= floor]
    assert expected == [["h4", 2_000], ["h3", 465], ["h2", 300], ["h1", 100], ["h0", 35]]
    assert result["top_values"] == expected and result["listed_from"] == floor
    assert result["exact"] == {"distinct": False, "top_values": True}
    assert [[top.value, top.frequency] for top in feature.string_stats.top_values] == expected
    assert [c.str for c in feature.custom_stats if c.name == "approximate"] == ["unique"]


def test_past_the_threshold_a_column_of_unique_values_lists_none():
    result, feature = _counted_exactly([f"id-{i}" for i in range(2 * EXACT_DISTINCT)])
    assert result["top_values"] == [] and result["exact"]["top_values"]
    assert not feature.string_stats.top_values
    assert no_frequent_value(result) == "no value is in 20 rows or more: no frequent value to list"


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
