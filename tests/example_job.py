"""The example job the tests share: its config, its raw rows, and where the census file is."""

from pathlib import Path

import numpy as np
import pytest

from skewless.config import load_config
from skewless.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
CENSUS = REPO.parent / "shared" / "data" / "census" / "adult.data"

EXAMPLE_CONFIG = {
    "name": "example",
    "input": {"format": "synthetic", "rows": 4000, "seed": 3},
    "features": {
        "age": {"transform": "z_score"},
        "hours_per_week": {"transform": "bucketize", "num_buckets": 4},
        "fnlwgt": {"transform": "scale_0_1"},
        "capital_gain": {"transform": "z_score", "default": 0},
        "workclass": {"transform": "vocabulary", "num_oov_buckets": 1},
        "education": {"transform": "vocabulary", "top_k": 5, "num_oov_buckets": 2},
        "occupation": {"transform": "vocabulary", "num_oov_buckets": 1, "default": "unknown"},
        "native_country": {"transform": "hash", "hash_buckets": 16},
    },
    "label": {"column": "label", "map": {"<=50K": 0, ">50K": 1}},
    "output": {"splits": {"train": 0.75, "eval": 0.25}, "shards": 2},
}


# The example's columns as real configs transform them: every option the native preprocessor reproduces
# (clip, log, a min-max range whose width float32 rounds, fills computed by analyzers, missing indicators, a cross)
NATIVE_FEATURES = {
    "age": {"transform": "log", "clip": [18, 80]},
    "hours_per_week": {"transform": "scale_by_min_max", "range": [0.1, 0.7]},
    "fnlwgt": {"transform": "z_score", "clip": [20000, 400000]},
    "capital_gain": {"transform": "z_score", "fill": "median", "missing_indicator": True},
    "workclass": {"transform": "vocabulary"},
    "education": {"transform": "hash", "hash_buckets": 7},
    "occupation": {"transform": "vocabulary", "fill": "most_frequent", "missing_indicator": True},
    "native_country": {"transform": "hash", "hash_buckets": 20},
    "workclass_x_occupation": {"transform": "cross", "columns": ["workclass", "occupation"], "hash_buckets": 50},
}


# Columns with gaps (rich_rows.columns_with_gaps) as real configs fill them, for the native preprocessor: fills
# computed by analyzers on floats, on an int column (which becomes float32) and on strings, indicators, ±inf missing
GAPS_FEATURES = {
    "id": {"transform": "passthrough"},
    "x": {"transform": "z_score", "fill": "mean", "missing_indicator": True},
    "m": {"transform": "scale_by_min_max", "range": [-1, 1], "clip": [5, 95], "fill": "median"},
    "k": {"transform": "z_score", "fill": "mean"},
    "f": {"transform": "passthrough", "fill": "most_frequent", "missing_indicator": True},
    "c": {"transform": "vocabulary", "fill": "most_frequent"},
    "d": {"transform": "hash", "hash_buckets": 11, "default": "none"},
    "s": {"transform": "log"},
    "r": {"transform": "bucketize", "num_buckets": 5, "clip": [-6, 6]},
    "c_x_d": {"transform": "cross", "columns": ["c", "d"], "hash_buckets": 30},
}


def gaps_config(folder, rows: int = 600) -> tuple[dict, dict]:
    """The job config of GAPS_FEATURES (±inf missing) on `rows` rows of rich_rows.columns_with_gaps, written to
    folder/rows.csv, the output in folder/out: (config, the raw columns)."""
    import numpy as np
    from rich_rows import columns_with_gaps, write_csv

    raw = columns_with_gaps(np.random.default_rng(21), rows)
    write_csv(folder / "rows.csv", raw)
    config = {"name": "gaps", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True,
                                        "nonfinite": "missing"},
              "features": GAPS_FEATURES, "output": {"dir": str(folder / "out")}}
    return config, raw


def gaps_run(folder, rows: int = 600):
    """The job of `gaps_config`: (result, rows)."""
    from skewless.pipelines import run

    config, raw = gaps_config(folder, rows)
    return run(config), [{name: raw[name][i] for name in raw} for i in range(rows)]


def example_config(output_dir, **changes) -> dict:
    """The small synthetic job config, writing to `output_dir`, with top-level keys replaced by `changes`."""
    config = {**EXAMPLE_CONFIG, **changes}
    config["output"] = {**EXAMPLE_CONFIG["output"], **changes.get("output", {}), "dir": str(output_dir)}
    return config


def census_config(census_path, output_dir):
    """configs/census.yaml reading `census_path`, writing to `output_dir`."""
    from skewless.config import load_config

    config = load_config(REPO / "configs" / "census.yaml", output_dir=str(output_dir))
    config.input.paths = [str(census_path)]
    return config


def census_config_or_skip(folder):
    """census_config on the shared census file, writing to `folder`/out; the test skips where the file is absent."""
    if not CENSUS.exists():
        pytest.skip(f"{CENSUS} is absent (../shared/data/census/README)")
    return census_config(CENSUS, folder / "out")


def example_rows(count=None):
    """The raw rows of the example run, as its synthetic source made them (bytes values, None = missing)."""
    from skewless.pipelines.reading.synthetic_rows import synthetic_rows

    seed, rows = EXAMPLE_CONFIG["input"]["seed"], EXAMPLE_CONFIG["input"]["rows"]
    return [row for _, table in synthetic_rows(seed, 0, count or rows) for row in table.to_pylist()]


# Rows no training row looks like: unseen categories (OOV buckets), optional features missing.
ODD_ROWS = [
    {"age": 30, "workclass": "Astronaut", "education": "Kindergarten", "occupation": None, "hours_per_week": 40,
     "fnlwgt": 150000.0, "capital_gain": None, "native_country": "Atlantis", "label": "<=50K"},
    {"age": 30, "workclass": "Astronaut", "education": "Kindergarten", "occupation": "unknown", "hours_per_week": 40,
     "fnlwgt": 150000.0, "capital_gain": 0.0, "native_country": "Atlantis", "label": "<=50K"},
]

# the UCI census file's columns (no header), and its numeric ones
CENSUS_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
CENSUS_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                  "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "label"]


def census_frame(path):
    """The census file as the job reads it (no header, spaces after the commas dropped)."""
    import pandas as pd

    return pd.read_csv(path, header=None, names=CENSUS_COLUMNS, skipinitialspace=True)


def split_of_each_row(config) -> np.ndarray:
    """The split index of every input row, in file order: the job's split rule on the keys its reader gives them."""
    from skewless.pipelines.plan.plan import plan
    from skewless.pipelines.reading.sources import RowReader
    from skewless.pipelines.reading.split_rule import split_of

    job_plan = plan(config)
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    keys = np.concatenate([chunk.keys for unit in job_plan.units for chunk in reader.read(unit)])
    return split_of(keys, list(config.output.splits.values()))


def assert_feature_refused(tmp_path, feature: dict, message: str) -> None:
    """A config whose one feature `x` is `feature` is refused in one line matching `message`."""
    config = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)},
              "features": {"x": feature}}
    with pytest.raises(ConfigError, match=message) as error:
        load_config(config)
    assert "\n" not in str(error.value)


def tfidf_config(folder) -> dict:
    """TF-IDF over a small CSV written to `folder`: document frequencies counted over the vocabulary's ids, a
    second phase."""
    from rich_rows import write_csv  # here: rich_rows imports TensorFlow, which most users of this module never need

    words = ["red", "green", "blue", "cyan", "teal"]
    texts = [" ".join(words[(i * j) % 5] for j in range(1 + i % 4)) for i in range(120)]
    write_csv(folder / "docs.csv", {"id": list(range(120)), "text": texts, "label": [i % 2 for i in range(120)]})
    return {"name": "tfidf", "input": {"format": "csv", "paths": [str(folder / "docs.csv")], "header": True},
            "features": {"id": {"transform": "passthrough"},
                         "text": {"transform": "text_vocabulary", "output": "tfidf"}},
            "label": {"column": "label"}, "output": {"dir": str(folder / "out")}}


SMALL_ROWS = {"format": "synthetic", "rows": 300, "seed": 5}
# configs whose tf.Transform graphs differ in kind, each made in a folder: the example (one phase); rich_rows'
# columns with gaps (most_frequent fills, whose vocabularies a later phase looks up: three phases); TF-IDF
PHASE_CONFIGS = {"example": lambda folder: example_config(folder / "out", input=SMALL_ROWS),
                 "gaps": lambda folder: gaps_config(folder, 300)[0], "tfidf": tfidf_config}
