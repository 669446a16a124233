"""Issue 43, the reader's side: the same raw value means the same thing from every source, in the job, at serving
and in `skewless predict` (items 1, 2, 5 and 7).

The same logical rows (tests/edge_rows.py: text with spaces around it, booleans, a list column with a missing
item, a float with gaps) are written as each source holds them and run through the job: every run must give
the same raw spec, vocabularies and shards as the Parquet run, the vocabularies must hold the values as
written, and the served rows must be the written ones. Item 5 scores one R-written file with `skewless predict`
and reads it with `skewless apply`: the same rows, the same values, the served outputs.
"""

import csv
import gzip
import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_rows import (
    LIST_DELIMITER,
    NA_TOKENS,
    SOURCES,
    STATES,
    TAGS,
    job_config,
    logical_rows,
    present,
    write_csv,
)
from real_data import run_json, split_records, vocabulary_files, written_by_id
from rich_rows import python_rows, served_rows, written_rows

REFERENCE = "parquet"  # typed values: what each other source must read
OTHERS = [source for source in SOURCES if source != REFERENCE]


class Runs(dict):
    """Source -> its run's directory, each source run when a test first asks for it (a source the job cannot read
    fails only the tests that read it)."""

    def __init__(self, folder):
        super().__init__()
        self.folder = folder

    def __missing__(self, source):
        from skewless.pipelines import run

        self[source] = run(job_config(source, self.folder)).output_dir
        return self[source]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return Runs(tmp_path_factory.mktemp("edges"))



def _vocabulary(run_dir, name) -> list[str]:
    file = run_json(run_dir)["features"][name]["vocabulary_file"]
    return vocabulary_files(run_dir)[file].decode().split("\n")[:-1]


# ---- every source reads the same values -------------------------------------------------------------------------

def test_the_reference_run_reads_the_values_aswritten_by_id(runs):
    """Independent of the other sources: every row written, text as written (spaces kept), booleans 1/0, a list's
    missing item left out."""
    run_dir = runs[REFERENCE]
    assert sum(run_json(run_dir)["rows"]["written"].values()) == len(logical_rows())
    assert sorted(_vocabulary(run_dir, "state")) == sorted(set(STATES))
    assert sorted(_vocabulary(run_dir, "flag")) == ["0", "1"]
    assert sorted(_vocabulary(run_dir, "tags")) == sorted({tag for tags in TAGS for tag in tags if tag})


@pytest.mark.parametrize("source", OTHERS)
def test_every_source_gives_the_reference_raw_spec_vocabularies_and_shards(runs, source):
    from skewless.layers import TransformLayer

    ours, theirs = runs[source], runs[REFERENCE]
    assert TransformLayer(ours).raw_feature_spec == TransformLayer(theirs).raw_feature_spec
    for name in ("state", "flag", "tags"):
        assert _vocabulary(ours, name) == _vocabulary(theirs, name), name
    assert run_json(ours)["rows"] == run_json(theirs)["rows"]
    for split in run_json(theirs)["rows"]["written"]:
        assert split_records(ours, split) == split_records(theirs, split), split


@pytest.mark.parametrize("source", SOURCES)
def test_serving_the_logical_rows_gives_the_written_rows(runs, source):
    """The rows as a client holds them (Python bools, lists with their empty item, None for a gap), served."""
    from skewless.layers import transform_raw_rows

    written = written_by_id(runs[source])
    rows = logical_rows()
    served = transform_raw_rows(runs[source], rows)
    for name, values in served.items():
        got = dict(zip((row["id"] for row in rows), python_rows(values)))
        if name == "tags":  # zero-padded to the longest list
            got = {i: value[: len(written[i][name])] for i, value in got.items()}
        mismatched = [i for i in written if got[i] != written[i][name]]
        assert not mismatched, (name, mismatched[:3])


# ---- item 1: a quoted value is never changed; the reader's paths agree ------------------------------------------

LINES = [
    'a, " NJ",x',  # a space before the opening quote is the delimiter's; the quoted space is the value's
    '"  admin" ,y',  # text after a closing quote: malformed
    ' plain,  two  , three',  # unquoted: spaces after a delimiter dropped, the rest kept
    'q,"x, y",""',
    'b,"tab\tin",  ',
]


@pytest.mark.parametrize("skip", [True, False], ids=["skip_initial_space", "keep_initial_space"])
def test_csv_lines_are_read_as_pythons_csv_module_reads_them_in_every_path(skip):
    """Python's csv module (skipinitialspace as the option says, strict) is the reference for each path of the
    reader: a block of lines, lines one by one, and RFC 4180 records (input.multiline)."""
    from skewless.pipelines.reading.csv import parse_csv_block, parse_csv_lines, parse_csv_records

    columns = ["c0", "c1", "c2"]
    expected = {}
    for number, line in enumerate(LINES, start=1):
        try:
            expected[number] = next(csv.reader([line], skipinitialspace=skip, strict=True))
        except csv.Error:
            expected[number] = None
    data = "\n".join(LINES).encode() + b"\n"
    by_block = parse_csv_block(data, columns, ",", skip, first_number=1)
    by_line = parse_csv_lines([line.encode() for line in LINES], range(1, len(LINES) + 1), columns, ",", skip)
    ((by_record, _),) = list(parse_csv_records(io.BytesIO(data), columns, ",", skip, first_number=1))
    for parsed in (by_block, by_line, by_record):
        found = dict(zip(parsed.numbers.tolist(), zip(*(parsed.batch.column(c).to_pylist() for c in columns))))
        assert {n: list(v) for n, v in found.items()} == {n: v for n, v in expected.items() if v is not None}
        assert sorted(row.number for row in parsed.rejected) == [n for n, v in expected.items() if v is None]


_FIELDS = st.lists(st.text(alphabet=' a,"\té', max_size=6), min_size=3, max_size=3)


@settings(max_examples=150, deadline=None)
@given(st.lists(_FIELDS, min_size=1, max_size=8), st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
       st.booleans())
def test_written_csv_is_read_back_as_pythons_csv_module_reads_it(rows, quoting, skip):
    """Generated fields (spaces, commas, quotes, tabs) written by Python's csv writer: every path of the reader
    reads each value back as the csv module does; with QUOTE_ALL, or without skip_initial_space, as written."""
    from skewless.pipelines.reading.csv import parse_csv_block, parse_csv_records

    columns = ["c0", "c1", "c2"]
    text = io.StringIO()
    csv.writer(text, quoting=quoting, lineterminator="\n").writerows(rows)
    data = text.getvalue().encode()
    expected = [row for row in csv.reader(io.StringIO(text.getvalue()), skipinitialspace=skip, strict=True)]
    if quoting == csv.QUOTE_ALL or not skip:
        assert expected == rows
    by_block = parse_csv_block(data, columns, ",", skip)
    ((by_record, _),) = list(parse_csv_records(io.BytesIO(data), columns, ",", skip))
    for parsed in (by_block, by_record):
        assert not parsed.rejected
        assert [list(values) for values in zip(*(parsed.batch.column(c).to_pylist() for c in columns))] == expected


def test_a_quoted_leading_space_is_kept_with_and_without_multiline(runs):
    for source in ("csv", "csv-multiline", "r-csv"):
        assert sorted(_vocabulary(runs[source], "state")) == sorted(set(STATES)), source


@pytest.mark.parametrize("text, header, dialect", [
    ("39, State-gov, 77516\n50, Self-emp, 83311\n", False, True),  # the UCI census's ", "
    ("age, workclass\n39, State-gov\n", True, True),
    ("id,state\n1, NJ\n2,NY\n", True, False),  # pandas writes " NJ" unquoted: a value's space
    ("id,state\n1, NJ\n2, NY\n", True, False),  # every value spaced, the header not: still the values'
    ("a,b\n1,2\n", True, False),
    ('1, "x, y"\n2, "z"\n', False, True),  # spaces before opening quotes
    ("\n\n", False, False),  # no line: nothing to skip
], ids=["census", "census-header", "pandas", "pandas-all-spaced", "plain", "quoted", "blank"])
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_skip_initial_space_auto_takes_the_spaces_as_the_files_dialect(tmp_path, text, header, dialect, compressed):
    """`skip_initial_space: auto` (the default) skips the spaces after delimiters only where every field after a
    delimiter in the first lines starts with one, so a value written " NJ" among others is kept."""
    from skewless.config import parse_input
    from skewless.pipelines.reading.csv import CsvFormat

    path = tmp_path / "rows.csv"
    path.write_bytes(gzip.compress(text.encode()) if compressed else text.encode())
    config = parse_input(format="csv", paths=[str(path)], header=header, columns=None if header else ["a", "b"])
    assert CsvFormat().resolved(config, [str(path)]).skip_initial_space is dialect


def test_a_pandas_csv_with_unquoted_leading_spaces_is_served_as_the_job_read_it(tmp_path):
    """pandas' to_csv leaves " NJ" unquoted: the job keeps its space by default (it trimmed it into "NJ", which
    serving, sent " NJ", did not), the run records the rule it read by, and a served row equals the written one."""
    import pandas as pd
    import yaml

    from skewless.layers import TransformLayer
    from skewless.pipelines import run

    states = [" NJ", "NJ", "NY", " ny", "NY ", "NJ"] * 10
    frame = pd.DataFrame({"id": range(len(states)), "state": states, "x": np.arange(len(states)) / 4})
    frame.to_csv(tmp_path / "rows.csv", index=False)
    assert "\n0, NJ,0.0\n" in (tmp_path / "rows.csv").read_text()  # unquoted
    config = {"name": "spaced", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
              "features": {"id": {"transform": "passthrough"}, "state": {"transform": "vocabulary"},
                           "x": {"transform": "z_score"}},
              "output": {"dir": str(tmp_path / "out"), "shards": 1}}
    run_dir = run(config).output_dir
    assert sorted(_vocabulary(run_dir, "state")) == sorted(set(states))
    assert yaml.safe_load(open(f"{run_dir}/config.yaml"))["input"]["skip_initial_space"] is False
    written = written_rows(run_dir)
    served = served_rows(TransformLayer(run_dir), [{"id": i, "state": s, "x": i / 4} for i, s in enumerate(states)])
    assert served["state"] == written["state"]


# ---- item 2: booleans -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, number", [("True", 1), ("FALSE", 0), (" true ", 1), ("false", 0), ("1", 1)])
@pytest.mark.parametrize("kind", ["int", "float"])
def test_boolean_words_are_numbers_wherever_text_is_read_as_one(text, number, kind):
    import pyarrow as pa
    import tensorflow as tf

    from skewless.layers import serialize_raw_examples
    from skewless.schemas.row_checks import parse_text

    parsed = parse_text(pa.array([text]), kind)
    assert parsed.values.to_pylist() == [number] and not parsed.invalid.any()
    dtype = tf.int64 if kind == "int" else tf.float32
    spec = {"b": tf.io.FixedLenFeature([], dtype)}
    served = tf.io.parse_example(tf.constant(serialize_raw_examples([{"b": text}], spec)), spec)["b"].numpy()
    assert served.tolist() == [number]


def test_text_that_only_starts_like_a_boolean_is_not_one():
    import pyarrow as pa

    from skewless.schemas.row_checks import parse_text

    assert parse_text(pa.array(["truely", "T", "yes", "falsey"]), "int").invalid.all()


# ---- item 7: a python source's lists --------------------------------------------------------------------------

def test_a_python_sources_lists_are_the_jsonl_lists(runs):
    ours, theirs = written_by_id(runs["python"]), written_by_id(runs["jsonl"])
    assert ours == theirs
    expected = sorted({tag for row in logical_rows() for tag in present(row)["tags"]})
    assert sorted(_vocabulary(runs["python"], "tags")) == expected


def test_a_list_in_a_python_sources_single_value_column_is_quarantined(tmp_path):
    from skewless.pipelines import run
    from run_output import quarantined

    config = job_config("python", tmp_path)
    config["input"]["generator"] = "edge_rows:rows_with_a_list_in_state"
    config["output"]["max_bad_fraction"] = 0.5
    result = run(config)
    assert result.rows["quarantined"] == 1
    (reason,) = quarantined(result.output_dir).values()
    assert reason.startswith("state:") and "2 values" in reason


# ---- item 5: `skewless predict` reads rows as `apply` and the job do -------------------------------------------

@pytest.fixture(scope="module")
def scored(runs, tmp_path_factory):
    """The R-written run's export scores its own R-written file with `predict`; `apply` reads the same file."""
    import keras

    from skewless.layers import export_serving_model, model_inputs
    from skewless.pipelines import apply, predict

    folder = tmp_path_factory.mktemp("scored")
    run_dir = runs["r-csv"]
    keras.utils.set_random_seed(43)
    inputs, encoded = model_inputs(run_dir, features=["flag", "ok", "state", "tags", "x"])
    export = export_serving_model(run_dir, keras.Model(inputs, keras.layers.Dense(1)(encoded)), folder / "export")
    path = folder / "new.csv"
    write_csv(path, r_style=True)
    predicted = predict(str(export), [str(path)], str(folder / "predicted"), keys=["id"])
    applied = apply(run_dir, str(folder / "applied"), inputs=[str(path)], one_split=True)
    return {"export": export, "path": path, "predicted": predicted, "applied": applied}


def _rows_as_pandas_reads_them(path) -> list[dict]:
    """The R-written file read without the job: pandas with the run's NA tokens, lists split at the run's
    delimiter without their missing items."""
    import pandas as pd

    frame = pd.read_csv(path, na_values=NA_TOKENS, keep_default_na=False)
    rows = []
    for record in frame.to_dict("records"):
        row = {name: None if isinstance(value, float) and math.isnan(value) else value
               for name, value in record.items()}
        row["tags"] = [tag for tag in (row["tags"] or "").split(LIST_DELIMITER) if tag not in ("", *NA_TOKENS)]
        rows.append(row)
    return rows


def _predictions(output_dir) -> dict[int, float]:
    import glob

    found = {}
    for path in sorted(glob.glob(f"{output_dir}/predictions-*.csv")):
        with open(path, newline="") as handle:
            found |= {int(line["id"]): float(line["output_0"]) for line in csv.DictReader(handle)}
    return found


def test_predict_scores_every_row_apply_writes(scored):
    assert scored["predicted"].rows == {"read": len(logical_rows()), "written": len(logical_rows()), "quarantined": 0}
    assert scored["applied"].rows == {"read": len(logical_rows()), "written": {"all": len(logical_rows())},
                                      "quarantined": 0}


def test_predict_equals_serving_default_on_the_rows_as_pandas_reads_them(scored):
    import tensorflow as tf

    from skewless.layers import read_spec_file, serialize_raw_examples

    rows = _rows_as_pandas_reads_them(scored["path"])
    assert any(row["x"] is None for row in rows) and any(len(row["tags"]) > 1 for row in rows)
    examples = tf.constant(serialize_raw_examples(rows, read_spec_file(scored["export"])["raw"]))
    served = tf.saved_model.load(str(scored["export"])).signatures["serving_default"](examples=examples)
    expected = dict(zip((row["id"] for row in rows), served["output_0"].numpy()[:, 0].astype(np.float32)))
    found = _predictions(scored["predicted"].output_dir)
    mismatched = [i for i in expected if i in found and np.float32(found[i]) != expected[i]]
    assert not mismatched, [(i, found[i], expected[i]) for i in mismatched[:3]]
    assert sorted(found) == sorted(expected)


def test_apply_writes_what_the_export_transforms_from_the_same_rows(scored):
    import tensorflow as tf

    from skewless.layers import read_spec_file, serialize_raw_examples

    rows = _rows_as_pandas_reads_them(scored["path"])
    examples = tf.constant(serialize_raw_examples(rows, read_spec_file(scored["export"])["raw"]))
    transformed = tf.saved_model.load(str(scored["export"])).signatures["transform_features"](examples=examples)
    written = written_by_id(scored["applied"].output_dir)
    for name, values in transformed.items():
        got = dict(zip((row["id"] for row in rows), python_rows(values)))
        mismatched = [i for i in written if got[i] != written[i][name]]
        assert not mismatched, (name, mismatched[:3])
