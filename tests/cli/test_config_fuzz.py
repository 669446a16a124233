"""Random configs thrown at `load_config`: each loads or raises ConfigError, never another exception."""

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from example_job import EXAMPLE_CONFIG
from skewless.config import JobConfig, load_config
from skewless.errors import ConfigError

CSV_CONFIG = {
    "name": "csv",
    "input": {"format": "csv", "paths": ["data/*.csv"], "header": False, "columns": ["a", "b", "y"],
              "delimiter": ";", "skip_initial_space": False},
    "schema": "schema.pbtxt",
    "features": {"a": {"transform": "bucketize", "num_buckets": 3}, "b": {"transform": "hash", "hash_buckets": 8}},
    "label": {"column": "y", "transform": "vocabulary"},
    "output": {"dir": "out", "splits": {"train": 0.5, "eval": 0.5}, "shards": 4, "compression": "none",
               "split_key": "a", "max_bad_fraction": 0.2},
    "runner": {"name": "DirectRunner", "options": {"direct_num_workers": 2}},
}

KEYS = ["name", "input", "format", "paths", "rows", "seed", "columns", "header", "delimiter", "features", "age",
        "transform", "num_buckets", "top_k", "default", "label", "column", "map", "output", "dir", "splits", "train",
        "shards", "max_bad_fraction", "runner", "options", "schema", "preprocessing_fn", "base_dir", ""]

scalars = (
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12) | st.sampled_from(["z_score", "vocabulary", "csv", "synthetic", "auto", "gzip", "a:b", "."])
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6),
                                                                       children, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated_configs(draw):
    """A valid config with a few keys anywhere in it replaced, added or removed."""
    config = copy.deepcopy(draw(st.sampled_from([EXAMPLE_CONFIG, CSV_CONFIG])))
    config = {**config, "output": {**config["output"], "dir": "out"}}
    for _ in range(draw(st.integers(1, 4))):
        node = config
        while isinstance(node, dict) and node and draw(st.booleans()):
            child = node[draw(st.sampled_from(sorted(node, key=str)))]
            if not isinstance(child, dict):
                break
            node = child
        if not isinstance(node, dict):
            continue
        action = draw(st.sampled_from(["set", "add", "delete"]))
        if action == "delete" and node:
            del node[draw(st.sampled_from(sorted(node, key=str)))]
        elif action == "set" and node:
            node[draw(st.sampled_from(sorted(node, key=str)))] = draw(values)
        else:
            node[draw(st.sampled_from(KEYS))] = draw(values)
    return config


def loads_or_config_error(source, **kwargs) -> None:
    try:
        result = load_config(source, **kwargs)
    except ConfigError as error:
        assert str(error) and "\n" not in str(error)
        return
    assert isinstance(result, JobConfig)
    result.model_dump(by_alias=True)  # what the job writes as config.yaml


@settings(max_examples=400, deadline=None)
@given(mutated_configs())
def test_mutated_configs(config):
    loads_or_config_error(config)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), values, max_size=6))
def test_arbitrary_dicts(config):
    loads_or_config_error(config)


@settings(max_examples=150, deadline=None)
@given(mutated_configs(), st.lists(st.text(max_size=20), max_size=3), st.none() | st.text(max_size=10))
def test_overrides_and_output_dir(config, overrides, output_dir):
    loads_or_config_error(config, overrides=overrides, output_dir=output_dir)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_arbitrary_yaml_files(tmp_path, content):
    path = tmp_path / "job.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    loads_or_config_error(str(path))


def test_nan_split_fraction_is_refused():
    """NaN compares false with everything, so `fraction <= 0` and the sum check once let it through."""
    import pytest

    for splits in ({"train": float("nan")}, {"train": 1.0, "eval": float("nan")}):
        config = {**EXAMPLE_CONFIG, "output": {"dir": "out", "splits": splits}}
        with pytest.raises(ConfigError, match="fraction nan"):
            load_config(config)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=2, max_size=4, unique=True))
def test_column_names(names):
    """Any column names load (or raise ConfigError), and the files named after them stay in the run's folders."""
    import os

    from skewless.safe_names import most_frequent_filename, vocabulary_filename

    config = {**CSV_CONFIG, "input": {**CSV_CONFIG["input"], "columns": names}, "schema": None, "label": None,
              "features": {names[0]: {"transform": "vocabulary", "fill": "most_frequent"},
                           names[1]: {"transform": "z_score"}},
              "output": {**CSV_CONFIG["output"], "split_key": None}}
    loads_or_config_error(config)
    derived = [vocabulary_filename(name) for name in names] + [most_frequent_filename(name) for name in names]
    assert len(set(derived)) == len(derived)
    for file in derived:
        assert os.path.dirname(os.path.normpath(os.path.join("assets", file))) == "assets"
