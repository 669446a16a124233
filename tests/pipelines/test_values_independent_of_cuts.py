"""Issue 43, item 8: a run's values do not depend on the format or on how the input is cut into work units.

The same rows are written as CSV, Parquet and JSON Lines, as one CSV and as three, and run with `output.shards` 1,
3 and 7 (each format cuts its units elsewhere: byte ranges, row ranges, lines). tf.Transform's order-sensitive
analyzers (scale_to_gaussian's L-moments per batch, the float sums of z_score and log, bucketize's quantiles) and
the statistics must come out the same: every written row, run.json's feature statistics and the statistics/
files byte for byte; with one shard, data/ byte for byte too (with several, which rows share a shard follows
the units).
"""

import json
import os

import numpy as np
import pandas as pd
import pytest

from rich_rows import written_rows
from run_output import files_of

ROWS = 5000
FEATURES = {"id": {"transform": "passthrough"},
            "x": {"transform": "scale_to_gaussian"},
            "y": {"transform": "z_score"},
            "w": {"transform": "log"},
            "k": {"transform": "bucketize", "num_buckets": 5},
            "c": {"transform": "vocabulary"}}


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(43)
    return pd.DataFrame({
        "id": np.arange(ROWS),
        "x": np.round(rng.lognormal(0, 1.5, ROWS) * 100, 3),  # heavy-tailed: the L-moments matter
        "y": np.round(rng.normal(1e4, 3e3, ROWS), 2),
        "w": np.round(rng.exponential(50, ROWS), 2),
        "k": rng.integers(0, 1000, ROWS),
        "c": rng.choice(["red", "green", "blue", "cyan"], ROWS),
    })


def _write(frame: pd.DataFrame, fmt: str, folder) -> list[str]:
    if fmt == "csv":
        frame.to_csv(folder / "rows.csv", index=False)
        return [str(folder / "rows.csv")]
    if fmt == "csv3":  # the same rows in three files
        paths = []
        for part, rows in enumerate(np.array_split(np.arange(ROWS), 3)):
            frame.iloc[rows].to_csv(folder / f"rows{part}.csv", index=False)
            paths.append(str(folder / f"rows{part}.csv"))
        return paths
    if fmt == "parquet":
        frame.to_parquet(folder / "rows.parquet", index=False, row_group_size=700)
        return [str(folder / "rows.parquet")]
    frame.to_json(folder / "rows.jsonl", orient="records", lines=True)
    return [str(folder / "rows.jsonl")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{(format, shards): run directory}."""
    from skewless.pipelines import run

    frame = _frame()
    done = {}
    for fmt, shards in [("csv", 1), ("parquet", 1), ("jsonl", 1), ("csv3", 1), ("csv", 3), ("parquet", 3),
                        ("jsonl", 3), ("csv3", 3), ("parquet", 7)]:
        folder = tmp_path_factory.mktemp(f"{fmt}-{shards}")
        paths = _write(frame, fmt, folder)
        input_format = "csv" if fmt.startswith("csv") else fmt
        config = {"name": "cuts", "input": {"format": input_format, "paths": paths},
                  "features": FEATURES, "output": {"dir": str(folder / "out"), "shards": shards}}
        if input_format == "csv":
            config["input"]["header"] = True
        done[(fmt, shards)] = run(config).output_dir
    return done


def _feature_statistics(run_dir) -> dict:
    with open(os.path.join(run_dir, "run.json")) as handle:
        return json.load(handle)["features"]


def test_every_cut_gives_the_same_values(runs):
    reference = runs[("csv", 1)]
    rows, statistics = written_rows(reference), _feature_statistics(reference)
    files = files_of(reference, ("statistics",))
    for key, run_dir in runs.items():
        assert _feature_statistics(run_dir) == statistics, key
        other = written_rows(run_dir)
        for name in rows:
            assert other[name] == rows[name], (key, name)
        assert files_of(run_dir, ("statistics",)) == files, key


def test_a_row_alone_equals_the_row_in_a_batch(runs):
    """The values the graph computes for a row do not depend on its place in a batch either (scale_to_gaussian's
    float32 inverse once rounded otherwise in SIMD lanes than in the batch's scalar tail)."""
    import tensorflow as tf

    from skewless.layers import TransformLayer

    layer = TransformLayer(runs[("csv", 1)])
    frame = _frame()

    def transformed(rows):
        batch = {name: tf.constant(frame[name].to_numpy()[rows], tf.float32 if name in "xyw" else None)
                 for name in FEATURES}
        return {name: value.numpy() for name, value in layer(batch).items()}

    batched = transformed(np.arange(ROWS))
    for row in range(0, ROWS, 25):
        alone = transformed(np.array([row]))
        for name in FEATURES:
            assert alone[name][0] == batched[name][row], (row, name)


def test_one_unit_gives_the_same_bytes_from_every_format(runs):
    """With `shards: 1` every format's rows fall in the one unit and shard: data/ byte for byte too."""
    reference = files_of(runs[("csv", 1)], ("data", "statistics"))
    for key in [("parquet", 1), ("jsonl", 1), ("csv3", 1)]:
        assert files_of(runs[key], ("data", "statistics")) == reference, key
