"""Missing values (default, fill: mean | median | most_frequent, missing indicators) and numeric extras
(log, clip, scale_by_min_max): values against NumPy, and the shards equal to the serving path row for row."""

import numpy as np
import pytest

from rich_rows import columns_with_gaps, served_rows, write_csv, written_rows
from skewless.config import load_config
from skewless.errors import ConfigError

ROWS = 400


@pytest.fixture(scope="module")
def missing_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(5)
    folder = tmp_path_factory.mktemp("missing")
    raw = {
        # unique modes, so "most frequent" has one answer: 2, 2.25 and "b"
        **columns_with_gaps(rng, ROWS),
        "label": rng.choice(["no", "yes"], ROWS).tolist(),
    }
    write_csv(folder / "rows.csv", raw)
    config = {
        "name": "missing",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
        "features": {
            "id": {"transform": "passthrough"},
            "x": {"transform": "z_score", "fill": "mean", "missing_indicator": True},
            "m": {"transform": "passthrough", "fill": "median"},
            "k": {"transform": "passthrough", "fill": "most_frequent"},
            "f": {"transform": "passthrough", "fill": "most_frequent"},
            "c": {"transform": "vocabulary", "fill": "most_frequent", "missing_indicator": True},
            "d": {"transform": "vocabulary", "default": "none", "missing_indicator": True},
            "s": {"transform": "log", "clip": [0, 20]},
            "r": {"transform": "scale_by_min_max", "range": [-1, 1]},
        },
        "label": {"column": "label", "map": {"no": 0, "yes": 1}},
        "output": {"dir": str(folder / "out"), "shards": 2},
    }
    return run(config), raw


@pytest.fixture(scope="module")
def written(missing_run):
    return written_rows(missing_run[0].output_dir)


def present(values):
    return np.array([v for v in values if v is not None], dtype=np.float64)


def z_score(values):
    values = np.asarray(values, dtype=np.float64)
    return (values - values.mean()) / values.std()


def test_mean_fill_then_z_score_and_indicator(missing_run, written):
    _, raw = missing_run
    missing = np.array([v is None for v in raw["x"]])
    filled = np.where(missing, present(raw["x"]).mean(), [0.0 if v is None else v for v in raw["x"]])
    np.testing.assert_allclose(written["x"], z_score(filled), atol=2e-5)
    assert written["x_missing"] == missing.astype(int).tolist()


def test_median_fill_is_the_middle_of_the_present_values(missing_run, written):
    _, raw = missing_run
    missing = [v is None for v in raw["m"]]
    fills = {value for value, gap in zip(written["m"], missing) if gap}
    assert len(fills) == 1
    (fill,) = fills
    values = present(raw["m"])
    # tft.quantiles with epsilon 0.001: the rank is within 0.1% (+ one value) of the middle
    assert abs(np.mean(values <= fill) - 0.5) <= 0.001 + 1 / len(values)
    np.testing.assert_allclose(
        [v for v, gap in zip(written["m"], missing) if not gap], values.astype(np.float32), rtol=0
    )


def test_most_frequent_fill_for_int_float_and_string(missing_run, written):
    _, raw = missing_run
    for name, mode in (("k", 2), ("f", 2.25)):
        assert [w for w, v in zip(written[name], raw[name]) if v is None] == [mode] * raw[name].count(None)
        assert [w for w, v in zip(written[name], raw[name]) if v is not None] == [v for v in raw[name] if v is not None]
    assert isinstance(written["k"][0], int)  # the int column stays int64
    # "b" is the most frequent category: filled rows get its vocabulary id, which is 0 (most frequent first)
    ids = {w for w, v in zip(written["c"], raw["c"]) if v in ("b", None)}
    assert ids == {0}
    assert written["c_missing"] == [int(v is None) for v in raw["c"]]
    assert written["d_missing"] == [int(v is None) for v in raw["d"]]
    assert len(set(written["d"])) == 3  # p, q and the default "none"


def test_log_with_clip_and_scale_by_min_max(missing_run, written):
    _, raw = missing_run
    expected_log = z_score(np.log1p(np.clip(np.float32(raw["s"]), 0, 20)))
    np.testing.assert_allclose(written["s"], expected_log, atol=2e-5)
    r = np.float32(raw["r"]).astype(np.float64)
    np.testing.assert_allclose(written["r"], (r - r.min()) / (r.max() - r.min()) * 2 - 1, atol=2e-6)
    assert min(written["r"]) == -1 and max(written["r"]) == 1


def test_serving_fills_and_scales_as_the_shards(missing_run, written):
    from skewless.layers import TransformLayer

    result, raw = missing_run
    rows = [{name: raw[name][i] for name in raw} for i in range(ROWS)]
    served = served_rows(TransformLayer(result.output_dir), rows)
    assert set(served) == set(written) - {"label"}
    for name in served:
        assert served[name] == written[name], name
    # a request that lacks every optional feature gets the fills the shards hold for such rows
    lacking = {"id": 0, "s": 1.0, "r": 0.0}
    alone = served_rows(TransformLayer(result.output_dir), [lacking])
    first_missing = {name: raw[name].index(None) for name in ("x", "m", "k", "f", "c")}
    for name, row in first_missing.items():
        assert alone[name][0] == written[name][row], name


def test_config_errors_name_the_feature(tmp_path):
    from skewless.pipelines.plan.plan import plan

    base = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)}}
    cases = {
        "give either default or fill": {"transform": "z_score", "default": 0, "fill": "mean"},
        "missing_indicator needs default or fill": {"transform": "z_score", "missing_indicator": True},
        "the low end is above the high end": {"transform": "log", "clip": [5, 1]},
        "range only applies to transform scale_by_min_max": {"transform": "z_score", "range": [0, 1]},
        "unknown value 'mode'": {"transform": "z_score", "fill": "mode"},
    }
    for message, feature in cases.items():
        with pytest.raises(ConfigError, match=f"features.age.*{message}"):
            load_config({**base, "features": {"age": feature}})
    with pytest.raises(ConfigError, match="features.workclass.fill: mean needs a numeric column"):
        plan(load_config({**base, "features": {"workclass": {"transform": "vocabulary", "fill": "mean"}}}))
