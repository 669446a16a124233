"""`skewless schema validate` and `skewless run` read files through one reading layer, so they agree on them.

Each case is a file the two once read differently (gzip told by the name in the job, by the bytes in
the schema commands; the header line; a TFRecord cut short, which tf.data read to its end silently).
"""

import gzip
import json
import re

import pytest
from run_output import quarantine_rows
from typer.testing import CliRunner

from skewless.cli import app
from skewless.config import load_config
from skewless.pipelines.plan.plan import plan
from skewless.pipelines.reading import input_config, read_batches
from skewless.pipelines.reading.sources import RowReader
from skewless.schemas import write_schema
from skewless.schemas.validate import validate

SCHEMA = """
feature { name: "id" type: INT presence { min_fraction: 1 } value_count { min: 1 max: 1 } }
feature { name: "x" type: FLOAT presence { min_fraction: 1 } value_count { min: 1 max: 1 } }
feature { name: "note" type: BYTES presence { min_fraction: 1 } value_count { min: 1 max: 1 } }
"""
ROWS = 20
BAD_LINES = {6: {"wrong_field_count"}, 10: {"wrong_type"}, 13: {"bad_utf8"}}  # lines of the file with the header on line 1


def _csv_lines() -> list[bytes]:
    lines = []
    for i in range(ROWS):
        line = f"{i},{i}.5,n{i % 3}".encode()
        number = i + 2
        if number == 6:
            line = f"{i},{i}.5".encode()
        elif number == 10:
            line = f"{i},abc,n1".encode()
        elif number == 13:
            line = f"{i},1.5,n\xfe".encode("latin-1")
        lines.append(line)
    return lines


def _schema_file(folder) -> str:
    from google.protobuf import text_format
    from tensorflow_metadata.proto.v0 import schema_pb2

    path = folder / "schema.pbtxt"
    write_schema(text_format.Parse(SCHEMA, schema_pb2.Schema()), str(path))
    return str(path)


def _job_config(folder, paths: list[str], **input_options) -> dict:
    return {
        "name": "agree",
        "schema": _schema_file(folder),
        "input": {"format": "csv", "paths": paths, "header": True, **input_options},
        "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"},
                     "note": {"transform": "hash", "hash_buckets": 8}},
        "output": {"dir": str(folder / "out"), "shards": 2, "max_bad_fraction": 0.5},
    }


def _schema_verdicts(folder, paths: list[str]) -> tuple[int, dict[int, set[str]]]:
    """(good rows, bad line -> kinds of problem) as `schema validate` judges the files."""
    from skewless.schemas import load_schema

    report = validate(read_batches(input_config(paths, header=True)), load_schema(_schema_file(folder)),
                      max_examples=1000)
    bad: dict[int, set[str]] = {}
    for anomaly in report.anomalies:
        for where, _ in anomaly.examples:
            bad.setdefault(int(where.rsplit(":", 1)[1]), set()).add(anomaly.kind)
    return report.rows - report.bad_rows, bad


def _job_verdicts(config: dict) -> tuple[int, set[int]]:
    """(good rows, bad lines) as the job's plan cuts the input into units and its reader reads them."""
    loaded = load_config(config)
    job_plan = plan(loaded)
    reader = RowReader.for_job(loaded, job_plan.input_config, job_plan.columns)
    good, bad = 0, set()
    for unit in job_plan.units:
        for chunk in reader.read(unit):
            good += chunk.table.num_rows
            bad.update(row.line for row in chunk.bad)
    return good, bad


def _write(path, header: bytes, gzipped: bool) -> None:
    data = header + b"\n".join(_csv_lines()) + b"\n"
    path.write_bytes(gzip.compress(data, mtime=0) if gzipped else data)


@pytest.mark.parametrize(
    "name, header, gzipped",
    [
        ("gzip_without_suffix.csv", b"id,x,note\n", True),
        ("plain_with_suffix.csv.gz", b"id,x,note\n", False),
        ("plain.csv", b"id,x,note\n", False),
    ],
)
def test_validate_and_the_job_find_the_same_bad_rows(tmp_path, name, header, gzipped):
    path = tmp_path / name
    _write(path, header, gzipped)
    good, bad = _schema_verdicts(tmp_path, [str(path)])
    assert good == ROWS - len(BAD_LINES)
    assert bad == BAD_LINES
    assert _job_verdicts(_job_config(tmp_path, [str(path)])) == (good, set(bad))


def test_a_header_after_blank_lines_with_a_byte_order_mark_is_the_header_for_both(tmp_path):
    path = tmp_path / "quirky.csv"
    _write(path, "\n \n\ufeffid,x,note\n".encode(), gzipped=False)
    good, bad = _schema_verdicts(tmp_path, [str(path)])
    shifted = {line + 2: kinds for line, kinds in BAD_LINES.items()}  # two blank lines before the header
    assert good == ROWS - len(BAD_LINES) and bad == shifted
    assert _job_verdicts(_job_config(tmp_path, [str(path)])) == (good, set(bad))


def test_the_job_quarantines_the_rows_validate_reports_in_a_gzip_file_without_gz(tmp_path):
    from skewless.pipelines import run

    path = tmp_path / "data.csv"
    _write(path, b"id,x,note\n", gzipped=True)
    good, bad = _schema_verdicts(tmp_path, [str(path)])
    result = run(_job_config(tmp_path, [str(path)]))
    quarantined = [row["line"] for row in quarantine_rows(result.output_dir)]
    assert sorted(quarantined) == sorted(bad) == sorted(BAD_LINES)
    assert sum(result.rows["written"].values()) == good


def _one_line_errors(tmp_path, inputs: list[str], record_format: str | None = None) -> tuple[str, str]:
    """stderr of `skewless schema validate` and of `skewless run` on the same inputs (both exit 2)."""
    runner = CliRunner()
    schema = _schema_file(tmp_path)
    options = ["--format", record_format] if record_format else ["--header"]
    validated = runner.invoke(app, ["schema", "validate", *inputs, *options, "--schema", schema])
    config = _job_config(tmp_path, inputs)
    if record_format:
        config["input"] = {"format": record_format, "paths": inputs}
    config_path = tmp_path / "job.yaml"
    config_path.write_text(json.dumps(config))
    ran = runner.invoke(app, ["run", str(config_path)])
    assert (validated.exit_code, ran.exit_code) == (2, 2), (validated.output, ran.output)
    # `run` draws its progress on stderr, from its first line (before TensorFlow is imported): the error follows
    ran_error = "\n".join(line for line in ran.stderr.strip().splitlines()
                          if not re.match(r"skewless run \S+( \[|: starting)", line))
    return validated.stderr.strip(), ran_error


def test_a_glob_matching_nothing_is_the_same_one_line_error(tmp_path):
    pattern = str(tmp_path / "nope" / "*.csv")
    validated, ran = _one_line_errors(tmp_path, [pattern])
    assert validated.endswith(f"{pattern}: no input file matches") and ran.endswith(f"{pattern}: no input file matches")
    assert len(validated.splitlines()) == len(ran.splitlines()) == 1


def test_csv_files_with_different_headers_are_the_same_one_line_error(tmp_path):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    _write(first, b"id,x,note\n", gzipped=False)
    _write(second, b"id,note,x\n", gzipped=False)
    validated, ran = _one_line_errors(tmp_path, [str(first), str(second)])
    assert validated == ran
    assert f"{second}: the CSV header names id, note, x, but {first}'s names id, x, note" in ran


def test_a_tfrecord_cut_short_is_the_same_error_naming_record_and_offset(tmp_path):
    import tensorflow as tf

    path = tmp_path / "data.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as writer:
        for i in range(5):
            example = tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i + 0.5])),
                "note": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"n"])),
            }))
            writer.write(example.SerializeToString())
    data = path.read_bytes()
    record_size = len(data) // 5  # all five records have the same size
    path.write_bytes(data[: 3 * record_size + record_size // 2])  # the file ends inside record 4
    validated, ran = _one_line_errors(tmp_path, [str(path)], record_format="tfrecord")
    expected = f"{path}: record 4 at byte {3 * record_size}: the file ends inside it"
    assert expected in validated and expected in ran
