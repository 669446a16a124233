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
    # no OOV bucket: an unseen value counts in its default_value's column
    "t_zero": ({"transform": "vocabulary", "top_k": 4, "num_oov_buckets": 0, "default_value": 2, "list": True,
                "output": "multi_hot"}, "t_zero_ids"),
    # integers (IntegerLookup), fewer values than top_k (columns of padding), 2 hashed OOV buckets
    "n_count": ({"transform": "vocabulary", "top_k": 9, "num_oov_buckets": 2, "list": True, "output": "count"},
                "n_ids"),
    "k_multi": ({"transform": "hash", "hash_buckets": 5, "key": [7, 11], "list": True, "output": "multi_hot"},
                "k_ids"),
}
LISTS = [name for name, (options, _) in FEATURES.items() if options.get("list")]
LIST_IDS = [FEATURES[name][1] for name in LISTS]


def _raw_rows():
    """Letters (8 of them, so top_k 6 leaves some out), lists of 0-4 letters with repeats (count differs from
    multi_hot), the same values again under the ids features' names."""
    rng = np.random.default_rng(31)
    letters = list("abcdefgh")
    c = rng.choice(letters, ROWS, p=np.linspace(3, 1, 8) / np.linspace(3, 1, 8).sum()).tolist()
    t = ["|".join(rng.choice(letters[:7], rng.integers(0, 5)).tolist()) for _ in range(ROWS)]
    n = ["|".join(str(value) for value in rng.integers(0, 6, rng.integers(0, 4))) for _ in range(ROWS)]
    columns = {"id": list(range(ROWS)), "c_one": c, "c_pad": c, "t_multi": t, "t_count": t, "h_one": c,
               "g_count": t, "t_zero": t, "n_count": n, "k_multi": t, "c_ids": c, "c_pad_ids": c, "t_ids": t,
               "h_ids": c, "g_ids": t, "t_zero_ids": t, "n_ids": n, "k_ids": t}
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
    config = {"name": "encoded", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True,
                                           "na_values": ["NA"]},
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
    rows = _request_rows(raw, range(ROWS))
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


def test_missing_items_inside_a_served_list_are_left_out(encoded_run):
    """Serving takes the empty and NA items out of a list wherever they stand, as the job's reader does: the
    encoded columns equal those of the list without them (tf.sparse.retain leaves holes inside a row, which
    RaggedTensor.from_sparse refused)."""
    from skewless.layers import TransformLayer

    result, raw = encoded_run
    base = _request_rows(raw, [0])[0]
    texts = [name for name in LISTS if name not in INTEGER_LISTS]
    ids = sorted({name for name in LIST_IDS if name not in INTEGER_LISTS})
    gaps = {**base, **{name: ["", "b", " NA ", "a", ""] for name in texts + ids}}
    plain = {**base, **{name: ["b", "a"] for name in texts + ids}}
    served = served_rows(TransformLayer(result.output_dir), [gaps, plain])
    for name in texts:
        assert served[name][0] == served[name][1], name
        assert sum(served[name][1]) == 2, name
    # the ids of a list too: its two values at positions 0 and 1 (they kept positions 1 and 3, which densified
    # to a made-up id 0 before each)
    for name in ids:
        assert served[name][0] == served[name][1] and len(served[name][1]) == 2, name


def test_native_preprocessor_is_exact_for_every_encoding(encoded_run):
    """one_hot (the lookup's ids through CategoryEncoding) and a list's multi_hot / count (PresentValues, then
    the lookup or Hashing with output_mode, VocabularyFirstColumns): the graph's columns bit for bit on the run's
    rows, unseen values, empty, absent and gappy lists and the probe rows; a list's var-len ids are refused."""
    from skewless.layers import TransformLayer, check_preprocessor, keras_preprocessor, raw_feature_batch

    result, raw = encoded_run
    rows = _request_rows(raw, range(ROWS))
    rows += _edge_rows(rows[0])
    check = check_preprocessor(result.output_dir, rows=rows, sample=300)
    statuses = {f.name: (f.status, f.reason, f.differences) for f in check.features}
    for name in FEATURES:
        assert statuses[name] == ("exact", None, 0), name
    for name in set(LIST_IDS):
        assert statuses[name][0] == "unsupported" and "var-len" in statuses[name][1], name

    # independently of the graph: the edge rows' columns from the vocabulary file, counted in Python
    edges = _edge_rows(rows[0])
    batch = raw_feature_batch(edges, TransformLayer(result.output_dir).raw_feature_spec)
    native = keras_preprocessor(result.output_dir, strict=False).transform_features(batch, ["t_zero", "n_count"])
    vocabulary = _vocabulary(result, "t_zero")
    for row, columns in zip(edges, np.asarray(native["t_zero"])):
        present = {value.strip() for value in row["t_zero"] or []} - {"", "NA"}
        expected = np.zeros(4, np.float32)
        for value in present:  # multi_hot; an unseen value takes default_value 2's column
            expected[vocabulary.index(value) if value in vocabulary else 2] = 1.0
        np.testing.assert_array_equal(columns, expected)
    numbers = [int(value) for value in _vocabulary(result, "n_count")]
    for row, columns in zip(edges, np.asarray(native["n_count"])):
        values = row["n_count"] or []
        seen = [numbers.index(value) for value in values if value in numbers]
        expected = np.bincount(seen, minlength=len(numbers)).astype(np.float32)
        np.testing.assert_array_equal(columns[:len(numbers)], expected)
        # the 2 OOV buckets hold the unseen values, the columns after them (top_k 9, fewer values) nothing
        assert columns[len(numbers):len(numbers) + 2].sum() == len(values) - len(seen)
        assert not columns[len(numbers) + 2:].any() and columns.shape == (11,)
    assert len(numbers) < 9


def _vocabulary(result, name) -> list[str]:
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        file = json.load(handle)["features"][name]["vocabulary_file"]
    with open(os.path.join(result.graph_dir, "transform_fn", "assets", file)) as handle:
        return handle.read().split()


INTEGER_LISTS = ("n_count", "n_ids")


def _request_rows(raw: dict, indices) -> list[dict]:
    """Rows `indices` of the raw columns as a serving request sends them: list columns as lists (of ints for
    INTEGER_LISTS)."""
    rows = []
    for i in indices:
        row = {}
        for name, values in raw.items():
            value = values[i]
            if name in LISTS or name in LIST_IDS:
                value = value.split("|") if value else []
                value = [int(item) for item in value] if name in INTEGER_LISTS else value
            row[name] = value
        rows.append(row)
    return rows


def _edge_rows(base: dict) -> list[dict]:
    """`base` with unseen values, empty and absent lists, a value repeated and missing items ("", NA tokens)
    inside the lists."""
    edges = []
    cases = [(["zz", "a", "zz"], [99, 3, 99]), ([], []), (None, None), (["", "a", " NA ", "b", ""], [4]),
             (["NA"], [-7, -7, 5]), (["b", "b", "b", "yy"], [0, 1, 2, 3, 4, 5, 6, 7])]
    for i, (texts, numbers) in enumerate(cases):
        row = {**base, "c_one": f"new{i}", "c_pad": f"new{i}", "h_one": f"new{i}"}
        for name in LISTS + LIST_IDS:
            row[name] = numbers if name in INTEGER_LISTS else texts
        edges.append(row)
    return edges


def test_native_encodings_are_exact_on_jax(encoded_run, tmp_path):
    """Every encoding of FEATURES on JAX, one_hot and the lists' multi_hot / count: the graph's columns bit for bit
    on the run's rows, the edge rows and the probe rows."""
    pytest.importorskip("jax")
    from native_on_jax import native_outputs_on_jax

    from skewless.layers import TransformLayer, transform_raw_rows
    from skewless.layers.keras_preprocessor import plan_preprocessor
    from skewless.layers.probe_rows import probe_rows

    result, raw = encoded_run
    graph = TransformLayer(result.output_dir)
    spec = graph.raw_feature_spec
    rows = _request_rows(raw, range(ROWS))
    rows += _edge_rows(rows[0]) + probe_rows(spec, plan_preprocessor(result.output_dir), 300, seed=4)
    expected = transform_raw_rows(graph, rows)
    on_jax = native_outputs_on_jax(result.output_dir, rows, spec, tmp_path)
    assert not set(LIST_IDS) & set(on_jax)
    for name in FEATURES:
        assert on_jax[name].shape == expected[name].shape, name
        assert on_jax[name].astype(np.float32).tobytes() == expected[name].tobytes(), name
