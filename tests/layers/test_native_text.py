"""text_vocabulary's native layers (issue 31): output ids with max_length (TextTokens, the lookup, VocabularyFirst,
PadOrTruncate) equal the graph bit for bit on TF and JAX, and a plain-Python tokenizer's ids; ids without max_length
and the bags (var-len) are refused with the measured reason."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from rich_rows import served_rows, write_csv

ROWS = 200
WORDS = ["Apple", "banana!", "Cherry;", "dátil", "ÉCLAIR", "fig's", "grape", "Hazel-nut", "x", "yy"]
NATIVE = {  # exact: ids with max_length
    "t8": {"transform": "text_vocabulary", "max_length": 8, "num_oov_buckets": 2, "default": ""},
    "traw": {"transform": "text_vocabulary", "lowercase": False, "strip_regex": None, "max_length": 5, "pad_value": 0,
             "top_k": 6, "default": ""},
    "tng": {"transform": "text_vocabulary", "ngram_range": [1, 2], "max_length": 6, "default": ""},
    "tok": {"transform": "text_vocabulary", "list": True, "max_length": 4, "num_oov_buckets": 0},
    "tags": {"transform": "text_vocabulary", "list": True, "max_length": 3},
}
REFUSED = {  # var-len outputs
    "tvar": {"transform": "text_vocabulary", "default": ""},
    "tbag": {"transform": "text_vocabulary", "output": "bag_of_words", "default": ""},
    "ttf": {"transform": "text_vocabulary", "output": "tfidf", "default": ""},
}
TEXTS = ["t8", "traw", "tng", "tvar", "tbag", "ttf"]


def _tokens(text: str) -> list[str]:
    """The graph's default tokenizer in Python: Unicode lowercasing, ASCII punctuation out, whitespace split."""
    return "".join(c for c in text.lower() if not (c.isascii() and not c.isalnum() and not c.isspace())).split()


@pytest.fixture(scope="module")
def text_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(5)
    folder = tmp_path_factory.mktemp("native_text")
    texts = [" ".join(rng.choice(WORDS, rng.integers(0, 7))) or None for _ in range(ROWS)]
    numbers = ["|".join(str(v) for v in rng.integers(0, 9, rng.integers(0, 5))) for _ in range(ROWS)]
    tags = ["|".join(rng.choice(["red", "green", "blue", "Blue"], rng.integers(0, 4))) for _ in range(ROWS)]
    raw = {"id": list(range(ROWS)), **{name: texts for name in TEXTS}, "tok": numbers, "tags": tags}
    write_csv(folder / "rows.csv", raw)
    result = run({"name": "text", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True,
                                            "na_values": ["NA"]},
                  "features": {"id": {"transform": "passthrough"}, **NATIVE, **REFUSED},
                  "output": {"dir": str(folder / "out"), "shards": 1}})
    rows = [{"id": i, **{name: texts[i] for name in TEXTS}, "tok": [int(v) for v in numbers[i].split("|") if v],
             "tags": [v for v in tags[i].split("|") if v]} for i in range(ROWS)]
    return result, rows


def _edge_rows(base: dict) -> list[dict]:
    """Unseen words, punctuation only, an empty and an absent text, Unicode case, long texts (truncated), unseen
    and missing list items ("" and NA tokens, before a value too), empty and absent lists."""
    texts = ["zebra Apple zebra", "?!", "", None, "ÉcLaIr DÁTIL", " ".join(WORDS * 2), "NA", "grape  grape\tgrape"]
    numbers = [[99, 1, 99], [], None, [8, 8, 8, 8, 8, 8], [0], [1, 2, 3, 4, 5], [-1], [7]]
    tags = [["", "red", "NA", "blue"], [], None, ["purple", "Blue", "blue", "red", "green"], [" NA "], ["red"],
            ["", ""], ["green"]]
    return [{**base, **{name: text for name in TEXTS}, "tok": number, "tags": tag}
            for text, number, tag in zip(texts, numbers, tags)]


def _vocabulary(result, name) -> list[str]:
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        file = json.load(handle)["features"][name]["vocabulary_file"]
    with open(os.path.join(result.graph_dir, "transform_fn", "assets", file), encoding="utf-8") as handle:
        return handle.read().split("\n")[:-1]


def test_ids_with_max_length_equal_the_graph_and_the_rest_is_refused(text_run):
    from skewless.layers import check_preprocessor

    result, rows = text_run
    check = check_preprocessor(result.output_dir, rows=rows + _edge_rows(rows[0]), sample=400)
    status = {f.name: (f.status, f.differences, f.reason) for f in check.features}
    for name in ["id", *NATIVE]:
        assert status[name] == ("exact", 0, None), name
    assert "without max_length is a var-len list per row" in status["tvar"][2]
    for name in ("tbag", "tbag_weights", "ttf", "ttf_weights"):
        assert status[name][0] == "unsupported" and "lacks tft.tfidf's division by the text's length" in status[name][2]


def test_ids_equal_a_python_tokenizer_over_the_vocabulary_file(text_run):
    from skewless.layers import TransformLayer, keras_preprocessor, raw_feature_batch

    result, rows = text_run
    edges = _edge_rows(rows[0])
    batch = raw_feature_batch(edges, TransformLayer(result.output_dir).raw_feature_spec)
    native = keras_preprocessor(result.output_dir, strict=False).transform_features(batch, ["t8", "tok"])
    vocabulary = _vocabulary(result, "t8")
    for row, ids in zip(edges, np.asarray(native["t8"])):
        tokens = _tokens(row["t8"] if row["t8"] not in (None, "NA") else "")[:8]  # NA: missing, the default ""
        for token, token_id in zip(tokens, ids):
            if token in vocabulary:
                assert token_id == vocabulary.index(token), token
            else:  # 2 OOV buckets after the vocabulary
                assert len(vocabulary) <= token_id < len(vocabulary) + 2, token
        assert (ids[len(tokens):] == -1).all()
    assert "éclair" in vocabulary and "dátil" in vocabulary  # lowercased as Unicode, as Python does
    numbers = _vocabulary(result, "tok")
    for row, ids in zip(edges, np.asarray(native["tok"])):
        values = (row["tok"] or [])[:4]
        expected = [numbers.index(str(v)) if str(v) in numbers else -1 for v in values]  # no OOV bucket: -1
        assert ids.tolist() == expected + [-1] * (4 - len(values))


def test_keras_text_vectorization_is_not_the_graphs_tokenizer():
    """Why TextTokens runs the graph's tokenizer: TextVectorization lowercases ASCII only."""
    import keras

    from skewless.layers import TextTokens

    vectorizer = keras.layers.TextVectorization(vocabulary=["éclair"], output_mode="int")
    assert np.asarray(vectorizer(["ÉCLAIR"])).tolist() == [[1]]  # 1: OOV, "Éclair" is not "éclair"
    tokens = TextTokens(strip_regex="[[:punct:]]")(["ÉCLAIR"])
    assert tokens.values.numpy().tolist() == ["éclair".encode()]


def test_keras_tf_idf_lacks_the_division_by_the_text_length(text_run):
    """Why tfidf is refused besides its var-len layout: Keras' StringLookup(output_mode="tf_idf") with the graph's
    own idf weights gives count × idf per vocabulary column, tft.tfidf gives count / length × idf."""
    import keras

    from skewless.layers import TransformLayer

    result, rows = text_run
    served = served_rows(TransformLayer(result.output_dir), rows)
    vocabulary = _vocabulary(result, "ttf")
    # the idf of each id, read back from the graph's weights: weight × length / count
    idf = np.zeros(len(vocabulary) + 1, np.float64)
    for row, ids, weights in zip(rows, served["ttf"], served["ttf_weights"]):
        tokens = _tokens(row["ttf"] or "")
        for token_id, weight in zip(ids, weights):
            token = vocabulary[token_id] if token_id < len(vocabulary) else None
            count = tokens.count(token) if token is not None else 0
            if count:
                idf[token_id] = weight * len(tokens) / count
    lookup = keras.layers.StringLookup(vocabulary=vocabulary, idf_weights=idf[:len(vocabulary)].astype(np.float32),
                                       output_mode="tf_idf")
    row = next(i for i, row in enumerate(rows) if len(set(_tokens(row["ttf"] or ""))) > 1)
    tokens = _tokens(rows[row]["ttf"])
    columns = np.asarray(lookup(tf.ragged.constant([tokens])))[0]
    compared = 0
    for token_id, weight in zip(served["ttf"][row], served["ttf_weights"][row]):
        if token_id < len(vocabulary):
            keras_weight = columns[token_id + 1]  # Keras' column 0 is its OOV token
            assert keras_weight != pytest.approx(weight)
            assert keras_weight / len(tokens) == pytest.approx(weight, rel=1e-5)
            compared += 1
    assert compared > 1


def test_native_text_ids_are_exact_on_jax(text_run, tmp_path):
    pytest.importorskip("jax")
    from native_on_jax import native_outputs_on_jax

    from skewless.layers import TransformLayer, transform_raw_rows
    from skewless.layers.keras_preprocessor import plan_preprocessor
    from skewless.layers.probe_rows import probe_rows

    result, rows = text_run
    graph = TransformLayer(result.output_dir)
    spec = graph.raw_feature_spec
    rows = rows + _edge_rows(rows[0]) + probe_rows(spec, plan_preprocessor(result.output_dir), 300, seed=2)
    expected = transform_raw_rows(graph, rows)
    on_jax = native_outputs_on_jax(result.output_dir, rows, spec, tmp_path)
    assert sorted(on_jax) == sorted(["id", *NATIVE])
    for name in NATIVE:
        assert on_jax[name].astype(np.int64).tolist() == expected[name].tolist(), name


def test_a_served_list_with_missing_items_before_a_value_pads_like_the_list_without_them(text_run):
    """tf.sparse.retain leaves holes inside a row where a served list loses missing items; max_length's padding
    took them for a ragged row and failed the request."""
    from skewless.layers import TransformLayer

    result, rows = text_run
    served = served_rows(TransformLayer(result.output_dir), [{**rows[0], "tags": ["", "red", " NA ", "blue"]},
                                                            {**rows[0], "tags": ["red", "blue"]}])
    assert served["tags"][0] == served["tags"][1]
