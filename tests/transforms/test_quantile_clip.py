"""`transform: quantile_clip` (the example transform of docs/design.md, "Adding a transform"): values clipped to
the [q, 1 - q] quantiles tf.Transform computes, those quantiles within its epsilon of NumPy's, the serving graph
and the native Keras `Clip` equal to the batch output."""

import numpy as np
import pytest

from rich_rows import served_rows, write_csv, written_rows
from skewless.config import load_config
from skewless.errors import ConfigError

ROWS = 2000
QUANTILE = 0.05


@pytest.fixture(scope="module")
def clip_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(11)
    folder = tmp_path_factory.mktemp("quantile_clip")
    raw = {
        "id": list(range(ROWS)),
        # heavy tails on both sides: the clip changes about 2 * QUANTILE of the rows
        "income": np.round(rng.standard_t(2, ROWS) * 1000, 2).tolist(),
        "visits": rng.integers(0, 500, ROWS).tolist(),
        "label": rng.integers(0, 2, ROWS).tolist(),
    }
    write_csv(folder / "rows.csv", raw)
    config = {
        "name": "quantile_clip",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
        "features": {
            "id": {"transform": "passthrough"},
            "income": {"transform": "quantile_clip", "quantile": QUANTILE},
            "visits": {"transform": "quantile_clip"},  # an int column, the default quantile 0.01
        },
        "label": {"column": "label"},
        "output": {"dir": str(folder / "out"), "shards": 2},
    }
    return run(config), raw


def _graph_bounds(run_dir, name):
    from skewless.layers.graph_analyzers import read_graph_features

    boundaries = read_graph_features(run_dir)[name].constant("Reshape", 0).reshape(-1)
    return boundaries[0], boundaries[-1]


@pytest.mark.parametrize("name, quantile", [("income", QUANTILE), ("visits", 0.01)])
def test_values_are_clipped_to_quantiles_within_epsilon_of_numpy(clip_run, name, quantile):
    from skewless.transforms.quantile_clip import EPSILON

    result, raw = clip_run
    values = np.asarray(raw[name], np.float32)
    low, high = _graph_bounds(result.output_dir, name)
    # the rank of each bound among the sorted values is within tf.Transform's epsilon of q * rows
    ordered = np.sort(values)
    for bound, q in ((low, quantile), (high, 1 - quantile)):
        below, at_most = np.searchsorted(ordered, bound, "left"), np.searchsorted(ordered, bound, "right")
        assert below - EPSILON * ROWS - 1 <= q * ROWS <= at_most + EPSILON * ROWS + 1, (name, bound, q)
        assert abs(bound - np.quantile(values, q)) <= np.ptp(ordered[max(below - 3, 0):at_most + 3])
    written = np.asarray(written_rows(result.output_dir)[name], np.float32)
    np.testing.assert_array_equal(written, np.clip(values, low, high))
    clipped = np.count_nonzero((values < low) | (values > high))
    assert 2 * quantile * ROWS * 0.5 < clipped <= 2 * quantile * ROWS * 1.5 + 2


def test_serving_equals_the_written_rows(clip_run):
    from skewless.layers import TransformLayer

    result, raw = clip_run
    layer = TransformLayer(result.output_dir)
    rows = [{name: raw[name][i] for name in raw} for i in range(ROWS)]
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    for name in ("income", "visits"):
        assert served[name] == written[name], name
    low, high = _graph_bounds(result.output_dir, "income")
    assert served_rows(layer, [{"id": 0, "income": -1e9, "visits": 3}])["income"] == [low]
    assert served_rows(layer, [{"id": 0, "income": 1e9, "visits": 3}])["income"] == [high]


def test_native_preprocessor_is_exact(clip_run):
    from skewless.layers import check_preprocessor

    result, raw = clip_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(0, ROWS, 7)]
    check = check_preprocessor(result.output_dir, rows=rows, sample=500)
    statuses = {feature.name: (feature.status, feature.reason) for feature in check.features}
    assert statuses["income"] == ("exact", None) and statuses["visits"] == ("exact", None)
    assert check.rows == len(rows) + 500


def test_clip_layer_round_trips_its_config():
    import keras

    from skewless.layers import Clip

    layer = Clip(low=-1.5, high=2.0, name="c")
    again = Clip.from_config(layer.get_config())
    values = np.array([-3, -1.5, 0.25, 2.0, 7], np.float32)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(again(values)), np.clip(values, -1.5, 2.0))
    assert again.get_config() == layer.get_config()


@pytest.mark.parametrize("options, message", [
    ({"transform": "quantile_clip", "quantile": 0.03}, "quantile 0.03 must be 1/n for an integer n"),
    ({"transform": "quantile_clip", "quantile": 0.5}, "features.x.quantile: Input should be less than 0.5"),
    ({"transform": "z_score", "quantile": 0.1}, "quantile only applies to transform quantile_clip, not z_score"),
    ({"transform": "quantile_clip", "list": True}, "list only applies to transform z_score or"),
])
def test_config_errors(tmp_path, options, message):
    config = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)},
              "features": {"x": options}}
    with pytest.raises(ConfigError, match=message):
        load_config(config)
