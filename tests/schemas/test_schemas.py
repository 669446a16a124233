"""tf.metadata schemas: loading, inference from CSV / Parquet / TFRecord, validation of dirty data, the CLI."""

from __future__ import annotations

import json
import math
import os
import re

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from google.protobuf import text_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tensorflow_metadata.proto.v0 import schema_pb2
from typer.testing import CliRunner

from example_job import CENSUS, REPO

from skewless.errors import InputError, SchemaError, SkewlessError
from skewless.schemas import load_schema, schema_types, write_schema
from skewless.schemas.infer import infer_schema
from skewless.pipelines.reading import input_config, read_batches
from skewless.pipelines.reading.csv import parse_csv_lines
from skewless.schemas.row_checks import check_batch, parse_text, string_domain_values
from skewless.schemas.validate import validate

CENSUS_SCHEMA = REPO / "schemas" / "census.pbtxt"
CENSUS_DATA = CENSUS
CENSUS_INTS = {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}


def _schema(text: str) -> schema_pb2.Schema:
    return text_format.Parse(text, schema_pb2.Schema())


def _feature(schema: schema_pb2.Schema, name: str) -> schema_pb2.Feature:
    return next(feature for feature in schema.feature if feature.name == name)


def _domain(schema: schema_pb2.Schema, name: str) -> list[str]:
    """An inferred feature's values, from the schema-level string_domain it names (TFDV's layout)."""
    feature = _feature(schema, name)
    assert feature.domain == name and not feature.HasField("string_domain")
    return string_domain_values(feature, schema)


def _shape(feature: schema_pb2.Feature) -> list[int] | None:
    return [dim.size for dim in feature.shape.dim] if feature.HasField("shape") else None


# ------------------------------------------------------------------------------------------ load / write


def test_census_schema_types_and_round_trip(tmp_path):
    schema = load_schema(CENSUS_SCHEMA)
    columns = (
        "age workclass fnlwgt education education-num marital-status occupation relationship race sex "
        "capital-gain capital-loss hours-per-week native-country label"
    ).split()
    expected = {name: "int" if name in CENSUS_INTS else "bytes" for name in columns}
    assert schema_types(schema) == expected
    assert list(schema_types(schema)) == columns  # file order: headerless CSV columns follow it
    assert list(_feature(schema, "label").string_domain.value) == ["<=50K", ">50K"]
    for feature in schema.feature:
        assert feature.presence.min_fraction == 1.0
        assert (feature.value_count.min, feature.value_count.max) == (1, 1)

    copy = tmp_path / "nested" / "copy.pbtxt"
    write_schema(schema, copy)
    assert load_schema(copy) == schema


def test_parse_error_names_file_and_line(tmp_path):
    path = tmp_path / "bad.pbtxt"
    path.write_text('feature {\n  name: "a"\n  typ: INT\n}\n')
    with pytest.raises(SchemaError, match=rf"^{path}:3: .*no field named \"typ\""):
        load_schema(path)
    path.write_text('feature {\n  name: "a"\n  type: INT\n')  # unclosed brace: the error is at the end
    with pytest.raises(SchemaError, match=rf"^{path}:3: "):
        load_schema(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ('feature { name: "a" type: INT }\nfeature { name: "a" type: FLOAT }', "'a' is declared twice"),
        ('feature { name: "a" }', "'a' needs a type of INT, FLOAT or BYTES"),
        ("feature { type: INT }", "feature #1 has no name"),
    ],
)
def test_semantically_bad_schema(tmp_path, text, message):
    path = tmp_path / "s.pbtxt"
    path.write_text(text)
    with pytest.raises(SchemaError, match=message):
        load_schema(path)


def test_missing_and_binary_schema_files(tmp_path):
    with pytest.raises(SchemaError, match=rf"^{tmp_path / 'nope.pbtxt'}: schema file not found"):
        load_schema(tmp_path / "nope.pbtxt")
    path = tmp_path / "binary.pbtxt"
    path.write_bytes(b'feature {\n name: "\xff"\n}')
    with pytest.raises(SchemaError, match=rf"^{path}:2: schema file is not UTF-8"):
        load_schema(path)


# ----------------------------------------------------------------------------------------------- infer


def test_infer_csv_types_presence_and_domains(tmp_path):
    rng = np.random.default_rng(0)
    n = 500
    counts = rng.integers(-50, 50, n)
    ratios = rng.normal(size=n)
    colours = rng.choice(["red", "green", "blue"], n)
    optional = np.where(rng.random(n) < 0.2, "", rng.integers(0, 9, n).astype(str))
    lines = ["id,count,ratio,colour,maybe"]
    lines += [f"user{i}, {c}, {float(r)!r}, {k},{m}" for i, (c, r, k, m) in enumerate(zip(counts, ratios, colours, optional))]
    path = tmp_path / "data.csv"
    path.write_text("\n".join(lines) + "\n\n")  # a trailing blank line is no row

    config = input_config([str(path)], header=True, skip_initial_space=True)  # ", " but before `maybe`: not auto's
    inferred = infer_schema(config, read_batches(config, 128))
    schema = inferred.schema
    assert inferred.rows == n and inferred.rejected == 0
    assert schema_types(schema) == {"id": "bytes", "count": "int", "ratio": "float", "colour": "bytes", "maybe": "int"}
    assert _domain(schema, "colour") == sorted(set(colours))
    assert not _feature(schema, "id").domain  # 500 distinct values in 500 rows
    assert [domain.name for domain in schema.string_domain] == ["colour"]
    for name in ("id", "count", "ratio", "colour"):
        assert _feature(schema, name).presence.min_fraction == 1.0
    maybe = _feature(schema, "maybe")
    assert maybe.presence.min_fraction == 0.0 and maybe.presence.min_count == 1
    # as TFDV: a required scalar has shape [1], an optional one a value_count of 1
    assert all(_shape(_feature(schema, name)) == [1] for name in ("id", "count", "ratio", "colour"))
    assert (maybe.value_count.min, maybe.value_count.max) == (1, 1) and not maybe.HasField("shape")
    # The inferred schema accepts the data it came from.
    assert validate(read_batches(config), schema).clean


def test_infer_widens_int_to_float_across_batches(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("\n".join(["1"] * 10 + ["2.5"] + ["x"] * 0) + "\n")
    config = input_config([str(path)], columns="v")
    inferred = infer_schema(config, read_batches(config, 4))
    assert schema_types(inferred.schema) == {"v": "float"}


def test_infer_parquet_lists_and_nulls(tmp_path):
    rng = np.random.default_rng(1)
    n = 300
    lengths = rng.integers(1, 5, n)
    table = pa.table(
        {
            "fixed": pa.array([[int(v) for v in rng.integers(0, 10, 3)] for _ in range(n)], pa.list_(pa.int64())),
            "ragged": pa.array([rng.normal(size=k).tolist() for k in lengths], pa.list_(pa.float32())),
            "city": pa.array(rng.choice(["Oslo", "Lima"], n)).dictionary_encode(),
            "score": pa.array([None if i % 10 == 0 else float(i) for i in range(n)], pa.float64()),
        }
    )
    path = tmp_path / "data.parquet"
    pq.write_table(table, path, row_group_size=64)

    config = input_config([str(path)])
    schema = infer_schema(config, read_batches(config, 100)).schema
    assert schema_types(schema) == {"fixed": "int", "ragged": "float", "city": "bytes", "score": "float"}
    fixed, ragged = _feature(schema, "fixed"), _feature(schema, "ragged")
    assert _shape(fixed) == [3] and not fixed.HasField("value_count")
    assert (ragged.value_count.min, ragged.value_count.max) == (int(lengths.min()), 0)
    assert _shape(_feature(schema, "score")) is None and _shape(_feature(schema, "city")) == [1]
    assert _domain(schema, "city") == ["Lima", "Oslo"]
    assert _feature(schema, "score").presence.min_fraction == 0.0
    assert _feature(schema, "city").presence.min_fraction == 1.0


def _example(**features) -> bytes:
    import tensorflow as tf

    feature = {}
    for name, values in features.items():
        if isinstance(values[0], bytes):
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        elif isinstance(values[0], float):
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        else:
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _write_tfrecord(path: Path, records: list[bytes], gzip: bool = False) -> None:
    import tensorflow as tf

    with tf.io.TFRecordWriter(str(path), options="GZIP" if gzip else None) as writer:
        for record in records:
            writer.write(record)


@pytest.mark.parametrize("gzip", [False, True])
def test_infer_tfrecord(tmp_path, gzip):
    records = []
    for i in range(200):
        features = {"n": [i], "x": [i / 7.0, 1.5], "tag": [b"even" if i % 2 == 0 else b"odd"]}
        if i % 4:
            features["note"] = [f"free text {i}".encode()]
        records.append(_example(**features))
    path = tmp_path / ("data.tfrecord.gz" if gzip else "data.tfrecord")
    _write_tfrecord(path, records, gzip)

    config = input_config([str(path)])
    inferred = infer_schema(config, read_batches(config, 64))
    schema = inferred.schema
    assert inferred.rows == 200
    assert schema_types(schema) == {"n": "int", "x": "float", "tag": "bytes", "note": "bytes"}
    x = _feature(schema, "x")
    assert _shape(x) == [2]
    assert _domain(schema, "tag") == ["even", "odd"]
    note = _feature(schema, "note")
    assert note.presence.min_fraction == 0.0 and not note.domain and _shape(note) is None
    assert validate(read_batches(input_config([str(path)])), schema).clean


# --------------------------------------------------------------------------------------------- validate

_DIRTY_SCHEMA = """
feature { name: "age" type: INT presence { min_fraction: 1 } value_count { min: 1 max: 1 } }
feature { name: "city" type: BYTES presence { min_fraction: 1 } value_count { min: 1 max: 1 } }
feature { name: "income" type: FLOAT presence { min_fraction: 0.5 } float_domain { min: 0 } }
feature { name: "label" type: BYTES presence { min_fraction: 1 } domain: "labels" }
string_domain { name: "labels" value: "yes" value: "no" }
"""


def _dirty_csv(path: Path) -> dict[str, list[int]]:
    """Writes a CSV with known defects; returns defect -> the 1-based lines that have it."""
    good = ["31,Oslo,1000.5,yes", "45, Lima ,,no", '52,"Rio, RJ",20,no']
    bad = {
        "short": ["31,Oslo,10"],
        "long": ["31,Oslo,10,yes,extra", "1,2,3,4,5,6"],
        "text_in_int": ["thirty,Oslo,10,yes", "3.5,Oslo,10,no"],
        "beyond_int64": ["99999999999999999999,Oslo,1,no"],
        "empty_required": [",Oslo,10,yes", "40,,10,no"],
        "outside_domain": ["40,Oslo,10,maybe"],
        "negative_income": ["40,Oslo,-3,no"],
        "bad_utf8": ["40,Os\xfflo,10,no"],  # written as latin-1 below: \xff is not UTF-8
        "unbalanced_quote": ['40,"Oslo,10,no'],
    }
    lines: list[str] = []
    where: dict[str, list[int]] = {name: [] for name in bad}
    for round_ in range(3):
        for line in good:
            lines.append(line)
        lines.append("")
        for name, rows in bad.items():
            for row in rows:
                lines.append(row)
                where[name].append(len(lines))
    path.write_bytes(("age,city,income,label\n" + "\n".join(lines) + "\n").encode("latin-1"))
    # +1: the header is line 1
    return {name: [line + 1 for line in numbers] for name, numbers in where.items()}


def test_validate_dirty_csv_counts_every_defect(tmp_path):
    path = tmp_path / "dirty.csv"
    lines = _dirty_csv(path)
    report = validate(read_batches(input_config([str(path)], header=True)), _schema(_DIRTY_SCHEMA), max_examples=2)

    assert report.count("wrong_field_count") == len(lines["short"]) + len(lines["long"]) == 9
    assert report.count("wrong_type", "age") == len(lines["text_in_int"]) == 6
    assert report.count("unrepresentable", "age") == len(lines["beyond_int64"]) == 3
    assert report.count("missing_value", "age") == 3
    assert report.count("missing_value", "city") == 3
    assert report.count("missing_value", "income") == 0  # optional: min_fraction 0.5
    assert report.count("out_of_domain", "label") == 3
    assert report.count("out_of_domain", "income") == 3
    assert report.count("bad_utf8") == 3
    assert report.count("malformed_csv") == 3
    assert report.count("unexpected_column") == 0
    bad_lines = sum(len(numbers) for numbers in lines.values())
    assert report.bad_rows == bad_lines == 36
    assert report.rows == bad_lines + 9

    by_kind = {(a.kind, a.feature): a for a in report.anomalies}
    examples = by_kind[("wrong_type", "age")].examples
    assert examples == [
        (f"{path}:{lines['text_in_int'][0]}", "'thirty' is not an int"),
        (f"{path}:{lines['text_in_int'][1]}", "'3.5' is not an int"),
    ]
    short = by_kind[("wrong_field_count", None)].examples[0]
    assert short == (f"{path}:{lines['short'][0]}", "expected 4 fields, found 3")
    domain = by_kind[("out_of_domain", "label")].examples[0]
    assert domain == (f"{path}:{lines['outside_domain'][0]}", "'maybe' is not in the domain (yes, no)")


def test_validate_reports_unexpected_and_absent_columns(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("age,extra\n1,a\n2,b\n")
    schema = _schema('feature { name: "age" type: INT }\nfeature { name: "city" type: BYTES presence { min_fraction: 1 } }')
    report = validate(read_batches(input_config([str(path)], header=True)), schema)
    assert report.count("unexpected_column", "extra") == 2
    assert report.count("missing_value", "city") == 2
    assert report.bad_rows == 2


def test_check_batch_on_typed_and_list_columns():
    schema = _schema(
        """
        feature { name: "n" type: INT presence { min_fraction: 1 } int_domain { min: 0 max: 10 } }
        feature { name: "v" type: FLOAT value_count { min: 2 max: 2 } }
        feature { name: "s" type: BYTES presence { min_fraction: 1 } string_domain { value: "a" } }
        """
    )
    batch = pa.RecordBatch.from_pydict(
        {
            "n": pa.array([1.0, 2.5, None, 11.0, 4.0]),  # floats: whole ones are ints
            "v": pa.array([[1.0, 2.0], [1.0], None, [], [3.0, 4.0]], pa.large_list(pa.float32())),
            "s": pa.array([[b"a"], [b"a"], [b"a"], [b"b"], [b"a", b"zz"]], pa.large_list(pa.large_binary())),
        }
    )
    problems = {row: sorted(str(p) for p in found) for row, found in check_batch(batch, schema).items()}
    assert problems == {
        1: ["n: 2.5 is not an int", "v: has 1 values, expected 2..2"],
        2: ["n: required value is missing"],
        3: ["n: 11 is above the domain maximum 10", "s: 'b' is not in the domain (a)"],
        4: ["s: 'zz' is not in the domain (a)"],
    }
    # A feature the job fills with a default may be missing.
    assert 2 not in check_batch(batch, schema, optional={"n"})


def test_check_batch_counts_values_against_a_fixed_shape():
    schema = _schema('feature { name: "v" type: FLOAT shape { dim { size: 2 } } }')
    batch = pa.RecordBatch.from_pydict(
        {"v": pa.array([[1.0, 2.0], [1.0], [1.0, 2.0, 3.0]], pa.large_list(pa.float32()))})
    problems = {row: [str(p) for p in found] for row, found in check_batch(batch, schema).items()}
    why = "(shape [2]; a missing value is not counted)"
    assert problems == {1: [f"v: has 1 values, expected 2..2 {why}"], 2: [f"v: has 3 values, expected 2..2 {why}"]}


def test_the_job_reads_an_inferred_schema_in_tfdv_layout(tmp_path):
    """Infer, write, load, run: the job takes the types and judges rows by the domain the feature names."""
    from skewless.pipelines import run

    cities = ["paris", "oslo", "rome"]
    clean = tmp_path / "clean.csv"
    clean.write_text("n,city\n" + "".join(f"{i},{cities[i % 3]}\n" for i in range(60)))
    schema_path = tmp_path / "inferred.pbtxt"
    config = input_config([str(clean)], header=True)
    write_schema(infer_schema(config, read_batches(config)).schema, schema_path)
    assert 'domain: "city"' in schema_path.read_text() and "shape {" in schema_path.read_text()
    dirty = tmp_path / "dirty.csv"
    dirty.write_text(clean.read_text() + "60,atlantis\n")
    result = run({
        "name": "inferred",
        "input": {"format": "csv", "paths": [str(dirty)], "header": True},
        "schema": str(schema_path),
        "features": {"n": {"transform": "z_score"}, "city": {"transform": "vocabulary"}},
        "output": {"dir": str(tmp_path / "out"), "max_bad_fraction": 0.5},
    })
    assert result.rows["read"] == 61 and result.rows["quarantined"] == 1
    assert result.features["n"]["type"] == "int"
    (line,) = (tmp_path / "out" / "quarantine").glob("*.jsonl")
    assert "'atlantis' is not in the domain (oslo, paris, rome)" in line.read_text()


def test_parse_text_grammar():
    text = pa.array([" 12 ", "+3", "-0", "0x10", "1e3", "", None, "9" * 20, "1_000"])
    ints = parse_text(text, "int")
    assert ints.values.to_pylist() == [12, 3, 0, None, None, None, None, None, None]
    assert ints.missing.tolist() == [False] * 5 + [True, True, False, False]
    assert ints.unrepresentable.tolist() == [False] * 7 + [True, False]  # beyond int64
    floats = parse_text(pa.array(["1e3", ".5", "-inf", "nan", "1.2.3", "0x10", "1e400", "3.5e38"]), "float")
    assert floats.invalid.tolist() == [False, False, False, False, True, True, False, False]
    assert floats.missing.tolist() == [False, False, False, True, False, False, False, False]  # NaN: no value
    assert floats.unrepresentable.tolist() == [False, False, True, False, False, False, True, True]
    assert floats.values.to_pylist() == [1000.0, 0.5] + [None] * 6
    as_missing = parse_text(pa.array(["inf", "1e400", "2"]), "float", nonfinite="missing")
    assert as_missing.missing.tolist() == [True, True, False] and not as_missing.unrepresentable.any()


def test_parse_csv_lines_keeps_line_numbers():
    lines = [b"a,b", b"", b"c", b'"d,e",f', b"g,h,i", b"j,\xfe", b"k\rl,m", b"n,o"]
    parsed = parse_csv_lines(lines, range(10, 18), ["x", "y"])
    assert parsed.batch.to_pydict() == {"x": ["a", "d,e", "n"], "y": ["b", "f", "o"]}
    assert parsed.numbers.tolist() == [10, 13, 17]
    assert [(row.number, row.problem.kind) for row in parsed.rejected] == [
        (12, "wrong_field_count"),
        (14, "wrong_field_count"),
        (15, "bad_utf8"),
        (16, "malformed_csv"),
    ]


def test_corrupt_tfrecord_names_file_and_offset(tmp_path):
    path = tmp_path / "data.tfrecord"
    _write_tfrecord(path, [_example(n=[i]) for i in range(50)])
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=rf"^{path}: record \d+ at byte \d+: "):
        list(read_batches(input_config([str(path)]), batch_rows=8))


def test_undecodable_record_is_one_bad_row(tmp_path):
    path = tmp_path / "data.tfrecord"
    _write_tfrecord(path, [_example(n=[1]), b"\x0a\x03junk", _example(n=[2]), _example(n=[b"x"])])
    report = validate(read_batches(input_config([str(path)])), _schema('feature { name: "n" type: INT }'))
    assert report.count("undecodable") == 1
    assert report.count("wrong_type", "n") == 1
    assert report.rows == 4 and report.bad_rows == 2
    assert [a.examples[0][0] for a in report.anomalies] == [f"{path}#2", f"{path}#4"]


# -------------------------------------------------------------------------------------------------- CLI


def test_cli_exit_codes(tmp_path):
    from skewless.cli import app

    runner = CliRunner()
    clean = tmp_path / "clean.csv"
    clean.write_text("age,city,income,label\n31,Oslo,1.5,yes\n40,Lima,,no\n")
    dirty = tmp_path / "dirty.csv"
    _dirty_csv(dirty)
    schema_path = tmp_path / "s.pbtxt"
    write_schema(_schema(_DIRTY_SCHEMA), schema_path)

    result = runner.invoke(app, ["schema", "validate", str(clean), "--header", "--schema", str(schema_path)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["schema", "validate", str(dirty), "--header", "--schema", str(schema_path)])
    assert result.exit_code == 1
    assert "wrong number of CSV fields" in result.output and f"{dirty}:" in result.output
    result = runner.invoke(app, ["schema", "validate", str(dirty), "--header", "--schema", str(schema_path), "--json"])
    assert result.exit_code == 1
    shown = json.loads(result.stdout)
    # the JSON holds what validate() found: the same counts per anomaly, the same examples
    report = validate(read_batches(input_config([str(dirty)], header=True)), _schema(_DIRTY_SCHEMA))
    assert (shown["rows"], shown["bad_rows"], shown["clean"]) == (report.rows, report.bad_rows, False)
    assert [(a["kind"], a["feature"], a["rows"]) for a in shown["anomalies"]] == [
        (a.kind, a.feature, a.rows) for a in report.anomalies]
    assert [[(e["where"], e["detail"]) for e in a["examples"]] for a in shown["anomalies"]] == [
        [tuple(e) for e in a.examples] for a in report.anomalies]
    result = runner.invoke(app, ["schema", "validate", str(clean), "--header", "--schema", str(schema_path), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["clean"] is True
    result = runner.invoke(app, ["schema", "validate", str(clean), "--header", "--schema", str(tmp_path / "no")])
    assert result.exit_code == 2

    out = tmp_path / "inferred.pbtxt"
    result = runner.invoke(app, ["schema", "infer", str(clean), "--header", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert schema_types(load_schema(out)) == {"age": "int", "city": "bytes", "income": "float", "label": "bytes"}
    result = runner.invoke(app, ["schema", "infer", str(tmp_path / "none-*.csv")])
    assert result.exit_code == 2


# ------------------------------------------------------------------------------------ property tests

_SCHEMA_FOR_RANDOM = _schema(
    'feature { name: "a" type: INT presence { min_fraction: 1 } }\n'
    'feature { name: "b" type: BYTES string_domain { value: "x" } }\n'
    'feature { name: "c" type: FLOAT }'
)
_CSV_ALPHABET = st.sampled_from(list(',"\r\t ;0123456789.-+eExab\\\x00\xe9') + ["\u2028", "\ufeff"])


def _run_schema_tools(path: Path, fmt: str, header: bool = False) -> None:
    """infer and validate may reject the file, but only with the project's own errors."""
    config = input_config([str(path)], format=fmt, header=header, columns=None if header else "a,b,c")
    try:
        infer_schema(config, read_batches(config, 3))
    except SkewlessError:
        pass
    try:
        validate(read_batches(config, 3), _SCHEMA_FOR_RANDOM)
    except SkewlessError:
        pass


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(st.text(_CSV_ALPHABET, max_size=20), max_size=12),
    encoding=st.sampled_from(["utf-8", "latin-1"]),
    header=st.booleans(),
)
def test_random_csv_lines_give_skewless_errors_only(tmp_path, lines, encoding, header):
    path = tmp_path / "random.csv"
    path.write_bytes("\n".join(lines).encode(encoding, errors="replace"))
    _run_schema_tools(path, "csv", header)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200), fmt=st.sampled_from(["tfrecord", "csv", "parquet"]))
def test_random_bytes_give_skewless_errors_only(tmp_path, data, fmt):
    path = tmp_path / "random.bin"
    path.write_bytes(data)
    _run_schema_tools(path, fmt)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(st.binary(max_size=40), max_size=6))
def test_random_records_give_skewless_errors_only(tmp_path, records):
    """Valid TFRecord framing around random payloads: the records must be judged, not crash the reader."""
    path = tmp_path / "random.tfrecord"
    _write_tfrecord(path, records)
    _run_schema_tools(path, "tfrecord")


# ------------------------------------------------------------------------------------------------ census


@pytest.mark.census
@pytest.mark.skipif(not CENSUS_DATA.exists(), reason="needs ../shared/data/census/adult.data")
def test_census_validates_clean_and_infers_same_types():
    schema = load_schema(CENSUS_SCHEMA)
    config = input_config([str(CENSUS_DATA)], columns=list(schema_types(schema)))
    report = validate(read_batches(config), schema)
    assert report.clean, report.anomalies
    assert report.rows == 32_561 and report.bad_rows == 0
    inferred = infer_schema(config, read_batches(config))
    assert inferred.rows == 32_561
    assert schema_types(inferred.schema) == schema_types(schema)
    assert _domain(inferred.schema, "label") == ["<=50K", ">50K"]


_NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(width=32).map(lambda x: f"{x:.9g}"),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(["1e400", "-1e400", "3.5e38", "NaN", "-inf", "Infinity", " 7 ", "+3", "1_0", "0x10", "12abc", "."]),
    st.text(st.sampled_from(list("0123456789.eE+-naifNI x")), max_size=8),
)


def _oracle(text: str, kind: str) -> str:
    """What a number's text must be, from Python's own parsers: value, missing, invalid or unrepresentable."""
    stripped = text.strip()
    if not stripped:
        return "missing"
    if kind == "int":
        if not re.fullmatch(r"[+-]?[0-9]+", stripped):
            return "invalid"
        return "value" if -(2**63) <= int(stripped) < 2**63 else "unrepresentable"
    if "_" in stripped or not re.fullmatch(r"[+-]?[0-9a-zA-Z.]+([eE][+-]?[0-9]+)?", stripped):
        return "invalid"
    try:
        number = float(stripped)
    except ValueError:
        return "invalid"
    if math.isnan(number):
        return "missing"
    return "value" if abs(number) <= float(np.finfo(np.float32).max) else "unrepresentable"


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(_NUMBER_TEXT, min_size=1, max_size=20), kind=st.sampled_from(["int", "float"]))
def test_numeric_strings_parse_like_python_and_fit_their_type(texts, kind):
    """What parses, what is missing (NaN, blank), what is quarantined as not a number or beyond its type."""
    parsed = parse_text(pa.array(texts), kind)
    got = np.select([parsed.missing, parsed.invalid, parsed.unrepresentable], ["missing", "invalid", "unrepresentable"],
                    "value")
    assert got.tolist() == [_oracle(text, kind) for text in texts]
    values = parsed.values.to_pylist()
    for text, state, value in zip(texts, got, values):
        if state == "value":
            assert value == (int(text.strip()) if kind == "int" else float(text.strip()))
            assert kind == "int" or math.isfinite(value)
        else:
            assert value is None
