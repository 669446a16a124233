"""`transform: text_vocabulary`: token ids, bag of words (n-grams) and TF-IDF against a plain-Python tokenizer and
counts; var-len outputs through the spec, the shards and make_dataset; the shards equal the serving path, unseen
words go to the OOV bucket, and `skewless verify` finds no difference."""

import collections
import math
import re

import numpy as np
import pytest
import tensorflow as tf

from rich_rows import served_rows, written_rows
from skewless.transforms import TRANSFORMS

ROWS = 240
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "from", "home", "it", "was", "red"]
PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")  # ASCII punctuation, what [[:punct:]] matches


def tokenize(text: str) -> list[str]:
    return PUNCTUATION.sub("", text.lower()).split()


def ngrams(tokens: list[str], high: int) -> list[str]:
    return [" ".join(tokens[i : i + n]) for i in range(len(tokens)) for n in range(1, high + 1) if i + n <= len(tokens)]


@pytest.fixture(scope="module")
def text_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(2)
    folder = tmp_path_factory.mktemp("text")
    weights = 1 / np.arange(1, len(WORDS) + 1)
    texts = []
    for i in range(ROWS):
        words = rng.choice(WORDS, rng.integers(1, 9), p=weights / weights.sum()).tolist()
        words = [w.upper() if rng.random() < 0.2 else w for w in words]
        texts.append(" ".join(w + rng.choice(["", "", ",", "!", "'s"]) for w in words))
    texts[7], texts[8] = "", "?!"  # no text (a missing CSV value: the default), punctuation only: no tokens
    lines = ["id\tbody\tbow\ttfidf\tfixed\tlabel"] + [f"{i}\t{t}\t{t}\t{t}\t{t}\t{i % 2}" for i, t in enumerate(texts)]
    (folder / "docs.tsv").write_text("\n".join(lines) + "\n")
    config = {
        "name": "text",
        "input": {"format": "csv", "paths": [str(folder / "docs.tsv")], "header": True, "delimiter": "\t"},
        # the same texts four times: ids, a bag of uni- and bigrams, TF-IDF, ids cut to a fixed length;
        # an empty CSV value is a missing one, so a text column that can be empty needs a default
        "features": {
            "id": {"transform": "passthrough"},
            "body": {"transform": "text_vocabulary", "top_k": 10, "default": ""},
            "bow": {"transform": "text_vocabulary", "output": "bag_of_words", "ngram_range": [1, 2],
                    "frequency_threshold": 3, "default": ""},
            "tfidf": {"transform": "text_vocabulary", "output": "tfidf", "num_oov_buckets": 2, "default": ""},
            "fixed": {"transform": "text_vocabulary", "max_length": 5, "default": ""},
        },
        "label": {"column": "label"},
        "output": {"dir": str(folder / "out"), "shards": 2},
    }
    result = run(config)
    return result, texts, written_rows(result.output_dir)


def vocabulary(result, name):
    import tensorflow_transform as tft

    return [token.decode() for token in tft.TFTransformOutput(result.graph_dir).vocabulary_by_name(f"vocab_{name}")]


def test_ids_follow_the_vocabulary_of_the_tokenized_text(text_run):
    result, texts, written = text_run
    counts = collections.Counter(token for text in texts for token in tokenize(text))
    vocab = vocabulary(result, "body")
    assert len(vocab) == 10 and [counts[t] for t in vocab] == sorted((counts[t] for t in vocab), reverse=True)
    assert min(counts[t] for t in vocab) >= max(counts[t] for t in counts if t not in vocab)  # top_k: the top 10
    index = {token: i for i, token in enumerate(vocab)}
    assert written["body"] == [[index.get(token, 10) for token in tokenize(text)] for text in texts]
    assert written["body"][7] == written["body"][8] == []  # no tokens, no ids


def test_var_len_spec_and_make_dataset_gives_ragged(text_run):
    import tensorflow_transform as tft

    from skewless.pipelines.tfdata.dataset import make_dataset

    result, _, _ = text_run
    spec = tft.TFTransformOutput(result.graph_dir).transformed_feature_spec()
    assert spec["body"] == spec["bow"] == spec["tfidf"] == tf.io.VarLenFeature(tf.int64)
    assert spec["bow_weights"] == spec["tfidf_weights"] == tf.io.VarLenFeature(tf.float32)
    assert spec["fixed"].shape == [5] and spec["fixed"].dtype == tf.int64
    features, label = next(iter(make_dataset(result.output_dir, batch_size=16, shuffle_buffer=0)))
    assert isinstance(features["body"], tf.RaggedTensor) and features["body"].dtype == tf.int64
    assert features["body"].shape[0] == 16 and label.shape == (16,) and features["fixed"].shape == (16, 5)


def test_fixed_length_pads_and_truncates(text_run):
    result, texts, written = text_run
    index = {token: i for i, token in enumerate(vocabulary(result, "fixed"))}
    expected = [([index.get(t, len(index)) for t in tokenize(text)] + [-1] * 5)[:5] for text in texts]
    assert written["fixed"] == expected


def test_bag_of_words_counts_uni_and_bigrams(text_run):
    result, texts, written = text_run
    grams = [ngrams(tokenize(text), 2) for text in texts]
    counts = collections.Counter(g for doc in grams for g in doc)
    vocab = vocabulary(result, "bow")
    assert set(vocab) == {g for g, n in counts.items() if n >= 3} and any(" " in g for g in vocab)
    index = {token: i for i, token in enumerate(vocab)}
    for doc, ids, weights in zip(grams, written["bow"], written["bow_weights"]):
        per_id = collections.Counter(index.get(g, len(vocab)) for g in doc)
        assert ids == sorted(per_id) and weights == [float(per_id[i]) for i in sorted(per_id)]


def test_tfidf_weights(text_run):
    result, texts, written = text_run
    docs = [tokenize(text) for text in texts]
    index = {token: i for i, token in enumerate(vocabulary(result, "tfidf"))}
    assert all(t in index for doc in docs for t in doc)  # the two OOV buckets only see unseen words
    document_frequency = collections.Counter(index[t] for doc in docs for t in set(doc))
    for doc, ids, weights in zip(docs, written["tfidf"], written["tfidf_weights"]):
        per_id = collections.Counter(index[t] for t in doc)
        assert ids == sorted(per_id)
        expected = [per_id[i] / len(doc) * (1 + math.log((ROWS + 1) / (document_frequency[i] + 1))) for i in ids]
        np.testing.assert_allclose(weights, expected, rtol=1e-5)


def test_shards_equal_serving_and_unseen_words_go_to_oov(text_run):
    from skewless.layers import TransformLayer

    result, texts, written = text_run
    layer = TransformLayer(result.output_dir)
    columns = ("body", "bow", "tfidf", "fixed")
    served = served_rows(layer, [{"id": i, **{c: text for c in columns}} for i, text in enumerate(texts)])
    assert set(served) == set(written) - {"label"}
    for name in served:
        assert served[name] == written[name], name
    unseen = served_rows(layer, [{"id": 0, **{c: "Zebra, zebra; QUAGGA!" for c in columns}}])
    size = {c: len(vocabulary(result, c)) for c in columns}
    assert unseen["body"] == [[size["body"]] * 3]
    assert unseen["fixed"] == [[size["fixed"]] * 3 + [-1, -1]]
    # bigrams too ("zebra zebra", "zebra quagga"): 5 unseen n-grams in the one OOV bucket
    assert unseen["bow"] == [[size["bow"]]] and unseen["bow_weights"] == [[5.0]]
    # 2 OOV buckets: each unseen word hashes into [size, size + 2)
    assert set(unseen["tfidf"][0]) <= {size["tfidf"], size["tfidf"] + 1}


def test_verify_finds_no_difference_with_unseen_texts(text_run):
    from skewless.pipelines.commands.verify import verify

    result, _, _ = text_run
    check = verify(result.output_dir, sample=100)
    assert check.unseen_rows == 50 and check.differences == 0
    assert {c.name for c in check.features} == {"id", "body", "bow", "bow_weights", "tfidf", "tfidf_weights",
                                                "fixed", "label"}
    # a text's weights are named by the feature that writes them (issue 32), not "an extra output"
    # with the reason text_vocabulary has no native layers (the registry's)
    why = TRANSFORMS["text_vocabulary"].native_reason
    reasons = {f.name: (f.transform, f.reason) for f in check.native.features if f.name.endswith("_weights")}
    assert reasons == {
        "bow_weights": ("text_vocabulary", f"the bag_of_words weights of feature 'bow': {why}"),
        "tfidf_weights": ("text_vocabulary", f"the tfidf weights of feature 'tfidf': {why}"),
    }


def test_a_tfidf_run_logs_no_retracing_warning(tmp_path):
    """tf.Transform warned that the tfidf analyzer's "cache key varies on repeated tracing" on every run with a
    TF-IDF feature (two of them here: tfidf/ and tfidf_1/); `skewless run` prints only its progress."""
    import subprocess
    import sys

    import yaml

    (tmp_path / "docs.tsv").write_text("a\tb\n" + "".join(f"the cat {i % 7}\tsat on {i % 5}\n" for i in range(50)))
    config = {
        "name": "tfidf",
        "input": {"format": "csv", "paths": [str(tmp_path / "docs.tsv")], "header": True, "delimiter": "\t"},
        "features": {name: {"transform": "text_vocabulary", "output": "tfidf"} for name in ("a", "b")},
        "output": {"dir": str(tmp_path / "out"), "shards": 1},
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    done = subprocess.run([sys.executable, "-m", "skewless", "run", str(tmp_path / "job.yaml")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if not line.startswith("skewless run tfidf")] == []
