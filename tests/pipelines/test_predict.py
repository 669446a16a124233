"""`skewless predict`: RunInference on an export's serving_default over raw data (issue 21, item 2)."""

import csv
import json
import os

import numpy as np
import pyarrow.parquet as pq
import pytest

from commands import cli
from scoring_data import small_export, write_scoring_csv

ROWS = 1000


@pytest.fixture(scope="module")
def export(example_run, tmp_path_factory):
    return small_export(example_run.output_dir, tmp_path_factory.mktemp("predict") / "export")


@pytest.fixture(scope="module")
def scoring(tmp_path_factory):
    """1,000 raw rows the run never saw (another seed), then one row whose age is not an int: its CSV and rows."""
    path = tmp_path_factory.mktemp("scoring") / "new.csv"
    rows = write_scoring_csv(path, ROWS)
    assert any(row["capital_gain"] is None for row in rows) and any(row["occupation"] is None for row in rows)
    return {"path": str(path), "rows": rows}


def served(export_dir, rows) -> dict:
    """serving_default called directly on the rows, as TF Serving calls it."""
    import tensorflow as tf

    from skewless.layers import read_spec_file, serialize_raw_examples

    examples = serialize_raw_examples(rows, read_spec_file(export_dir)["raw"])
    signature = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    return {name: value.numpy() for name, value in signature(examples=tf.constant(examples)).items()}


def read_predictions(output_dir, output_format) -> dict:
    """id -> {"probs": float32 (2,), "score": float32} from every prediction file."""
    paths = sorted(os.path.join(output_dir, name) for name in os.listdir(output_dir) if name.startswith("predictions-"))
    found = {}
    for path in paths:
        if output_format == "csv":
            with open(path, newline="") as handle:
                for line in csv.DictReader(handle):
                    found[line["id"]] = {"probs": np.float32([line["probs_0"], line["probs_1"]]),
                                         "score": np.float32(line["score"])}
        elif output_format == "jsonl":
            with open(path) as handle:
                for line in map(json.loads, handle):
                    found[line["id"]] = {"probs": np.float32(line["probs"]), "score": np.float32(line["score"])}
        else:
            for line in pq.read_table(path).to_pylist():
                found[line["id"]] = {"probs": np.float32(line["probs"]), "score": np.float32(line["score"])}
    return found


@pytest.mark.parametrize("output_format", ["csv", "jsonl", "parquet"])
def test_predictions_equal_serving_default_row_by_row(export, scoring, output_format, tmp_path):
    from skewless.pipelines import predict

    result = predict(str(export), [scoring["path"]], str(tmp_path / "out"), output_format=output_format, keys=["id"])
    assert result.rows == {"read": ROWS + 1, "written": ROWS, "quarantined": 1}
    direct = served(export, scoring["rows"])
    found = read_predictions(result.output_dir, output_format)
    assert sorted(found) == sorted(row["id"] for row in scoring["rows"])
    # each key maps back to its own input row: its prediction is that row's, bit for bit
    for index, row in enumerate(scoring["rows"]):
        assert np.array_equal(found[row["id"]]["probs"], direct["probs"][index])
        assert found[row["id"]]["score"] == direct["score"][index, 0]
    # neighbouring rows mostly predict differently, so a key joined to the wrong row would show above
    assert np.sum(np.any(direct["probs"][1:] != direct["probs"][:-1], axis=1)) > ROWS // 2

    (quarantine,) = os.listdir(tmp_path / "out" / "quarantine")
    with open(tmp_path / "out" / "quarantine" / quarantine) as handle:
        (bad,) = [json.loads(line) for line in handle]
    assert bad["line"] == ROWS + 2 and bad["raw"].startswith("bad-row,forty,")
    assert bad["reason"].startswith("age:") and "forty" in bad["reason"]
    summary = json.loads((tmp_path / "out" / "run.json").read_text())
    assert summary["predicted"]["export"] == str(export) and summary["keys"] == ["id"]


def assert_one_line_error(result, *words):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skewless: error: "), result.stderr
    assert all(word in lines[0] for word in words), lines[0]


def test_cli_writes_predictions_and_refuses_an_existing_output(export, scoring, tmp_path):
    out = tmp_path / "out"
    first = cli("predict", str(export), "--input", scoring["path"], "--output", str(out), "--keys", "id")
    assert first.returncode == 0, first.stderr
    # Beam's RunInference warned "Resource module is not available for current platform" twice a run
    assert "Resource module" not in first.stderr, first.stderr
    assert f"predicted {ROWS:,} of {ROWS + 1:,} rows" in first.stdout
    assert len(read_predictions(out, "csv")) == ROWS
    assert_one_line_error(cli("predict", str(export), "--input", scoring["path"], "--output", str(out)),
                          str(out), "--overwrite")


def test_cli_errors_are_one_line(export, scoring, tmp_path):
    not_export = tmp_path / "model"
    not_export.mkdir()
    (not_export / "saved_model.pb").write_bytes(b"")
    assert_one_line_error(cli("predict", str(not_export), "--input", scoring["path"], "--output", str(tmp_path / "a")),
                          str(not_export), "skewless export")
    missing = tmp_path / "absent.csv"
    assert_one_line_error(cli("predict", str(export), "--input", str(missing), "--output", str(tmp_path / "b")),
                          str(missing))
    assert_one_line_error(cli("predict", str(export), "--input", scoring["path"], "--output", str(tmp_path / "c"),
                              "--keys", "no_such_column"), "no_such_column")
    assert not any((tmp_path / name).exists() for name in "abc")


def test_a_key_named_like_a_model_output_is_refused(export, scoring, tmp_path):
    from skewless.errors import ConfigError
    from skewless.pipelines import predict

    with pytest.raises(ConfigError, match="--keys score: the model has an output of that name"):
        predict(str(export), [scoring["path"]], str(tmp_path / "out"), keys=["id", "score"])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("suffix", ["csv", "jsonl", "parquet"])
def test_new_data_lacking_a_features_column_is_refused_as_apply_refuses_it(export, scoring, tmp_path, suffix):
    """capital_gain may be missing in a row, but a file without its column is refused, by predict as by apply
    (a JSON Lines file was scored as if every row lacked the value)."""
    import pyarrow as pa

    from skewless.errors import ConfigError, InputError
    from skewless.pipelines import predict

    rows = [{key: value for key, value in row.items() if key != "capital_gain"} for row in scoring["rows"][:50]]
    rows = [{key: value.decode() if isinstance(value, bytes) else value for key, value in row.items()} for row in rows]
    path = tmp_path / f"lacking.{suffix}"
    if suffix == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    elif suffix == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    with pytest.raises((InputError, ConfigError), match="no column 'capital_gain'"):
        predict(str(export), [str(path)], str(tmp_path / "scored"), keys=["id"])
    assert not (tmp_path / "scored").exists()
