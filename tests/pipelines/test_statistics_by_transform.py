"""run.json's statistics follow the transform, not the storage type: an int vocabulary column (movieId) has
distinct and top values and its OOV rate reaches the report's "Worth checking"; a constant column is flagged
(run.json, the report, inspect); a datetime column shows its date range. Expected values computed with pandas."""

import re
from html import unescape

import numpy as np
import pandas as pd
import pytest

from skewless.inspect_run import describe_run
from skewless.pipelines import run
from skewless.report import render_report

ROWS = 3_000
TOP_K = 40


def ratings(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    # movie ids drawn with weights falling off with their rank: the 40 most frequent have distinct counts, so the
    # vocabulary's top_k is the same set whatever the tie rule, and the rest (12% or so of the rows) are OOV
    ids = rng.choice(np.arange(1, 401) * 7, size=rows, p=(weights := 1 / np.arange(1, 401) ** 0.9) / weights.sum())
    seconds = rng.integers(1_577_836_800, 1_609_459_199, size=rows)  # 2020, UTC
    days = pd.to_datetime(rng.integers(18_000, 18_400, size=rows), unit="D").strftime("%Y-%m-%d")
    return pd.DataFrame({"movieId": ids, "rating": rng.integers(1, 6, size=rows), "source": "web", "version": 3,
                         "watched": seconds, "day": days})


@pytest.fixture(scope="module")
def movie_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("movies")
    frame = ratings(ROWS)
    path = folder / "ratings.csv"
    frame.to_csv(path, index=False)
    config = {
        "name": "movies",
        "input": {"format": "csv", "paths": [str(path)], "header": True},
        "features": {"movieId": {"transform": "vocabulary", "top_k": TOP_K},
                     "rating": {"transform": "z_score"},
                     "source": {"transform": "vocabulary"},
                     "version": {"transform": "passthrough"},
                     "watched": {"transform": "datetime", "parts": ["hour"], "timezone": "Europe/Paris"},
                     "day": {"transform": "datetime", "parts": ["day_of_week"]}},
        "output": {"dir": str(folder / "out"), "shards": 1},
    }
    return run(config), frame


def expected_top_values(values: pd.Series, n: int = 20) -> list[list]:
    counts = values.astype(str).value_counts()
    listed = sorted(((value, int(count)) for value, count in counts.items() if count >= 2),
                    key=lambda item: (-item[1], item[0].encode()))
    return [list(item) for item in listed[:n]]


def test_an_int_vocabulary_column_has_distinct_and_top_values(movie_run):
    result, frame = movie_run
    movie = result.features["movieId"]
    assert movie["type"] == "int" and movie["kind"] == "categorical"
    assert movie["distinct"] == frame["movieId"].nunique()
    assert movie["top_values"] == expected_top_values(frame["movieId"])
    assert "histogram" not in movie and "mean" not in movie
    kept = set(frame["movieId"].value_counts().index[:TOP_K])
    oov = int((~frame["movieId"].isin(kept)).sum())
    assert movie["oov_rows"] == oov
    assert oov / ROWS > 0.01


def test_the_oov_rate_of_an_int_vocabulary_reaches_worth_checking(movie_run):
    result, frame = movie_run
    page = open(render_report(result.output_dir), encoding="utf-8").read()
    worth = page.split("<h2>Worth checking</h2>")[1].split("<h2>")[0]
    kept = set(frame["movieId"].value_counts().index[:TOP_K])
    rate = (~frame["movieId"].isin(kept)).mean()
    sentences = [unescape(s) for s in re.findall(r'<li data-warning="cardinality">([^<]*)</li>', worth)]
    assert any(f"{rate:.2%} of the rows become out-of-vocabulary" in s and f"keeps {TOP_K} of" in s
               for s in sentences), sentences


def test_constant_columns_are_flagged_in_run_json_the_report_and_inspect(movie_run):
    result, frame = movie_run
    constant = {name for name, feature in result.features.items() if feature.get("constant")}
    assert constant == {name for name in frame.columns if frame[name].nunique() == 1} == {"source", "version"}
    page = open(render_report(result.output_dir), encoding="utf-8").read()
    worth = page.split("<h2>Worth checking</h2>")[1].split("<h2>")[0]
    flagged = re.findall(r'<a href="#feature-([^"]+)">[^<]*</a></td><td><ul class="warnings"><li data-warning="'
                         r'constant">', worth)
    assert set(flagged) == {"source", "version"}
    described = describe_run(result.output_dir)["features"]
    assert {name for name, feature in described.items() if feature.get("constant")} == {"source", "version"}


def test_a_datetime_column_shows_its_date_range(movie_run):
    result, frame = movie_run
    paris = pd.to_datetime(frame["watched"], unit="s", utc=True).dt.tz_convert("Europe/Paris").dt.tz_localize(None)
    assert result.features["watched"]["date_range"] == {
        "min": paris.min().isoformat(), "max": paris.max().isoformat(), "timezone": "Europe/Paris"}
    assert result.features["day"]["date_range"] == {"min": frame["day"].min(), "max": frame["day"].max(),
                                                    "timezone": "UTC"}
    assert "date_range" not in result.features["rating"]
    page = open(render_report(result.output_dir), encoding="utf-8").read()
    assert f"{frame['day'].min()} .. {frame['day'].max()} (UTC)" in page


def test_statistics_cached_while_a_column_was_numeric_are_counted_anew_as_categories(tmp_path):
    # a cached run reads `id` as numbers (passthrough); the next one hashes it (no analyzer of its own: the
    # analyzer cache alone would reuse the old files), with one file more
    frames = [pd.DataFrame({"id": np.arange(part * 100, part * 100 + 150) % 230, "x": np.arange(150) * 0.5})
              for part in range(3)]
    for part, frame in enumerate(frames):
        frame.to_csv(tmp_path / f"part-{part}.csv", index=False)

    def config(feature: dict, files: str, output: str) -> dict:
        return {"name": "cached", "input": {"format": "csv", "paths": [str(tmp_path / files)], "header": True},
                "features": {"id": feature, "x": {"transform": "z_score"}},
                "output": {"dir": str(tmp_path / output), "shards": 1}, "cache_dir": str(tmp_path / "cache")}

    first = run(config({"transform": "passthrough"}, "part-[01].csv", "first"))
    assert "mean" in first.features["id"]
    second = run(config({"transform": "hash", "hash_buckets": 64}, "part-*.csv", "second"))
    every = pd.concat(frames)["id"]
    assert second.features["id"]["distinct"] == every.nunique()
    assert second.features["id"]["top_values"] == expected_top_values(every)
    assert second.features["x"]["count"] == len(every)
