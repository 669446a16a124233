"""CSV framing: a byte order mark, duplicate or empty column names, quoted fields holding line breaks."""

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from run_output import quarantine_rows

from skewless.config import load_config
from skewless.errors import ConfigError, InputError
from skewless.pipelines.reading import input_config, read_batches
from skewless.pipelines.reading.csv import parse_header


def job_config(folder, path, **input_options) -> dict:
    return {
        "name": "csv",
        "input": {"format": "csv", "paths": [str(path)], "header": True, **input_options},
        "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"},
                     "note": {"transform": "hash", "hash_buckets": 8}},
        "output": {"dir": str(folder / "out"), "shards": 1, "max_bad_fraction": 0.5},
    }


def written_ids(output_dir) -> list[int]:
    import tensorflow as tf

    files = sorted(glob.glob(os.path.join(output_dir, "data", "*.tfrecord*")))
    compression = "GZIP" if files[0].endswith(".gz") else ""
    ids = []
    for batch in tf.data.TFRecordDataset(files, compression_type=compression).batch(1000):
        ids.extend(tf.io.parse_example(batch, {"id": tf.io.FixedLenFeature([], tf.int64)})["id"].numpy().tolist())
    return sorted(ids)


def test_byte_order_mark_is_no_part_of_the_first_column_name(tmp_path):
    from skewless.pipelines import run
    from skewless.schemas.infer import infer_schema

    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffid,x,note\n".encode() + b"".join(b"%d,%d.5,n%d\n" % (i, i, i % 3) for i in range(20)))
    assert parse_header(path.read_bytes().split(b"\n")[0], ",", True, "f:1") == ["id", "x", "note"]
    config = input_config([str(path)], header=True)
    inferred = infer_schema(config, read_batches(config))
    assert [feature.name for feature in inferred.schema.feature] == ["id", "x", "note"]
    result = run(job_config(tmp_path, path))
    assert written_ids(result.output_dir) == list(range(20))


@pytest.mark.parametrize("text, rows", [("\ufeff", []), ("\ufeff\n1,2\n", [("1", "2")]), ("\ufeff  \n\n3,4", [("3", "4")])])
def test_a_line_holding_only_a_byte_order_mark_is_blank(tmp_path, text, rows):
    # pyarrow drops a byte order mark from the start of what it reads, and once failed on nothing left to read
    path = tmp_path / "bom.csv"
    path.write_bytes(text.encode())
    read = [(row["a"], row["b"]) for source in read_batches(input_config([str(path)], columns="a,b"))
            for row in source.batch.to_pylist()]
    assert read == rows


@pytest.mark.parametrize("header, what", [(b"id,x,id", "names id more than once"),
                                          (b"id,,x", "has an empty column name")])
def test_duplicate_or_empty_header_names_are_one_line_exit_2(tmp_path, header, what):
    path = tmp_path / "dup.csv"
    path.write_bytes(header + b"\n1,2.5,3\n")
    with pytest.raises(InputError, match=f"^{path}:1: the CSV header {what}$"):
        parse_header(header, ",", True, f"{path}:1")
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(job_config(tmp_path, path)))
    done = subprocess.run([sys.executable, "-m", "skewless", "run", str(config)], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("skewless: error")]
    assert len(errors) == 1 and f"{path}:1: the CSV header {what}" in errors[0], done.stderr


def test_a_csv_with_only_its_header_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "header-only.csv"
    path.write_bytes(b"id,x,note\n")
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(job_config(tmp_path, path)))
    done = subprocess.run([sys.executable, "-m", "skewless", "run", str(config)], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("skewless: error")]
    assert errors == [f"skewless: error: {path}: holds no rows"], done.stderr
    assert not (tmp_path / "out").exists()


def test_duplicate_input_columns_are_refused_by_config_validation(tmp_path):
    config = job_config(tmp_path, tmp_path / "x.csv", header=False, columns=["id", "x", "note", "x"])
    with pytest.raises(ConfigError, match="input.columns names x more than once"):
        load_config(config)


# ids 0..29; rows 5 and 17 hold a note with line breaks inside its quotes
def multiline_csv(folder):
    lines = [b"id,x,note"]
    for i in range(30):
        note = b'"first line\nsecond, line"' if i == 5 else b'"a\r\nb ""quoted""\nc"' if i == 17 else b"n%d" % (i % 4)
        lines.append(b"%d,%d.25,%s" % (i, i % 6, note))
    path = folder / "multi.csv"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_multiline_reads_quoted_line_breaks_as_one_row(tmp_path):
    from skewless.pipelines import run
    from skewless.schemas.infer import infer_schema

    path = multiline_csv(tmp_path)
    config = input_config([str(path)], header=True)
    config = config.model_copy(update={"multiline": True})
    batches = list(read_batches(config, batch_rows=7))
    notes = [note for batch in batches for note in batch.batch.column("note").to_pylist()]
    numbers = np.concatenate([batch.numbers for batch in batches]).tolist()
    assert len(notes) == 30 and notes[5] == "first line\nsecond, line" and notes[17] == 'a\nb "quoted"\nc'
    assert numbers[:7] == [2, 3, 4, 5, 6, 7, 9] and numbers[-1] == 34  # a row is numbered by its first line
    assert infer_schema(config, read_batches(config)).rows == 30

    result = run(job_config(tmp_path, path, multiline=True))
    assert quarantine_rows(result.output_dir) == []
    assert written_ids(result.output_dir) == list(range(30))


def test_without_multiline_a_quoted_line_break_is_quarantined_with_a_hint(tmp_path):
    from skewless.pipelines import run

    path = multiline_csv(tmp_path)
    result = run(job_config(tmp_path, path))
    bad = quarantine_rows(result.output_dir)
    # the pieces of rows 5 and 17 are quarantined, never written as rows of their own
    assert written_ids(result.output_dir) == sorted(set(range(30)) - {5, 17})
    hinted = [row for row in bad if row["reason"].endswith("(a quoted field holding a line break? "
                                                           "set input.multiline: true)")]
    assert {row["line"] for row in bad} == {7, 8, 20, 21, 22}  # every line of rows 5 and 17
    assert {row["line"] for row in hinted} == {7, 20}  # where the quoted field opens
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        rows = json.load(handle)["rows"]
    assert rows["read"] == sum(rows["written"].values()) + rows["quarantined"] == 28 + len(bad)
