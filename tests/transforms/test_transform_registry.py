"""The registry of transforms (skewless/transforms/) against what reads it: the config reference's table, the config's
options, and the rule that no module outside skewless/transforms/ names a transform."""

import ast
import re

import pytest

from example_job import REPO

from skewless.config import FeatureConfig, load_config
from skewless.errors import ConfigError
from skewless.transforms import COMMON_OPTIONS, TRANSFORMS, reference_table

ROOT = REPO


def test_the_config_reference_holds_the_registrys_table():
    page = (ROOT / "docs" / "config.md").read_text()
    table = reference_table()
    assert table in page, "docs/config.md's transform table differs from skewless.transforms.reference_table()"
    rows = re.findall(r"^\| `(\w+)` \|", table, flags=re.M)
    assert rows == list(TRANSFORMS)
    for transform in TRANSFORMS.values():
        for option in transform.options:
            assert f"`{option.key}` (" in table.split(f"| `{transform.name}` |")[1].split("\n")[0]


def test_feature_config_has_every_registered_option_and_the_common_ones():
    fields = set(FeatureConfig.model_fields)
    registered = {option.name for transform in TRANSFORMS.values() for option in transform.options}
    assert fields == {"transform"} | registered | set(COMMON_OPTIONS)


# a value other than the default for every option a transform declares (a new option needs one here)
SAMPLES = {"num_buckets": 3, "top_k": 5, "frequency_threshold": 2, "num_oov_buckets": 2, "hash_buckets": 8,
           "clip": [0.0, 1.0], "range": [0.0, 2.0], "columns": ["age", "education"], "lowercase": False,
           "strip_regex": "x", "ngram_range": [1, 2], "ngram_separator": "_", "output": "tfidf", "smooth": False, "size": [4, 4],
           "channels": 1, "quantile": 0.1, "key": "age", "epsilon": 0.05, "default_value": 7,
           "parts": ["hour", "days"], "cyclical": True, "timezone": "Europe/Paris", "labels": True,
           "adjusted_mutual_info": True, "min_diff_from_avg": 1.5, "weights": "education", "elementwise": True,
           "boundaries": [1.0, 2.5], "reserved_tokens": ["<pad>"], "shared_vocabulary": "v", "coverage_top_k": 2,
           "coverage_frequency_threshold": 3, "coverage_key": "keys:first"}
# where a transform needs another value: hash's `key` is two numbers, not a column; a vocabulary's default_value
# needs num_oov_buckets 0; vocabulary and hash encode their ids (text_vocabulary's outputs are bags). None: an option that excludes another of the transform's, set alone (APART)
OWN_SAMPLES = {("hash", "key"): [3, 5], ("vocabulary", "num_oov_buckets"): 0,
               ("vocabulary", "frequency_threshold"): None, ("vocabulary", "output"): "one_hot",
               ("hash", "output"): "count",
               ("bucketize", "boundaries"): None,
               # a shared vocabulary needs a second feature (test_fixed_buckets_reserved_tokens_columns.py)
               ("vocabulary", "shared_vocabulary"): None,
               **{(name, "elementwise"): None for name in ("z_score", "scale_0_1", "scale_by_min_max", "bucketize")}}
# the options set on their own: a vocabulary's frequency_threshold is refused with labels: true, elementwise
# (which needs a shape) with key
APART = {("vocabulary", "frequency_threshold"): 2, ("bucketize", "boundaries"): [1.0, 2.5],
         **{(name, "elementwise"): True for name in ("z_score", "scale_0_1", "scale_by_min_max", "bucketize")}}
# what an option set apart needs besides: a shape, and the transform's required options
NEEDS = {"elementwise": {"shape": [2]}}
REQUIRED = {"bucketize": {"num_buckets": 3}}
# the options that stand in for a required one (fixed boundaries: no num_buckets)
INSTEAD_OF_REQUIRED = {"boundaries"}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_a_transform_takes_its_options_dumps_them_in_order_and_refuses_the_others(tmp_path, name):
    transform = TRANSFORMS[name]
    own = {option.key: OWN_SAMPLES.get((name, option.key), SAMPLES[option.key]) for option in transform.options}
    own = {key: value for key, value in own.items() if value is not None}
    # a label, for the options that read it (a vocabulary's labels: true)
    base = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)},
            "label": {"column": "y"}}
    feature = load_config({**base, "features": {"x": {"transform": name, **own}}}).features["x"]
    assert list(feature.model_dump(by_alias=True)) == ["transform", *own]
    for (transform_name, key), value in APART.items():
        if transform_name == name:
            needs = {**({} if key in INSTEAD_OF_REQUIRED else REQUIRED.get(name, {})), **NEEDS.get(key, {})}
            alone = load_config({**base, "features": {"x": {"transform": name, key: value, **needs}}}).features["x"]
            assert alone.model_dump(by_alias=True) == {"transform": name, key: value, **needs}
    foreign = {option.key for other in TRANSFORMS.values() for option in other.options} - {
        option.key for option in transform.options}
    for key in sorted(foreign):
        with pytest.raises(ConfigError, match=rf"\.x: {key} only applies to transform .*, not {name}$"):
            load_config({**base, "features": {"x": {"transform": name, **own, key: SAMPLES[key]}}})


def _transform_tests(source: str) -> list[int]:
    """Lines comparing a feature's transform with a transform's name (`==`, `!=`, `in`, `not in`), however the
    transform is reached (`feature.transform`, `feature.get("transform")`, `f["transform"]`). A label's own
    transform (`label["transform"]`) is the label's option, not a feature's kind."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare) or not any(
                isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            continue
        operands = [node.left, *node.comparators]
        named = any(isinstance(c, ast.Constant) and c.value in TRANSFORMS for o in operands for c in ast.walk(o))
        around = " ".join(ast.get_source_segment(source, o) or "" for o in operands)
        if named and "transform" in around and "label" not in around:
            lines.append(node.lineno)
    return lines


def test_no_module_outside_the_registry_names_a_transform():
    folders = [ROOT / "skewless", ROOT / "pipelines", ROOT / "layers", ROOT / "schemas"]
    found = [f"{path.relative_to(ROOT)}:{number}" for folder in folders for path in folder.rglob("*.py")
             if "transforms" not in path.relative_to(ROOT).parts
             for number in _transform_tests(path.read_text())]
    assert not found, f"transform names tested outside skewless/transforms/: {found}"


@pytest.mark.parametrize("line", ['feature.transform == "image"', 'feature.get("transform") == "bucketize"',
                                  'f["transform"] in ("hash", "vocabulary")', '"log" != spec.transform'])
def test_the_rule_sees_each_way_of_naming_a_transform(line):
    assert _transform_tests(f"if {line}:\n    pass\n") == [1]


def test_the_rule_leaves_a_label_s_transform_and_other_words_alone():
    assert _transform_tests('if label["transform"] == "vocabulary":\n    pass\nif kind == "log":\n    pass\n') == []
