"""Every categorical output carries its bucket count in the transformed schema, so that the documented way to
size an embedding, `TFTransformOutput.num_buckets_for_transformed_feature`, works for each (docs/training.md),
and make_dataset takes the label from run.json.

The expected counts come from outside the graph: the line counts of the vocabulary files, the config's hash
and bucket counts, the largest id in the shards. Ids outside the domain are only the documented ones: -1 for
padding and for a value a vocabulary without OOV buckets lacks.
"""

import os
from collections import Counter

import numpy as np
import pytest

from rich_rows import written_rows

ROWS = 300
CITIES = ["paris", "oslo", "rome", "lima", "bern", "nuuk"]
TAGS = ["a", "b", "c", "d", "e"]
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away", "and", "then", "slept"]
TEXT = {"transform": "text_vocabulary", "top_k": 8}

# name: (raw column, options, expected bucket count from (vocabulary line count, config), whether the shards
# reach the last bucket: every vocabulary entry is seen, so its last id is written)
CASES = {
    "city": ("city", {"transform": "vocabulary", "top_k": 3, "num_oov_buckets": 2}, lambda lines: lines + 2, False),
    "city_no_oov": ("city", {"transform": "vocabulary", "num_oov_buckets": 0}, lambda lines: lines, True),
    "city_top_no_oov": ("city", {"transform": "vocabulary", "top_k": 3, "num_oov_buckets": 0},
                        lambda lines: lines, True),
    "city_default_past": ("city", {"transform": "vocabulary", "top_k": 3, "num_oov_buckets": 0, "default_value": 9},
                          lambda lines: 10, True),
    "code_vocabulary": ("code", {"transform": "vocabulary", "num_oov_buckets": 0}, lambda lines: lines, True),
    "tags": ("tags", {"transform": "vocabulary", "list": True, "max_length": 3}, lambda lines: lines + 1, False),
    "tags_no_oov": ("tags", {"transform": "vocabulary", "list": True, "top_k": 3, "num_oov_buckets": 0},
                    lambda lines: lines, True),
    "tags_fixed_no_oov": ("tags", {"transform": "vocabulary", "list": True, "top_k": 3, "num_oov_buckets": 0,
                                   "max_length": 3}, lambda lines: lines, True),
    "codes": ("codes", {"transform": "hash", "hash_buckets": 8, "list": True}, lambda lines: 8, False),
    "code": ("code", {"transform": "hash", "hash_buckets": 5}, lambda lines: 5, False),
    "code_keyed": ("code", {"transform": "hash", "hash_buckets": 6, "key": [3, 4]}, lambda lines: 6, False),
    "age": ("age", {"transform": "bucketize", "num_buckets": 4}, lambda lines: 4, True),
    "age_per_city": ("age", {"transform": "bucketize", "num_buckets": 3, "key": "city"}, lambda lines: 3, True),
    "city_x_code": (None, {"transform": "cross", "columns": ["city", "code"], "hash_buckets": 11},
                    lambda lines: 11, False),
    "text": ("text", {**TEXT, "num_oov_buckets": 1}, lambda lines: lines + 1, False),
    "text_no_oov": ("text", {**TEXT, "num_oov_buckets": 0}, lambda lines: lines, True),
    "text_fixed": ("text", {**TEXT, "max_length": 4}, lambda lines: lines + 1, False),
    "text_fixed_no_oov": ("text", {**TEXT, "max_length": 4, "num_oov_buckets": 0}, lambda lines: lines, True),
    "text_bow": ("text", {**TEXT, "output": "bag_of_words"}, lambda lines: lines + 1, False),
    "text_bow_no_oov": ("text", {**TEXT, "output": "bag_of_words", "num_oov_buckets": 0}, lambda lines: lines, True),
    "text_tfidf": ("text", {**TEXT, "output": "tfidf", "num_oov_buckets": 3}, lambda lines: lines + 3, False),
}


@pytest.fixture(scope="module")
def categorical_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(4)
    folder = tmp_path_factory.mktemp("categorical")
    raw = {"id": [], "city": [], "tags": [], "codes": [], "code": [], "age": [], "text": [], "target": []}
    for i in range(ROWS):
        raw["id"].append(str(i))
        raw["city"].append(str(rng.choice(CITIES)))
        raw["tags"].append("|".join(rng.choice(TAGS, rng.integers(0, 4))))
        raw["codes"].append("|".join(str(c) for c in rng.integers(0, 100, rng.integers(1, 4))))
        raw["code"].append(str(rng.integers(0, 30)))
        raw["age"].append(str(rng.integers(18, 90)))
        raw["text"].append(" ".join(rng.choice(WORDS, rng.integers(1, 7))))
        raw["target"].append(str(rng.choice(["yes", "no"])))
    # each case reads a copy of its raw column of its own name (a cross reads the originals)
    columns = {name: raw[column] for name, (column, _, _, _) in CASES.items() if column not in (None, name)}
    table = {**raw, **columns}
    lines = [",".join(table)] + [",".join(values[i] for values in table.values()) for i in range(ROWS)]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n")
    features = {"id": {"transform": "passthrough"}, **{name: dict(options) for name, (_, options, _, _) in
                                                        CASES.items()}}
    config = {
        "name": "categorical",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
        "features": features,
        "label": {"column": "target", "map": {"no": 0, "yes": 1}},
        "output": {"dir": str(folder / "out"), "splits": {"train": 0.8, "eval": 0.2}, "shards": 1},
    }
    return run(config)


def _vocabulary_lines(graph_dir: str, name: str) -> int:
    """The line count of a feature's vocabulary file, read as a file (no tf.Transform)."""
    path = os.path.join(graph_dir, "transform_fn", "assets", f"vocab_{name}")
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_categorical_output_has_its_bucket_count_and_ids_below_it(categorical_run, name):
    import tensorflow_transform as tft

    column, options, expected, reaches_last = CASES[name]
    output = tft.TFTransformOutput(categorical_run.graph_dir)
    lines = _vocabulary_lines(categorical_run.graph_dir, name)
    buckets = expected(lines)
    assert output.num_buckets_for_transformed_feature(name) == buckets
    ids = np.asarray([i for row in written_rows(categorical_run.output_dir)[name] for i in np.ravel(row)],
                     dtype=np.int64)
    # -1: padding, a value a vocabulary without OOV buckets lacks, a per-key bucket's unseen key
    ids = ids[ids != -1]
    assert len(ids) and ids.min() >= 0 and ids.max() < buckets
    if reaches_last:
        assert ids.max() + 1 == buckets


def test_the_vocabularies_without_oov_buckets_are_those_of_the_cities_seen(categorical_run):
    """The line counts the expectations rest on are the data's: all six cities, the top 3, every code seen."""
    graph = categorical_run.graph_dir
    assert _vocabulary_lines(graph, "city_no_oov") == len(CITIES)
    assert _vocabulary_lines(graph, "city_top_no_oov") == 3
    assert _vocabulary_lines(graph, "tags") == len(TAGS)


def test_make_dataset_takes_the_label_from_run_json(categorical_run):
    from skewless.pipelines.tfdata.dataset import make_dataset

    labels, ids = [], []
    for features, label in make_dataset(categorical_run.output_dir, "train", batch_size=64, shuffle_buffer=0):
        assert "target" not in features
        labels.extend(label.numpy().tolist())
        ids.extend(features["id"].numpy().tolist())
    written = written_rows(categorical_run.output_dir)
    by_id = dict(zip(written["id"], written["target"]))
    assert len(ids) == categorical_run.rows["written"]["train"]
    assert labels == [by_id[i] for i in ids]


def test_a_bag_of_words_without_oov_buckets_counts_the_tokens_its_vocabulary_has(categorical_run):
    """docs/config.md: with num_oov_buckets 0 the bags leave unseen tokens out (bincount refuses their -1)."""
    graph = categorical_run.graph_dir
    with open(os.path.join(graph, "transform_fn", "assets", "vocab_text_bow_no_oov"), encoding="utf-8") as handle:
        vocabulary = {token: i for i, token in enumerate(handle.read().splitlines())}
    assert len(vocabulary) == 8 < len(WORDS)  # top_k: some words are unseen
    written = written_rows(categorical_run.output_dir)
    texts = _raw_texts(categorical_run)
    for row_id, ids, weights in zip(written["id"], written["text_bow_no_oov"], written["text_bow_no_oov_weights"]):
        counts = Counter(vocabulary[word] for word in texts[row_id].split() if word in vocabulary)
        assert list(ids) == sorted(counts) and list(weights) == [counts[i] for i in sorted(counts)]


def _raw_texts(run) -> dict[int, str]:
    """The raw text column by id, read back from the job's input (beside its output folder)."""
    with open(os.path.join(os.path.dirname(run.output_dir), "rows.csv"), encoding="utf-8") as handle:
        header, *lines = handle.read().splitlines()
    names = header.split(",")
    return {int(values[names.index("id")]): values[names.index("text")] for values in
            (line.split(",") for line in lines)}
