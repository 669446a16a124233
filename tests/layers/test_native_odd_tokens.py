"""The native layers (issue 31) on odd tokens: vocabulary entries with spaces, "|", tabs, CR and LF, leading and
trailing blanks, non-ASCII case pairs (İ, ß), a one-token vocabulary, an empty vocabulary, and very long text equal
the graph bit for bit (list `output: multi_hot | count`, text_vocabulary ids with max_length); a vocabulary with
bytes that are not UTF-8 is refused in one line naming why."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROWS = 120
ODD = ["a b", "a|b", " lead", "trail ", "é", "x\ry", "tab\tx", "ß", "İ", "\u00a0nbsp", "日本", "x\ny", "#", "\\"]
TEXT = ["İstanbul", "ǅemal", "ΣΑΣ", "straße", "a|b", "x\u200by", "ﬁ"]


@pytest.fixture(scope="module")
def odd_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("odd_tokens")
    rng = np.random.default_rng(1)
    rows = [{"id": i,
             "v": list(rng.choice(ODD, rng.integers(0, 4))),
             "vc": list(rng.choice(ODD, rng.integers(0, 4))),
             "one": ["only"] * int(rng.integers(0, 3)),
             "empty": [None] * int(rng.integers(0, 2)),  # only missing items: an empty vocabulary
             "t": " ".join(rng.choice(TEXT, rng.integers(1, 6))) + " z" * (3000 if i == 3 else 0),
             "nb": [bytes([0xFF, 0xFE, int(k)]) for k in rng.integers(0, 3, rng.integers(0, 3))] + [b"ok"]}
            for i in range(ROWS)]
    pq.write_table(pa.Table.from_pylist(rows), folder / "rows.parquet")
    features = {"id": {"transform": "passthrough"},
                "v": {"transform": "vocabulary", "list": True, "output": "multi_hot", "top_k": 20},
                "vc": {"transform": "vocabulary", "list": True, "output": "count", "top_k": 20, "num_oov_buckets": 2},
                "one": {"transform": "vocabulary", "list": True, "output": "count", "top_k": 3},
                "empty": {"transform": "vocabulary", "list": True, "output": "multi_hot", "top_k": 2},
                "t": {"transform": "text_vocabulary", "max_length": 6},
                "nb": {"transform": "vocabulary", "list": True, "output": "multi_hot", "top_k": 5}}
    result = run({"name": "odd", "input": {"format": "parquet", "paths": [str(folder / "rows.parquet")]},
                  "features": features, "output": {"dir": str(folder / "out"), "splits": {"train": 1.0}, "shards": 1}})
    edge = [{**rows[0], "v": ["a b", "unseen", "", "a|b"], "vc": ["x\ny", "x\ny", "x", "y"], "t": "İSTANBUL ﬁ"},
            {**rows[1], "v": [], "vc": [], "one": ["ONLY", "only"], "empty": ["new"], "t": "?!"}]
    return result, rows + edge


def test_odd_tokens_equal_the_graph_or_are_refused_in_one_line(odd_run):
    from skewless.layers import check_preprocessor

    result, rows = odd_run
    check = check_preprocessor(result.output_dir, rows=rows, sample=400)
    status = {f.name: (f.status, f.differences, f.reason) for f in check.features}
    for name in ("v", "vc", "one", "empty", "t"):
        assert status[name][:2] == ("exact", 0), (name, status[name])
    assert status["nb"][0] == "unsupported"
    assert "not UTF-8" in status["nb"][2] and "\n" not in status["nb"][2]
