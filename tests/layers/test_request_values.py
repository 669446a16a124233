"""A client's request (`serialize_raw_examples`, `transform_raw_rows`) holds a raw value as the job reads it: a
boolean in a text column is the text "1" or "0" (the job reads a JSON boolean in a string column so), and text
in a numeric column is a number only where the job's grammar reads one (ASCII digits, no `_` separators: Python's
`float` and `int` read more). Each case runs the job on the values, then sends the same rows. A Parquet boolean
column typed `string` is read as that text too (it failed with an Arrow cast error)."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf
from run_output import quarantined, read_rows

from skewless.errors import InputError
from skewless.layers import TransformLayer, serialize_raw_examples, transform_raw_rows
from skewless.pipelines import run

# a text column's values as each format holds them: JSON mixes kinds in a column, Parquet's column is booleans
CODES = {"jsonl": [True, False, "A", 5, 5.0, 1e20, "B", True, False, "A"], "parquet": [True, False, True, False, False]}
TEXTS_OF = {"jsonl": {"1", "0", "5", "5.0", "1e+20", "A", "B"}, "parquet": {"1", "0"}}


def _write(path, rows, format):
    if format == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)


@pytest.mark.parametrize("format", CODES)
def test_a_boolean_in_a_text_column_is_served_as_the_job_wrote_it(tmp_path, format):
    codes = CODES[format]
    rows = [{"id": i, "code": codes[i % len(codes)], "label": "ny"[i % 2]} for i in range(40)]
    _write(tmp_path / f"rows.{format}", rows, format)
    output = run({"name": "t", "input": {"format": format, "paths": [str(tmp_path / f"rows.{format}")],
                                         "types": {"code": "string"}},
                  "features": {"id": {"transform": "passthrough"},
                               "code": {"transform": "vocabulary", "num_oov_buckets": 1}},
                  "label": {"column": "label", "map": {"n": 0, "y": 1}},
                  "output": {"dir": str(tmp_path / "out"), "splits": {"train": 1.0}, "shards": 1}}).output_dir
    written, _ = read_rows(output, "train")
    vocabulary = (tmp_path / "out/transform_graph/transform_fn/assets/vocab_code").read_text().split("\n")
    assert set(vocabulary) - {""} == TEXTS_OF[format]  # the job's text of each value
    served = transform_raw_rows(TransformLayer(output), [{k: v for k, v in row.items() if k != "label"}
                                                         for row in rows])
    np.testing.assert_array_equal(served["code"], written["code"])


# (column, text): each on a line of its own among good rows; the job quarantines some of them
TEXTS = [("num", "1_000"), ("num", "\u0661\u0662"), ("num", "\uff11\uff12"), ("num", " 3 "), ("num", "1e5"),
         ("num", "+2.5"), ("num", "TRUE"), ("num", "0x10"), ("cnt", "1_0"), ("cnt", "\u0663"), ("cnt", "+4"),
         ("cnt", " 7"), ("cnt", "false"), ("cnt", "1e3")]


@pytest.fixture(scope="module")
def number_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("numbers")
    lines = ["id,num,cnt"] + [f"{i},{i * 0.5},{i}" for i in range(30)]
    for i, (column, text) in enumerate(TEXTS):
        lines.append(f"{100 + i},{text if column == 'num' else '1.5'},{text if column == 'cnt' else '2'}")
    (folder / "rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = run({"name": "t", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
                  "features": {"id": {"transform": "passthrough"}, "num": {"transform": "z_score"},
                               "cnt": {"transform": "passthrough"}},
                  "output": {"dir": str(folder / "out"), "splits": {"train": 1.0}, "shards": 1,
                             "max_bad_fraction": 0.9}}).output_dir
    return output, quarantined(output)


@pytest.mark.parametrize("case", range(len(TEXTS)), ids=[f"{column}={text!r}" for column, text in TEXTS])
def test_text_in_a_numeric_column_is_refused_where_the_job_quarantines_it(number_run, case):
    output, bad_lines = number_run
    column, text = TEXTS[case]
    spec = TransformLayer(output).raw_feature_spec
    row = {"id": 100 + case, "num": 1.5, "cnt": 2, column: text}
    if 32 + case in bad_lines:  # its line: the header, 30 good rows, then the cases
        assert bad_lines[32 + case].startswith(f"{column}: ")
        with pytest.raises(InputError, match=f"raw feature '{column}'"):
            serialize_raw_examples([row], spec)
    else:
        parsed = tf.io.parse_example(serialize_raw_examples([row], spec), spec)
        value = parsed[column].values[0] if isinstance(parsed[column], tf.SparseTensor) else parsed[column][0]
        assert value.numpy() == pytest.approx(float(text.strip().lower().replace("true", "1").replace("false", "0")))
