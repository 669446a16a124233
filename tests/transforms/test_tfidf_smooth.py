"""`text_vocabulary` with `output: tfidf` and `smooth: false`: tft.tfidf's unsmoothed weights, term frequency times
1 + log(n / df), checked against NumPy on the written rows; `smooth` without TF-IDF refused in one line."""

import collections
import math

import numpy as np
import pytest
from rich_rows import write_csv, written_rows

from skewless.config import load_config
from skewless.errors import ConfigError

ROWS = 80
WORDS = ["red", "green", "blue", "cyan", "teal", "gold", "rose"]


def test_unsmoothed_tfidf_weights_equal_numpy(tmp_path):
    from skewless.pipelines import run

    rng = np.random.default_rng(4)
    weights = 1 / np.arange(1, len(WORDS) + 1)
    texts = [" ".join(rng.choice(WORDS, rng.integers(1, 7), p=weights / weights.sum())) for _ in range(ROWS)]
    write_csv(tmp_path / "docs.csv", {"id": list(range(ROWS)), "text": texts, "label": [i % 2 for i in range(ROWS)]})
    result = run({"name": "tfidf", "input": {"format": "csv", "paths": [str(tmp_path / "docs.csv")], "header": True},
                  "features": {"id": {"transform": "passthrough"},
                               "text": {"transform": "text_vocabulary", "output": "tfidf", "smooth": False}},
                  "label": {"column": "label"}, "output": {"dir": str(tmp_path / "out")}})
    written = written_rows(result.output_dir)

    docs = [text.split() for text in texts]
    by_id = dict(zip(range(ROWS), docs))
    documents = collections.Counter(word for doc in docs for word in set(doc))
    # every row goes to train or eval; the analysis ran on all of them
    for row_id, ids, values in zip(written["id"], written["text"], written["text_weights"]):
        doc = by_id[row_id]
        counts = collections.Counter(doc)
        assert len(ids) == len(counts)
        expected = sorted(counts[word] / len(doc) * (1 + math.log(ROWS / documents[word])) for word in counts)
        np.testing.assert_allclose(sorted(values), expected, rtol=1e-6)


def test_smooth_applies_to_tfidf_only(tmp_path):
    base = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)}}
    with pytest.raises(ConfigError, match=r"features\.x: smooth applies to output: tfidf$"):
        load_config({**base, "features": {"x": {"transform": "text_vocabulary", "smooth": False}}})
