"""`skewless inspect`: its JSON equals run.json, the graph and the shard files; its tables show the same."""

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf
import tensorflow_transform as tft
from example_job import EXAMPLE_CONFIG
from typer.testing import CliRunner

from skewless.cli import app
from skewless.layers.transform_graph import spec_from_json
from skewless.pipelines.reading.synthetic_rows import synthetic_rows


@pytest.fixture(scope="module")
def described(example_run):
    result = CliRunner().invoke(app, ["inspect", example_run.output_dir, "--json", "--top", "100"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_rows_statistics_and_shards_equal_run_json(described, example_run):
    summary = json.loads(Path(example_run.output_dir, "run.json").read_text())
    assert described["rows"] == summary["rows"]
    assert described["label"] == summary["label"]
    assert described["shards"] == summary["shards"]
    assert list(described["rows"]["written"]) == list(EXAMPLE_CONFIG["output"]["splits"])
    for name, stats in summary["features"].items():
        shown = described["features"][name]
        for key, value in stats.items():
            if key not in ("vocabulary_size", "oov_rows", "num_oov_buckets", "vocabulary_file"):
                assert shown[key] == value, (name, key)
        if "vocabulary_file" in stats:
            assert shown["vocabulary"]["file"] == stats["vocabulary_file"]


def test_split_statistics_add_up_to_the_whole_runs_statistics(described):
    """The per-split protos (transform pass) against run.json's statistics of all rows (analysis pass)."""
    splits = described["split_statistics"]
    assert {split: s["num_examples"] for split, s in splits.items()} == described["rows"]["written"]
    for name, whole in described["features"].items():
        parts = [s["features"][name] for s in splits.values()]
        assert sum(p["num_non_missing"] for p in parts) == whole["count"], name
        assert sum(p["num_missing"] for p in parts) == whole["missing"], name
        if "mean" in whole:
            mean = sum(p["mean"] * p["num_non_missing"] for p in parts) / whole["count"]
            assert mean == pytest.approx(whole["mean"], rel=1e-9), name
            assert min(p["min"] for p in parts) == whole["min"] and max(p["max"] for p in parts) == whole["max"]
        if "top_values" in whole and whole["exact"]["top_values"]:
            tops = [dict(part["top_values"]) for part in parts]
            # a value among every split's top values: its rows are its rows in the splits added up
            shared = [(value, count) for value, count in whole["top_values"] if all(value in top for top in tops)]
            assert len(shared) >= min(5, len(whole["top_values"])), name
            assert [sum(top[value] for top in tops) for value, _ in shared] == [count for _, count in shared], name


def test_shard_rows_and_sizes_equal_the_files(described, example_run):
    for shards in described["shards"].values():
        for shard in shards:
            path = os.path.join(example_run.output_dir, shard["path"])
            assert shard["bytes"] == os.path.getsize(path)
            records = tf.data.TFRecordDataset(path, compression_type="GZIP")
            assert shard["rows"] == sum(1 for _ in records)


def test_specs_equal_the_graph(described, example_run):
    graph = tft.TFTransformOutput(os.path.join(example_run.output_dir, "transform_graph"))
    for key, expected in (("raw_features", graph.raw_feature_spec()), ("transformed_features",
                                                                       graph.transformed_feature_spec())):
        assert {name: spec_from_json(spec) for name, spec in described[key].items()} == expected
    # the config's optional features (with a default) are VarLen in the raw schema
    optional = {name for name, feature in EXAMPLE_CONFIG["features"].items() if "default" in feature}
    assert {name for name, spec in described["raw_features"].items() if spec["kind"] == "var"} == optional


def test_vocabularies_equal_the_graph_and_the_data(described, example_run):
    graph = tft.TFTransformOutput(os.path.join(example_run.output_dir, "transform_graph"))
    seed, rows = EXAMPLE_CONFIG["input"]["seed"], EXAMPLE_CONFIG["input"]["rows"]
    raw = [row for _, table in synthetic_rows(seed, 0, rows) for row in table.to_pylist()]
    vocabulary_features = [n for n, f in EXAMPLE_CONFIG["features"].items() if f["transform"] == "vocabulary"]
    assert sorted(n for n, f in described["features"].items() if "vocabulary" in f) == sorted(vocabulary_features)
    for name in vocabulary_features:
        vocabulary = described["features"][name]["vocabulary"]
        stored = [value.decode() for value in graph.vocabulary_by_name(f"vocab_{name}")]
        assert vocabulary["head"] == stored[:100]
        assert vocabulary["size"] == len(stored)
    # workclass keeps every value, most frequent first
    counts = collections.Counter(row["workclass"].decode() for row in raw)
    assert described["features"]["workclass"]["vocabulary"]["head"] == [value for value, _ in counts.most_common()]
    # education keeps its top_k; the rest of the rows are out of vocabulary
    top_k = EXAMPLE_CONFIG["features"]["education"]["top_k"]
    counts = collections.Counter(row["education"].decode() for row in raw)
    education = described["features"]["education"]["vocabulary"]
    assert education["head"] == [value for value, _ in counts.most_common(top_k)]
    assert education["oov_rate"] == pytest.approx(sum(c for _, c in counts.most_common()[top_k:]) / len(raw))


def test_tables_show_the_run(example_run, described):
    result = CliRunner().invoke(app, ["inspect", example_run.output_dir])
    assert result.exit_code == 0, result.output
    text = result.stdout
    for title in ("Raw features (schema)", "Transformed features", "Statistics of the raw values", "Vocabularies",
                  "Most frequent raw values", "Shards (gzip)", "Statistics per split"):
        assert title in text
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.count("│") > 3]
    for split, shards in described["shards"].items():
        for shard in shards:
            assert [split, shard["path"], f"{shard['rows']:,}"] in [row[:3] for row in rows]
    age = [row for row in rows if row[:2] == ["age", "z_score"]]
    assert len(age) == 1
    count, missing, mean = age[0][2:5]
    assert count == f"{EXAMPLE_CONFIG['input']['rows']:,}" and missing == "0.00%"
    assert float(mean) == pytest.approx(described["features"]["age"]["mean"], abs=0.005)
    for split, statistics in described["split_statistics"].items():
        shown = [row for row in rows if row[:2] == ["age", split]]
        assert len(shown) == 1 and shown[0][2] == f"{statistics['num_examples']:,}"  # age: present in every row


def test_the_shards_table_says_how_tf_data_reads_them(example_run, described):
    """Issue 42 item 3: TFRecordDataset without compression_type fails on gzip shards ("corrupted record at 0");
    the reading `inspect` prints reads every record of each shard."""
    text = CliRunner().invoke(app, ["inspect", example_run.output_dir]).stdout
    [shown] = [line.strip() for line in text.splitlines() if line.strip().startswith("read: tf.data.TFRecordDataset(")]
    compression = re.search(r'compression_type="(\w+)"', shown)
    for shards in described["shards"].values():
        for shard in shards:
            path = os.path.join(example_run.output_dir, shard["path"])
            read = tf.data.TFRecordDataset(path, compression_type=compression.group(1) if compression else "")
            assert sum(1 for _ in read) == shard["rows"]
    with pytest.raises(tf.errors.DataLossError):
        sum(1 for _ in tf.data.TFRecordDataset(path))  # the example config writes gzip shards


def test_missing_run_is_one_line_error(tmp_path):
    result = CliRunner().invoke(app, ["inspect", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "run.json: not found" in result.output


def test_report_and_inspect_run_without_beam(example_run):
    script = (
        "import sys\n"
        "from skewless.report import render_report\n"
        "from skewless.inspect_run import describe_run\n"
        f"render_report({example_run.output_dir!r})\n"
        f"describe_run({example_run.output_dir!r})\n"
        "assert 'apache_beam' not in sys.modules, 'imported apache_beam'\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
