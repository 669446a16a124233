"""Shared fixtures: a small real run of the job, and the census file where it exists."""

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402

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


def example_config(output_dir, **changes) -> dict:
    """The small synthetic job config, writing to `output_dir`, with top-level keys replaced by `changes`."""
    config = {**EXAMPLE_CONFIG, **changes}
    config["output"] = {**EXAMPLE_CONFIG["output"], **changes.get("output", {}), "dir": str(output_dir)}
    return config


@pytest.fixture(scope="session")
def example_run(tmp_path_factory):
    """One run of the small synthetic job, shared by the tests that only read its output."""
    from skewless.pipelines import run

    return run(example_config(tmp_path_factory.mktemp("example") / "run"))


@pytest.fixture(scope="session")
def census_path():
    if not CENSUS.exists():
        pytest.skip(f"{CENSUS} is absent (the census tests need ../shared/data/census/adult.data)")
    return CENSUS
