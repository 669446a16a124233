"""`output: one_hot | multi_hot | count` on vocabulary and hash (issue 31): the written rows must equal Keras' own
`CategoryEncoding` of the ids, and `StringLookup(output_mode=..., pad_to_max_tokens=True)` on the run's vocabulary
with its OOV columns moved after the vocabulary's (Keras puts them first); serving must equal the written rows.
"""

import json
import os

import numpy as np
import pytest

from example_job import assert_feature_refused
from rich_rows import served_rows, write_csv, written_rows

ROWS = 300
FEATURES = {  # column: (its options, the matching ids feature of the same raw values)
    "c_one": ({"transform": "vocabulary", "top_k": 6, "output": "one_hot"}, "c_ids"),
    "c_pad": ({"transform": "vocabulary", "top_k": 12, "num_oov_buckets": 2, "output": "one_hot"}, "c_pad_ids"),
    "t_multi": ({"transform": "vocabulary", "top_k": 5, "list": True, "output": "multi_hot"}, "t_ids"),
    "t_count": ({"transform": "vocabulary", "top_k": 5, "list": True, "output": "count"}, "t_ids"),
    "h_one": ({"transform": "hash", "hash_buckets": 7, "output": "one_hot"}, "h_ids"),
    "g_count": ({"transform": "hash", "hash_buckets": 4, "list": True, "output": "count"}, "g_ids"),
}


def _raw_rows():
    """Letters (8 of them, so top_k 6 leaves some out), lists of 0-4 letters with repeats (count differs from
    multi_hot), the same values again under the ids features' names."""
    rng = np.random.default_rng(31)
    letters = list("abcdefgh")
    c = rng.choice(letters, ROWS, p=np.linspace(3, 1, 8) / np.linspace(3, 1, 8).sum()).tolist()
    t = ["|".join(rng.choice(letters[:7], rng.integers(0, 5)).tolist()) for _ in range(ROWS)]
    columns = {"id": list(range(ROWS)), "c_one": c, "c_pad": c, "t_multi": t, "t_count": t, "h_one": c,
               "g_count": t, "c_ids": c, "c_pad_ids": c, "t_ids": t, "h_ids": c, "g_ids": t}
    return columns


def _ids_options(name):
    options, _ = FEATURES[name]
    return {key: value for key, value in options.items() if key != "output"}


@pytest.fixture(scope="module")
def encoded_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("encoded")
    raw = _raw_rows()
    write_csv(folder / "rows.csv", raw)
    features = {"id": {"transform": "passthrough"}}
    for name, (options, ids) in FEATURES.items():
        features[name] = options
        features[ids] = _ids_options(name)
    config = {"name": "encoded", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
              "features": features, "output": {"dir": str(folder / "out"), "shards": 1}}
    return run(config), raw


def _width(options):
    if options["transform"] == "hash":
        return options["hash_buckets"]
    return options["top_k"] + options.get("num_oov_buckets", 1)


def test_written_rows_equal_keras_category_encoding_of_the_ids(encoded_run):
    import keras

    result, _ = encoded_run
    written = written_rows(result.output_dir)
    for name, (options, ids_name) in FEATURES.items():
        ids = written[ids_name]
        if options.get("list"):
            # CategoryEncoding takes a dense batch of ids; -1 pads the shorter lists... which Keras would count, so
            # rows are padded with their own first id and the padding's count taken off again below
            longest = max(len(row) for row in ids)
            padded = np.array([row + [0] * (longest - len(row)) for row in ids], np.int64)
            expected = keras.layers.CategoryEncoding(_width(options), output_mode=options["output"])(padded)
            expected = np.array(expected)
            if options["output"] == "count":
                expected[:, 0] -= [longest - len(row) for row in ids]
            else:
                expected[:, 0] = [1.0 if 0 in row else 0.0 for row in ids]
        else:
            expected = np.asarray(keras.layers.CategoryEncoding(_width(options), output_mode="one_hot")(
                np.array(ids, np.int64)))
        ours = np.array(written[name], np.float32)
        assert ours.shape == (ROWS, _width(options)), name
        np.testing.assert_array_equal(ours, expected, err_msg=name)
    assert np.asarray(written["t_count"]).max() > 1  # repeats: count is not multi_hot


def test_string_lookup_gives_the_same_columns_oov_first(encoded_run):
    """Keras' StringLookup on the run's vocabulary: its OOV columns first, then the vocabulary, padded to
    max_tokens; ours: the vocabulary, then the OOV buckets (a single one: no hashing to agree on), then padding."""
    import keras

    result, raw = encoded_run
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        report = json.load(handle)["features"]
    written = written_rows(result.output_dir)
    for name in ("c_one", "t_multi", "t_count"):
        options, _ = FEATURES[name]
        with open(os.path.join(result.graph_dir, "transform_fn", "assets", report[name]["vocabulary_file"])) as handle:
            vocabulary = handle.read().split()
        width = _width(options)
        lookup = keras.layers.StringLookup(vocabulary=vocabulary, num_oov_indices=1, output_mode=options["output"],
                                           pad_to_max_tokens=True, max_tokens=width)
        values = raw[name] if not options.get("list") else [row.split("|") if row else [] for row in raw[name]]
        if options.get("list"):
            import tensorflow as tf

            keras_rows = np.asarray(lookup(tf.ragged.constant(values, dtype=tf.string)))
        else:
            keras_rows = np.asarray(lookup(np.array(values)))
        size = len(vocabulary)
        # Keras: [OOV, vocabulary..., padding]; ours: [vocabulary..., OOV, padding]
        reordered = np.concatenate([keras_rows[:, 1:size + 1], keras_rows[:, :1], keras_rows[:, size + 1:]], axis=1)
        order = np.argsort(written["id"])
        np.testing.assert_array_equal(np.array(written[name], np.float32)[order], reordered, err_msg=name)


def test_serving_equals_the_written_rows(encoded_run):
    from skewless.layers import TransformLayer

    result, raw = encoded_run
    layer = TransformLayer(result.output_dir)
    rows = []
    for i in range(ROWS):
        row = {}
        for name in raw:
            list_column = name in FEATURES and FEATURES[name][0].get("list") or name in ("t_ids", "g_ids")
            row[name] = (raw[name][i].split("|") if raw[name][i] else []) if list_column else raw[name][i]
        rows.append(row)
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    for name in FEATURES:
        assert served[name] == written[name], name
    # an unseen value: its OOV column (and hash: its bucket), one 1 per row for one_hot
    unseen = served_rows(layer, [{**rows[0], "c_one": "zz", "c_pad": "zz"}])
    assert np.argmax(unseen["c_one"][0]) == 6 and sum(unseen["c_one"][0]) == 1
    assert np.argmax(unseen["c_pad"][0]) in (len(set(raw["c_pad"])), len(set(raw["c_pad"])) + 1)


@pytest.mark.parametrize("feature, message", [
    ({"transform": "vocabulary", "output": "one_hot"}, "output one_hot needs top_k: its width"),
    ({"transform": "vocabulary", "top_k": 3, "list": True, "output": "one_hot"},
     "output one_hot takes one value per row; a list takes multi_hot or count"),
    ({"transform": "vocabulary", "top_k": 3, "output": "tfidf"}, "output tfidf does not apply to transform vocabulary"),
    ({"transform": "hash", "hash_buckets": 4, "list": True, "max_length": 3, "output": "count"},
     "max_length pads ids; output count is a fixed width already"),
    ({"transform": "text_vocabulary", "output": "multi_hot"}, "output multi_hot does not apply to transform "
                                                              "text_vocabulary"),
    ({"transform": "z_score", "output": "one_hot"}, "output only applies to transform vocabulary or hash or "
                                                    "text_vocabulary, not z_score"),
])
def test_config_refuses_bad_combinations_in_one_line(tmp_path, feature, message):
    assert_feature_refused(tmp_path, feature, message)


def test_native_preprocessor_is_exact_for_one_hot(encoded_run):
    """vocabulary and hash one_hot: the lookup's ids through Keras' CategoryEncoding (lists are not built natively)."""
    from skewless.layers import check_preprocessor

    result, raw = encoded_run
    rows = [{name: raw[name][i] for name in raw if not name.startswith(("t_", "g_"))} for i in range(0, ROWS, 3)]
    check = check_preprocessor(result.output_dir, rows=rows, sample=200)
    statuses = {f.name: (f.status, f.reason, f.differences) for f in check.features}
    for name in ("c_one", "c_pad", "h_one"):
        assert statuses[name] == ("exact", None, 0), name
    assert statuses["t_multi"][0] == "unsupported"


# the JAX side of the test below: Keras fixes its backend at import, so it runs in a child process (lists have
# no native layers: strict=False leaves them out)
_JAX_CHILD = """
import json, sys
import numpy as np
import keras
from skewless.layers import keras_preprocessor, raw_feature_batch
from skewless.layers.transform_graph import specs_from_json

work = sys.argv[1]
inputs = json.load(open(work + "/inputs.json"))
outputs = keras_preprocessor(sys.argv[2], strict=False)(raw_feature_batch(inputs["rows"], specs_from_json(inputs["spec"])))
np.savez(work + "/jax.npz", backend=keras.backend.backend(), **{name: np.asarray(value) for name, value in outputs.items()})
"""


def test_native_one_hot_is_exact_on_jax(encoded_run, tmp_path):
    pytest.importorskip("jax")
    import subprocess
    import sys

    from skewless.layers import TransformLayer, transform_raw_rows
    from skewless.layers.transform_graph import specs_to_json

    result, raw = encoded_run
    graph = TransformLayer(result.output_dir)
    names = ("id", "c_one", "c_pad", "h_one", "c_ids", "c_pad_ids", "h_ids")
    spec = {name: graph.raw_feature_spec[name] for name in names}
    # the run's rows, and values it never saw (OOV buckets, hash buckets)
    rows = [{name: raw[name][i] for name in names} for i in range(ROWS)]
    rows += [{**rows[0], "c_one": f"new{i}", "c_pad": f"new{i}", "h_one": f"new{i}"} for i in range(20)]
    expected = transform_raw_rows(graph, rows)
    (tmp_path / "inputs.json").write_text(json.dumps({"spec": specs_to_json(spec), "rows": rows}))
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3"}
    child = subprocess.run([sys.executable, "-c", _JAX_CHILD, str(tmp_path), result.output_dir], env=env,
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-4000:]
    on_jax = np.load(tmp_path / "jax.npz")
    assert str(on_jax["backend"]) == "jax"
    for name in ("c_one", "c_pad", "h_one"):
        assert on_jax[name].shape == expected[name].shape, name
        np.testing.assert_array_equal(on_jax[name].astype(np.float32), expected[name], err_msg=name)
