"""A job's top values past EXACT_DISTINCT values (issue 30): the analysis pass's Misra-Gries candidates, counted
exactly by the transform pass, listed only when truly frequent, in run.json, each split's proto, inspect and the
report; a column of unique values lists none and says so. Expected values: pandas over the same rows."""

import json

import numpy as np
import pandas as pd
import yaml
from commands import cli
from example_job import split_of_each_row
from typer.testing import CliRunner

from skewless.cli import app
from skewless.config import load_config
from skewless.pipelines.analyze.stats import EXACT_DISTINCT, TOP_BUCKETS
from skewless.statistics_files import feature_name, read_statistics

FREQUENT = {"Whirlpool": 40, "X": 90, "Underground": 150, "Heat": 400}


def test_frequent_titles_are_listed_with_exact_counts_and_unique_ids_are_not(tmp_path):
    rng = np.random.default_rng(30)
    titles = [title for title, count in FREQUENT.items() for _ in range(count)]
    titles += [f"title {i}" for i in range(EXACT_DISTINCT * 16 // 10)] + ["Rare"] * 20
    rng.shuffle(titles)
    frame = pd.DataFrame({"id": [f"row-{i}" for i in range(len(titles))], "title": titles,
                          "x": rng.normal(size=len(titles)).round(3)})
    frame.to_csv(tmp_path / "movies.csv", index=False)
    config = {"name": "movies", "input": {"format": "csv", "paths": [str(tmp_path / "movies.csv")], "header": True},
              "features": {"id": {"transform": "hash", "hash_buckets": 4},
                           "title": {"transform": "hash", "hash_buckets": 64}, "x": {"transform": "z_score"}},
              "output": {"dir": str(tmp_path / "out"), "shards": 2, "splits": {"train": 0.7, "eval": 0.3}}}
    (tmp_path / "movies.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = cli("run", str(tmp_path / "movies.yaml"))
    assert result.returncode == 0, result.stderr

    floor = len(frame) // (TOP_BUCKETS + 1) + 1  # 16,700 rows: more than 16.7 rows, so Rare (20) is listed
    features = json.loads((tmp_path / "out" / "run.json").read_text())["features"]
    title = features["title"]
    expected = [[value, int(count)] for value, count in frame["title"].value_counts().items() if count >= floor]
    assert expected == [["Heat", 400], ["Underground", 150], ["X", 90], ["Whirlpool", 40], ["Rare", 20]]
    assert title["top_values"] == expected and title["listed_from"] == floor
    assert title["exact"]["top_values"] is True
    assert features["id"]["top_values"] == [] and features["id"]["exact"]["top_values"] is True

    # each split lists its own rows exactly: values in 2 rows or more while the split has at most EXACT_DISTINCT
    # values (eval), else those above the whole input's floor (train: more than EXACT_DISTINCT titles)
    loaded = load_config(tmp_path / "movies.yaml")
    split = split_of_each_row(loaded)
    for index, name in enumerate(loaded.output.splits):
        rows = frame[split == index]
        distinct = rows["title"].nunique()
        assert (distinct > EXACT_DISTINCT) == (name == "train")
        least = floor if distinct > EXACT_DISTINCT else 2
        statistics = {feature_name(f): f for f in read_statistics(str(tmp_path / "out"), name).features}
        listed = [[top.value, int(top.frequency)] for top in statistics["title"].string_stats.top_values]
        assert listed == [[value, int(count)] for value, count in rows["title"].value_counts().items()
                          if count >= least]
        assert ("Rare" in dict(map(tuple, listed))) == (name == "eval")  # 20 rows: under the floor in train
        assert not statistics["id"].string_stats.top_values

    shown = CliRunner().invoke(app, ["inspect", str(tmp_path / "out")], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "Heat (400)" in shown.output and "no value is in 2 rows or more" not in shown.output
    assert f"no value is in {floor} rows or more" in shown.output  # id
    page = (tmp_path / "out" / "report.html").read_text()
    assert f"no value is in {floor} rows or more: no frequent value to list" in page
