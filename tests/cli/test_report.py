"""The run report: its numbers equal independent computations on the raw rows, it is self-contained and
escaped, it counts quarantine reasons, and it renders in headless Chromium with its charts drawn.
"""

import base64
import collections
import csv
import fcntl
import hashlib
import io
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from html import escape, unescape
from pathlib import Path

import numpy as np
import pytest
from example_job import EXAMPLE_CONFIG, census_config, census_frame, example_config, split_of_each_row
from typer.testing import CliRunner

from skewless.cli import app
from skewless.config import JobConfig
from skewless.drift import SKEW, Thresholds, compare, reference_edges
from skewless.encoding_advice import advise
from skewless.pipelines.reading.synthetic_rows import COLUMNS, synthetic_rows
from skewless.report import REPORT_FILE, render_report
from skewless.report.data_warnings import bucket_boundaries

NUMERIC = ("age", "hours_per_week", "fnlwgt", "capital_gain")
CATEGORICAL = ("workclass", "education", "occupation", "native_country")


@pytest.fixture(scope="module")
def raw_rows():
    seed, rows = EXAMPLE_CONFIG["input"]["seed"], EXAMPLE_CONFIG["input"]["rows"]
    return [row for _, table in synthetic_rows(seed, 0, rows) for row in table.to_pylist()]


@pytest.fixture(scope="module")
def report(example_run):
    path = render_report(example_run.output_dir)
    return Path(path).read_text(encoding="utf-8")


def article(html: str, feature: str) -> str:
    """The report's section about one feature."""
    match = re.search(rf'<article class="feature" id="feature-{feature}">(.*?)</article>', html, re.S)
    assert match, f"no section for {feature}"
    return match.group(1)


def cell(section: str, header: str) -> str:
    match = re.search(rf"<th>{re.escape(header)}</th><td class=num>([^<]*)</td>", section)
    assert match, f"no {header!r} row"
    return match.group(1)


def shown_number(text: str) -> tuple[float, float]:
    """A number as the page shows it, and half a unit of its last digit (the rounding it went through)."""
    text = text.replace(",", "")
    assert "e" not in text, text
    return float(text), 0.5 * 10.0 ** -len(text.partition(".")[2])


def card(html: str, label: str) -> str:
    match = re.search(rf'data-card="{re.escape(label)}">.*?<div class="value">([^<]*)', html, re.S)
    assert match, f"no card {label!r}"
    return match.group(1)


def test_summary_cards_show_rows_read_and_written(report, example_run):
    total = EXAMPLE_CONFIG["input"]["rows"]
    assert card(report, "rows read") == f"{total:,}"
    written = example_run.rows["written"]
    assert sum(written.values()) == total
    for split, rows in written.items():
        assert card(report, f"{split} rows").strip() == f"{rows:,}"
    assert card(report, "quarantined").strip() == "0"
    shards = [s for split in example_run.shards.values() for s in split]
    assert card(report, "shards").strip() == str(len(shards))
    for shard in shards:
        assert f"<code>{shard['path']}</code></td><td class=num>{shard['rows']:,}</td>" in report


def test_numeric_statistics_equal_numpy(report, raw_rows):
    for feature in NUMERIC:
        section = article(report, feature)
        present = np.array([row[feature] for row in raw_rows if row[feature] is not None], dtype=np.float64)
        missing = len(raw_rows) - len(present)
        expected = {"mean": present.mean(), "std": present.std(), "min": present.min(), "max": present.max()}
        for stat, value in expected.items():
            shown, half_unit = shown_number(cell(section, stat))
            # float32 storage of fnlwgt / capital_gain moves the mean a little past the display's rounding
            assert abs(shown - value) <= half_unit + 1e-6 * abs(value), (feature, stat, shown, value)
        assert cell(section, "missing") == f"{missing:,} ({missing / len(raw_rows):.2%})"
        assert cell(section, "rows with a value") == f"{len(present):,}"
    assert int(cell(article(report, "capital_gain"), "missing").split()[0].replace(",", "")) > 0


def test_histogram_bars_are_proportional_to_counts(report, example_run):
    for feature in NUMERIC:
        counts = np.array(example_run.features[feature]["histogram"]["counts"], dtype=np.float64)
        svg = re.search(r'<figure class="histogram">(.*?)</figure>', article(report, feature), re.S).group(1)
        heights = np.array([float(h) for h in re.findall(r'<rect class="bar" [^>]*height="([0-9.]+)"', svg)])
        assert len(heights) == len(counts)
        np.testing.assert_allclose(heights / heights.max(), counts / counts.max(), atol=0.01)
        tips = re.findall(r"<title>\[[^<]*\): ([0-9,]+) rows</title>", svg)
        assert [int(t.replace(",", "")) for t in tips] == counts.astype(int).tolist()


def test_top_values_vocabulary_and_oov_rate(report, raw_rows, example_run):
    rows = len(raw_rows)
    for feature in ("workclass", "education", "occupation"):
        counts = collections.Counter(row[feature].decode() for row in raw_rows if row[feature] is not None)
        section = article(report, feature)
        bars = re.findall(r"<g><title>([^<]*): ([0-9,]+) rows</title>", section)
        assert {value: int(count.replace(",", "")) for value, count in bars} == dict(counts), feature
        assert [int(count.replace(",", "")) for _, count in bars] == sorted(counts.values(), reverse=True)
        assert cell(section, "distinct values") == str(len(counts))
    # education keeps its top_k most frequent values: the others are out of vocabulary
    top_k = EXAMPLE_CONFIG["features"]["education"]["top_k"]
    counts = collections.Counter(row["education"].decode() for row in raw_rows)
    kept = {value for value, _ in counts.most_common(top_k)}
    section = article(report, "education")
    oov_bars = re.findall(r'<g><title>([^<]*): [0-9,]+ rows</title><text[^>]*>[^<]*</text><rect class="bar-oov"', section)
    assert set(oov_bars) == set(counts) - kept
    assert cell(section, "vocabulary size") == str(top_k)
    oov_rows = sum(count for value, count in counts.items() if value not in kept)
    assert cell(section, "OOV rows") == f"{oov_rows:,}"
    assert cell(section, "OOV rate") == f"{oov_rows / rows:.2%}"
    assert example_run.features["education"]["oov_rows"] == oov_rows


def test_one_svg_per_chart_and_nothing_fetched(report):
    # a chart of the run's values per feature, and one of train vs eval per numeric feature
    assert report.count("<svg") == 2 * len(NUMERIC) + len(CATEGORICAL)
    assert report.count('<figure class="split-histogram">') == len(NUMERIC)
    assert report.count('<figure class="histogram">') == len(NUMERIC)
    assert report.count('<figure class="top-values">') == len(CATEGORICAL)
    assert not re.search(r"https?://", report)
    for fetching in ("<script", "<img", "<link rel=\"stylesheet\"", "src=", "url(", "@import"):
        assert fetching not in report, fetching


def test_data_is_escaped(example_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(example_run.output_dir, run_dir)
    hostile = '<script>alert("x")</script>&'
    summary = json.loads((run_dir / "run.json").read_text())
    summary["features"]["workclass"]["top_values"][0][0] = hostile
    summary["name"] = hostile
    (run_dir / "run.json").write_text(json.dumps(summary))
    (run_dir / "quarantine").mkdir()
    (run_dir / "quarantine" / "rows-00000-of-00001.jsonl").write_text(
        json.dumps({"source": "in.csv", "line": 7, "reason": f"workclass: {hostile}", "raw": f"<b>{hostile}</b>"}) + "\n"
    )
    html = Path(render_report(run_dir)).read_text()
    assert "<script" not in html and "<b>" not in html
    assert escape(hostile) in html
    assert f"<td>workclass: {escape(hostile)}</td>" in html


def csv_fields(row: dict) -> list[str]:
    return ["" if row[c] is None else row[c].decode() if isinstance(row[c], bytes) else str(row[c]) for c in COLUMNS]


def write_csv(path: Path, rows: list[list[str]]) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())


def test_quarantine_reasons_counted(tmp_path, raw_rows):
    from skewless.pipelines import run

    rows = [csv_fields(row) for row in raw_rows[:400]]
    # Types are inferred from the head of the first file; the bad rows sit in the second one.
    write_csv(tmp_path / "clean.csv", rows[:300])
    age = list(COLUMNS).index("age")
    not_a_number = [[*row[:age], "old", *row[age + 1:]] for row in rows[:3]]
    short = [row[:-1] for row in rows[3:5]]
    write_csv(tmp_path / "dirty.csv", rows[300:350] + not_a_number + rows[350:] + short)
    config = example_config(
        tmp_path / "run",
        input={"format": "csv", "paths": [str(tmp_path / "clean.csv"), str(tmp_path / "dirty.csv")],
               "columns": list(COLUMNS)},
        output={"shards": 1, "max_bad_fraction": 0.05},
    )
    result = run(config)
    assert result.rows["quarantined"] == 5
    html = Path(render_report(result.output_dir)).read_text()
    section = html[html.index('<h2 id="quarantine">Quarantine</h2>'):]
    # the summary's card links to the section, which sits at the bottom of the page
    assert re.search(r'data-card="quarantined"><div class="label">quarantined</div><div class="value">'
                     r'<a href="#quarantine">5</a>', html)
    counted = re.findall(r"<tr><td class=num>([0-9,]+)</td><td>([^<]*)</td><td><code>([^<]*)</code>", section)
    by_kind = collections.Counter()
    for count, reason, where in counted:
        by_kind["age" if reason.startswith("age:") else "fields" if "fields" in reason else reason] += int(count)
        assert where.startswith(str(tmp_path / "dirty.csv") + ":"), where
    assert by_kind == {"age": 3, "fields": 2}
    # the first row of each reason is shown where it is in the file
    lines = {reason: int(where.rpartition(":")[2]) for _, reason, where in counted}
    assert sorted(lines.values()) == [51, 104]
    assert "5 rows were quarantined" in section


def test_missing_run_is_one_line_error(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "run.json: not found" in result.output


def test_cli_rerenders_and_opens(example_run, tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    shutil.copytree(example_run.output_dir, run_dir)
    (run_dir / REPORT_FILE).unlink(missing_ok=True)
    opened = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    result = CliRunner().invoke(app, ["report", str(run_dir), "--open"])
    assert result.exit_code == 0, result.output
    assert (run_dir / REPORT_FILE).read_text().startswith("<!DOCTYPE html>")
    assert opened == [(run_dir / REPORT_FILE).resolve().as_uri()]


# ------------------------------------------------------------- the questions: train vs eval, warnings, advice


def split_cells(section: str) -> dict[str, dict[str, int]]:
    """A categorical feature's top values side by side: value -> split -> the count the page carries."""
    table = re.search(r'<table class="split-values">(.*?)</table>', section, re.S).group(1)
    shown = {}
    for value, cells in re.findall(r'<tr data-value="([^"]*)">(.*?)</tr>', table, re.S):
        counts = re.findall(r'data-split="([^"]*)" data-count="([0-9]*)"', cells)
        shown[unescape(value)] = {split: int(count) for split, count in counts if count}
    return shown


def shown_distance(section: str) -> float:
    return float(re.search(r'data-distance="([^"]+)"', section).group(1))


def zeros_shown(section: str) -> dict[str, tuple[int, int]]:
    found = re.findall(r'data-zeros-split="([^"]*)" data-zeros="([0-9]+)" data-values="([0-9]+)"', section)
    return {split: (int(zeros), int(values)) for split, zeros, values in found}


def split_shares(section: str) -> dict[str, float]:
    """The overlaid chart's shares summed per split."""
    totals = collections.Counter()
    for split, share in re.findall(r'<rect class="split split-[0-9]" data-split="([^"]*)" [^>]*data-share="([^"]+)"',
                                   section):
        totals[split] += float(share)
    return totals


def warnings_of(section: str, kind: str) -> list[str]:
    return [unescape(text) for text in re.findall(rf'<li data-warning="{kind}">([^<]*)</li>', section)]


def test_train_vs_eval_numbers_equal_the_rows_of_each_split(report, example_run, raw_rows):
    splits = np.array(split_of_each_row(JobConfig.model_validate(example_config(example_run.output_dir))))
    names = list(example_run.rows["written"])
    order = list(EXAMPLE_CONFIG["output"]["splits"])
    for feature in CATEGORICAL:
        shown = split_cells(article(report, feature))
        assert shown, feature
        for value, counts in shown.items():
            for split, count in counts.items():
                in_split = [row for row, s in zip(raw_rows, splits) if order[s] == split]
                assert count == sum(row[feature] is not None and row[feature].decode() == value for row in in_split)
    for feature in NUMERIC:
        section = article(report, feature)
        values = np.array([np.nan if row[feature] is None else row[feature] for row in raw_rows], dtype=np.float64)
        zeros = zeros_shown(section)
        for index, split in enumerate(order):
            in_split = values[(splits == index) & ~np.isnan(values)]
            assert zeros[split] == (int(np.sum(in_split == 0)), len(in_split)), (feature, split)
        assert zeros["all"] == (int(np.sum(values == 0)), int(np.sum(~np.isnan(values))))
        assert sorted(split_shares(section)) == sorted(names)
        for total in split_shares(section).values():
            assert abs(total - 1) < 1e-9


def test_numeric_splits_are_drawn_on_the_bins_the_distance_uses(report, example_run, raw_rows):
    # age and hours_per_week have fewer values than the statistics count exactly: the bins are the train
    # split's deciles of its exact counts, each split's rows in them counted by NumPy (the rows past the train
    # split's range drawn in its first and last interval)
    splits = np.array(split_of_each_row(JobConfig.model_validate(example_config(example_run.output_dir))))
    order = list(EXAMPLE_CONFIG["output"]["splits"])
    for feature in ("age", "hours_per_week"):
        values = np.array([np.nan if row[feature] is None else row[feature] for row in raw_rows], dtype=np.float64)
        present = ~np.isnan(values)
        train_values, train_rows = np.unique(values[(splits == 0) & present], return_counts=True)
        edges = reference_edges(train_values, train_rows.astype(np.float64), zeros=bool(np.any(values == 0)))
        intervals = [i for i in range(len(edges) - 1) if edges[i] != np.nextafter(edges[i + 1], -np.inf)]
        shown = collections.defaultdict(dict)
        for split, index, share in re.findall(r'data-split="([^"]*)" data-bin="([0-9]+)" data-share="([^"]+)"',
                                              article(report, feature)):
            shown[split][int(index)] = float(share)
        for index, split in enumerate(order):
            in_split = values[(splits == index) & present]
            rows = [np.sum((in_split > edges[i]) & (in_split <= edges[i + 1])) for i in intervals]
            rows[0] += np.sum(in_split <= edges[0])
            rows[-1] += np.sum(in_split > edges[-1])
            assert [shown[split][i] for i in range(len(intervals))] == pytest.approx(
                [r / len(in_split) for r in rows], abs=1e-12), (feature, split)
        assert len(intervals) >= 5, feature  # deciles, not one bucket holding most rows


def test_distances_are_the_ones_validate_prints(report, example_run):
    comparison = compare(example_run.output_dir, "train", example_run.output_dir, "eval", Thresholds(), SKEW)
    distances = {f.feature: f.distance for f in comparison.features}
    for feature in NUMERIC + CATEGORICAL:
        assert shown_distance(article(report, feature)) == distances[feature], feature
    label = re.search(r'<div class="feature label" id="label">(.*?)</div></div>', report, re.S).group(1)
    assert shown_distance(label) == distances["label"]


def test_encoding_advice_is_advise_of_the_ids(report, example_run):
    for feature in CATEGORICAL:
        options = EXAMPLE_CONFIG["features"][feature]
        if "hash_buckets" in options:
            ids = options["hash_buckets"]
        else:
            vocabulary = Path(example_run.output_dir, "transform_graph", "transform_fn", "assets", f"vocab_{feature}")
            ids = len(vocabulary.read_bytes().splitlines()) + options["num_oov_buckets"]
        advice = advise(ids)
        shown = re.search(r'data-advice-ids="([0-9]+)" data-advice="([^"]+)" data-advice-width="([0-9]+)">'
                          r"model input: ([^<]*)<", article(report, feature))
        assert shown.groups() == (str(ids), advice.encoding, str(advice.width), escape(advice.describe())), feature
    # bucket ids are categorical too; other numeric features go in as they are
    buckets = EXAMPLE_CONFIG["features"]["hours_per_week"]["num_buckets"]
    assert f'data-advice-ids="{buckets}" data-advice="{advise(buckets).encoding}"' in article(report, "hours_per_week")
    for feature in set(NUMERIC) - {"hours_per_week"}:
        assert "data-advice" not in article(report, feature)


def test_small_vocabulary_for_many_values_is_flagged(report, raw_rows):
    top_k = EXAMPLE_CONFIG["features"]["education"]["top_k"]
    counts = collections.Counter(row["education"] for row in raw_rows)
    oov = sum(counts.values()) - sum(count for _, count in counts.most_common(top_k))
    [warning] = warnings_of(article(report, "education"), "cardinality")
    assert f"keeps {top_k:,} of {len(counts):,} distinct values: {oov / len(raw_rows):.2%} of the rows" in warning
    for feature in ("workclass", "occupation"):
        assert not warnings_of(article(report, feature), "cardinality")


@pytest.fixture(scope="module")
def census_report(census_run):
    return Path(render_report(census_run.output_dir)).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def census_rows(census_path):
    return census_frame(census_path)


def test_census_question_marks_are_flagged_as_sentinels(census_report, census_rows):
    assert (census_rows["label"] != "?").all()  # the label has no card of its own
    for feature in census_rows.columns.drop("label"):
        section = article(census_report, feature)
        question_marks = int((census_rows[feature].astype(str) == "?").sum())
        flagged = warnings_of(section, "sentinel")
        if feature in ("workclass", "occupation", "native-country"):
            assert question_marks > 0
            assert flagged[0].startswith("'?' looks like a placeholder") and f"({question_marks:,} rows)" in flagged[0]
        elif feature == "capital-gain":
            assert len(flagged) == 1 and flagged[0].startswith(f"its max is {census_rows[feature].max():,},")
        else:
            assert question_marks == 0 and flagged == [], feature


def test_census_capital_gain_zeros_equal_numpy(census_report, census_rows, census_run, census_path):
    section = article(census_report, "capital-gain")
    zeros = zeros_shown(section)
    values = census_rows["capital-gain"].to_numpy()
    assert zeros["all"] == (int(np.sum(values == 0)), len(values))
    assert f"all {np.mean(values == 0):.2%}" in section
    splits = split_of_each_row(census_config(census_path, census_run.output_dir))
    for index, split in enumerate(("train", "eval")):
        assert zeros[split] == (int(np.sum(values[splits == index] == 0)), int(np.sum(splits == index)))
    # zeros are a bar of their own: its share per split is theirs among the split's rows
    for split, share in re.findall(r'data-split="([^"]*)" data-point="0.0" data-share="([^"]+)"', section):
        assert float(share) == pytest.approx(zeros[split][0] / zeros[split][1], abs=1e-12)


def test_census_label_by_split_equals_the_rows(census_report, census_rows, census_run, census_path):
    splits = split_of_each_row(census_config(census_path, census_run.output_dir))
    label = re.search(r'<div class="feature label" id="label">(.*?)</div></div>', census_report, re.S).group(1)
    shown = split_cells(label)
    for index, split in enumerate(("train", "eval")):
        counts = census_rows["label"][splits == index].value_counts()
        assert {value: by_split[split] for value, by_split in shown.items()} == counts.to_dict()
        shares = re.findall(rf'data-split="{split}" data-count="[0-9]+">([0-9.]+)%', label)
        assert [float(share) for share in shares] == [round(100 * share, 2) for share in counts / counts.sum()]


def test_census_empty_buckets_hold_no_row(census_report, census_rows, census_run):
    [warning] = warnings_of(article(census_report, "hours-per-week"), "empty-buckets")
    empty = [int(b) for b in re.match(r"buckets ([0-9, ]+) of 10", warning).group(1).split(", ")]
    boundaries = bucket_boundaries(census_run.features["hours-per-week"]["quantiles"], 10)
    # tft.bucketize's id: how many boundaries are <= the value
    ids = np.searchsorted(np.array(boundaries), census_rows["hours-per-week"].to_numpy(), side="right")
    counts = np.bincount(ids, minlength=10)
    assert empty and all(counts[b] == 0 for b in empty)
    assert all(counts[b] > 0 for b in range(10) if b not in empty)
    for feature in census_rows.columns.drop("label"):
        if feature != "hours-per-week":
            assert not warnings_of(article(census_report, feature), "empty-buckets")


# ------------------------------------------------------------------ an output of `skewless apply`


def applied_distances(html: str, comparison: str) -> dict[str, float]:
    section = re.search(rf'data-comparison="{re.escape(comparison)}">(.*?)</table>', html, re.S).group(1)
    return {feature: float(distance) for feature, distance in
            re.findall(r'<tr data-feature="([^"]*)" data-distance="([^"]+)"', section)}


def applied_verdicts(html: str, comparison: str) -> list[tuple[str, float, str]]:
    """(feature, threshold, verdict) of each row of a comparison's table, in the page's order."""
    section = re.search(rf'data-comparison="{re.escape(comparison)}">(.*?)</table>', html, re.S).group(1)
    return [(feature, float(threshold), verdict) for feature, threshold, verdict in
            re.findall(r'<tr data-feature="([^"]*)" data-distance="[^"]*" data-threshold="([^"]+)" '
                       r'data-verdict="([^"]+)">', section)]


def test_applied_output_on_the_runs_own_input_matches_it_exactly(example_run, tmp_path):
    from skewless.pipelines import apply

    result = apply(example_run.output_dir, str(tmp_path / "applied"))
    cli = CliRunner().invoke(app, ["report", result.output_dir])
    assert cli.exit_code == 0, cli.output
    html = Path(result.output_dir, REPORT_FILE).read_text(encoding="utf-8")
    summary = json.loads(Path(result.output_dir, "run.json").read_text())
    assert f'data-training-run="{escape(example_run.output_dir)}"' in html
    # the digest as docs/recipes/apply-and-predict.md reproduces it: sha256sum of every graph file, sorted by path, hashed again
    graph = Path(example_run.output_dir, "transform_graph")
    listing = "".join(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  ./{path.relative_to(graph)}\n"
                      for path in sorted((p for p in graph.rglob("*") if p.is_file()),
                                         key=lambda p: str(p.relative_to(graph)).encode()))
    digest = hashlib.sha256(listing.encode()).hexdigest()
    assert summary["applied"]["graph_sha256"] == digest and f'data-graph-sha256="{digest}"' in html
    for split, rows in result.rows["written"].items():
        assert card(html, f"{split} rows").startswith(f"{rows:,}")
    # the same rows through the same graph: each split's statistics equal the training run's, distance 0
    features = set(example_run.features) | {"label"}
    for split in result.rows["written"]:
        distances = applied_distances(html, f"{result.output_dir}:{split}")
        assert set(distances) == features and set(distances.values()) == {0.0}
    for feature, count in summary["oov_rows"].items():
        assert f'data-oov-feature="{feature}" data-oov-rows="{count}"' in html
        assert count == example_run.features[feature]["oov_rows"]


def test_applied_new_data_is_compared_with_the_training_split(example_run, tmp_path):
    from skewless.pipelines import apply

    new = [row for _, table in synthetic_rows(11, 0, 300) for row in table.to_pylist()]
    write_csv(tmp_path / "new.csv", [list(COLUMNS)] + [csv_fields(row) for row in new])
    result = apply(example_run.output_dir, str(tmp_path / "applied"), inputs=[str(tmp_path / "new.csv")],
                   input_format="csv", header=True, one_split=True)
    html = Path(render_report(result.output_dir)).read_text(encoding="utf-8")
    [split] = result.rows["written"]
    shown = applied_distances(html, f"{result.output_dir}:{split}")
    # the numbers `skewless validate OUTPUT --against RUN` prints: distances, thresholds, verdicts
    validated = CliRunner().invoke(app, ["validate", result.output_dir, "--against", example_run.output_dir, "--json"])
    assert validated.exit_code in (0, 1), validated.output
    expected = json.loads(validated.stdout)["comparisons"][0]["features"]
    assert shown == {f["feature"]: f["distance"] for f in expected}
    assert all(distance > 0 for distance in shown.values())
    verdicts = applied_verdicts(html, f"{result.output_dir}:{split}")
    assert sorted(verdicts) == sorted((f["feature"], f["threshold"], f["verdict"]) for f in expected)
    # the crossed first, then the largest distances
    order = [(verdict != "CROSSED", -shown[feature]) for feature, _, verdict in verdicts]
    assert order == sorted(order)


def test_skewless_apply_writes_a_page_naming_a_new_category_with_its_rows(example_run, tmp_path):
    rows = [row for _, table in synthetic_rows(12, 0, 400) for row in table.to_pylist()]
    for row in rows[::8]:  # 50 rows of a workclass the training run never saw
        row["workclass"] = b"Contractor"
    write_csv(tmp_path / "new.csv", [list(COLUMNS)] + [csv_fields(row) for row in rows])
    done = CliRunner().invoke(app, ["apply", example_run.output_dir, "--output", str(tmp_path / "applied"),
                                    "--input", str(tmp_path / "new.csv"), "--format", "csv", "--header",
                                    "--splits", "all"])
    assert done.exit_code == 0, done.output
    page = tmp_path / "applied" / REPORT_FILE
    assert done.stdout.splitlines()[-1] == f"report: {page}"  # the command ends naming the page it wrote
    # its progress, as run's: the transform pass alone (no analysis pass to report)
    assert re.search(r"skewless apply \S+ \[[0-9:]+\]: done; transform: 400 rows", done.stderr), done.stderr
    assert "analyze" not in done.stderr
    html = page.read_text(encoding="utf-8")
    unseen = re.findall(r'data-unseen-feature="([^"]*)" data-unseen-value="([^"]*)" data-rows="(\d+)"', html)
    assert ("workclass", "Contractor", "50") in unseen
    assert [value for feature, value, _ in unseen if feature == "workclass"] == ["Contractor"]
    verdicts = {feature: verdict for feature, _, verdict in applied_verdicts(html, f"{tmp_path / 'applied'}:all")}
    assert verdicts["workclass"] == "CROSSED"  # 12.5% of the rows moved to a new value: past L-infinity's 0.04
    # beside the training split, as the run page draws splits: top values side by side, numbers on the distance's bins
    workclass = re.search(r'data-view="workclass">(.*?)</article>', html, re.S).group(1)
    assert re.search(r'<tr data-value="Contractor">.*?data-split="all \(applied\)" data-count="50"', workclass, re.S)
    for feature in NUMERIC:
        view = re.search(rf'data-view="{feature}">(.*?)</article>', html, re.S).group(1)
        totals = split_shares(view)
        assert sorted(totals) == ["all (applied)", "train (training run)"]
        assert all(abs(total - 1) < 1e-9 for total in totals.values())


# ------------------------------------------------------------------------------------- in a real browser


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")


_PLACE_FDS = """
import os, sys
os.dup2(int(sys.argv[1]), 3)
os.dup2(int(sys.argv[2]), 4)
os.close(int(sys.argv[1]))
os.close(int(sys.argv[2]))
os.execv(sys.argv[3], sys.argv[3:])
"""


class DevTools:
    """Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe):
    JSON messages separated by NUL bytes, written to the browser's fd 3 and read from its fd 4."""

    def __init__(self, binary: str, profile: Path):
        # The browser's ends are moved above fd 9, so that placing one at 3 cannot overwrite the other.
        to_browser_read, self._to_browser = _high_fds(*os.pipe())
        self._from_browser, from_browser_write = _high_fds(*os.pipe())
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                 "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
                 "--mute-audio", "--hide-scrollbars", "about:blank"]
        # A small Python launcher puts the pipe ends at fds 3 and 4 (no preexec_fn: unsafe with TF's threads).
        self.process = subprocess.Popen(
            [sys.executable, "-c", _PLACE_FDS, str(to_browser_read), str(from_browser_write), binary, *flags],
            pass_fds=(to_browser_read, from_browser_write), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session = None

    def send(self, method: str, timeout: float = 30, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._receive(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "Chromium did not answer in time"
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                assert chunk, "Chromium closed the DevTools pipe"
                self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def _high_fds(*fds: int) -> list[int]:
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds]
    for fd in fds:
        os.close(fd)
    return moved


def chart_pixels(png: bytes, clip: dict) -> float:
    """The share of pixels inside `clip` drawn in the report's bar color (#3b6fd4)."""
    from PIL import Image

    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int32)
    x, y, width, height = (int(round(clip[k])) for k in ("x", "y", "width", "height"))
    region = image[y:y + height, x:x + width]
    bar = np.array([0x3B, 0x6F, 0xD4])
    return float(np.mean(np.abs(region - bar).sum(axis=-1) < 30))


# Set to a path (docs/report.png) to keep the census report's screenshot: docs/statistics.md shows it.
SCREENSHOT_ENV = "SKEWLESS_REPORT_SCREENSHOT"
CHARTS = """Array.from(document.querySelectorAll('svg.chart')).map(svg => {
    const box = svg.getBoundingClientRect();
    const bars = Array.from(svg.querySelectorAll('rect'));
    return {x: box.x + scrollX, y: box.y + scrollY, width: box.width, height: box.height, bars: bars.length,
            split: svg.closest('figure').className === 'split-histogram',
            fill: bars.length ? getComputedStyle(bars[0]).fill : null};
})"""


def render_in_chromium(page: str, profile: Path, width: int = 1280, height: int | None = None):
    """Loads `page` (a file: URI) in headless Chromium: (full-page PNG, or its top `height` pixels; the charts'
    boxes; the browser's events)."""
    browser = DevTools(chromium_binary(), profile)
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        browser.session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable")
        browser.send("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "light"}])
        browser.send("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        browser.send("Page.navigate", url=page)
        browser.wait_for("Page.loadEventFired")
        charts = browser.send("Runtime.evaluate", returnByValue=True, expression=CHARTS)["result"]["value"]
        size = browser.send("Page.getLayoutMetrics")["cssContentSize"]
        browser.send("Emulation.setDeviceMetricsOverride", width=width, height=height or int(size["height"]),
                     deviceScaleFactor=1, mobile=False)
        shot = browser.send("Page.captureScreenshot", format="png", captureBeyondViewport=height is None)
        png = base64.b64decode(shot["data"])
    finally:
        browser.close()
    assert png.startswith(b"\x89PNG")
    return png, charts, browser.events


def assert_nothing_fetched_and_no_errors(events: list, page: str) -> None:
    requests = [e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"]
    assert [url for url in requests if not url.startswith("data:")] == [page]
    assert not [e for e in events if e.get("method") == "Network.loadingFailed"]
    errors = [e for e in events if e.get("method") == "Runtime.exceptionThrown"
              or e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "warning", "assert")
              or e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in ("error", "warning")]
    assert not errors, errors


def test_renders_in_headless_chromium(report, example_run, tmp_path):
    page = Path(example_run.output_dir, REPORT_FILE).resolve().as_uri()
    png, charts, events = render_in_chromium(page, tmp_path / "profile")
    (tmp_path / "report.png").write_bytes(png)
    assert_nothing_fetched_and_no_errors(events, page)

    summary = json.loads(Path(example_run.output_dir, "run.json").read_text())
    expected_bars = [len(summary["features"][f]["histogram"]["counts"]) for f in NUMERIC] + [
        len(summary["features"][f]["top_values"]) for f in CATEGORICAL
    ]
    run_charts = [chart for chart in charts if not chart["split"]]
    assert len(run_charts) == len(NUMERIC) + len(CATEGORICAL)
    assert sorted(chart["bars"] for chart in run_charts) == sorted(expected_bars)
    for chart in run_charts:
        assert chart["width"] > 200 and chart["height"] > 100
        assert chart["fill"] == "rgb(59, 111, 212)"
        # the bars are on the screenshot: a visible share of each chart is the bar color
        assert chart_pixels(png, chart) > 0.015, chart
    split_charts = [chart for chart in charts if chart["split"]]
    assert len(split_charts) == len(NUMERIC)
    for chart in split_charts:
        assert chart["width"] > 200 and chart["height"] > 100 and chart["bars"] > 0
    # the page uses its width: cards side by side, not one narrow column
    lefts = {round(chart["x"]) for chart in run_charts}
    assert len(lefts) > 1


def test_census_report_in_headless_chromium(census_report, census_run, tmp_path):
    page = Path(census_run.output_dir, REPORT_FILE).resolve().as_uri()
    png, charts, events = render_in_chromium(page, tmp_path / "profile", width=1400, height=2600)
    assert_nothing_fetched_and_no_errors(events, page)
    numeric = len(re.findall(r'<figure class="split-histogram">', census_report))
    assert numeric == 6 and sum(chart["split"] for chart in charts) == numeric
    target = os.environ.get(SCREENSHOT_ENV)
    if target:
        Path(target).write_bytes(png)
