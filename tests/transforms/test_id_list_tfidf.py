"""`text_vocabulary` over a list of integer ids (`list: true`): a vocabulary of the ids, then a bag of words
(counts) and TF-IDF (tft.tfidf takes ids) per row, checked against NumPy on the written rows; text options
on a list refused in one line."""

import collections
import math

import numpy as np
import pytest
from rich_rows import write_csv, written_rows

from skewless.config import load_config
from skewless.errors import ConfigError

ROWS = 90


def test_bag_of_words_and_tfidf_of_integer_id_lists(tmp_path):
    import tensorflow_transform as tft

    from skewless.pipelines import run

    rng = np.random.default_rng(9)
    items = [rng.choice([3, 17, 17, 40, 40, 40, 512, 9001], rng.integers(1, 6)).tolist() for _ in range(ROWS)]
    write_csv(tmp_path / "rows.csv", {"id": list(range(ROWS)), "bag": ["|".join(map(str, row)) for row in items],
                                      "tfidf": ["|".join(map(str, row)) for row in items],
                                      "label": [i % 2 for i in range(ROWS)]})
    result = run({"name": "ids", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
                  "features": {"id": {"transform": "passthrough"},
                               "bag": {"transform": "text_vocabulary", "list": True, "output": "bag_of_words"},
                               "tfidf": {"transform": "text_vocabulary", "list": True, "output": "tfidf",
                                         "smooth": False}},
                  "label": {"column": "label"}, "output": {"dir": str(tmp_path / "out")}})
    written = written_rows(result.output_dir)
    graph = tft.TFTransformOutput(result.graph_dir)

    by_id = dict(enumerate(items))
    documents = collections.Counter(item for row in items for item in set(row))
    for name in ("bag", "tfidf"):
        index = {int(token): i for i, token in enumerate(graph.vocabulary_by_name(f"vocab_{name}"))}
        assert set(index) == set(documents)
        for row_id, ids, weights in zip(written["id"], written[name], written[f"{name}_weights"]):
            counts = collections.Counter(by_id[row_id])
            assert ids == sorted(index[item] for item in counts)
            per_id = {index[item]: count for item, count in counts.items()}
            if name == "bag":
                expected = [per_id[i] for i in ids]
            else:
                item_of = {i: item for item, i in index.items()}
                expected = [per_id[i] / len(by_id[row_id]) * (1 + math.log(ROWS / documents[item_of[i]]))
                            for i in ids]
            np.testing.assert_allclose(weights, expected, rtol=1e-6)


def test_text_options_on_a_list_are_refused(tmp_path):
    base = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)}}
    feature = {"transform": "text_vocabulary", "list": True, "ngram_range": [1, 2]}
    with pytest.raises(ConfigError, match=r"features\.x: ngram_range apply to texts; with list: true"):
        load_config({**base, "features": {"x": feature}})
