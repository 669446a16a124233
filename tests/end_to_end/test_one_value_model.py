"""Issue 28, items 1-6 and 8: one meaning for every value in every input format, no row lost.

Each test makes its own small input and names the item it holds the job to. Item 7 (serving follows the
batch rules) is tests/layers/test_serving_batch_rules.py.
"""

import json
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from real_data import (
    csv_data_lines,
    example_of,
    parquet_rows,
    parsed_rows,
    quarantine_by_position,
    run_json,
    split_records,
    tfrecord_records,
    written_by_id,
)


def _run(config):
    from skewless.pipelines import run

    return run(config).output_dir


def _config(folder, fmt, path, features, label=None, **input_options):
    config = {
        "name": "values",
        "input": {"format": fmt, "paths": [str(path)], **({"header": True} if fmt == "csv" else {}), **input_options},
        "features": features,
        "output": {"dir": str(folder / f"out-{fmt}-{path.stem}"), "shards": 1, "max_bad_fraction": 0.5},
    }
    if label is not None:
        config["label"] = label
    return config



def _vocabulary(run_dir, name) -> list[str]:
    features = run_json(run_dir)["features"]
    path = f"{run_dir}/transform_graph/transform_fn/assets/{features[name]['vocabulary_file']}"
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def _write_tfrecord(path, records):
    import tensorflow as tf

    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)


# ---- item 1: a sparse optional column with no value in a whole chunk or file -------------------------------

def test_item1_parquet_column_null_in_its_first_row_groups_is_filled(tmp_path):
    # null in the first 33,000 rows (row groups of 2,000): whatever the reader's batch size up to 16,500 rows,
    # a whole batch has no value
    rows, gaps = 40_000, 33_000
    city = [None] * gaps + [f"c{i % 7}" for i in range(rows - gaps)]
    n = [None] * gaps + [float(i % 11) for i in range(rows - gaps)]
    path = tmp_path / "sparse.parquet"
    pq.write_table(pa.table({"id": list(range(rows)), "city": pa.array(city, pa.string()),
                             "n": pa.array(n, pa.float64()), "x": [float(i % 5) for i in range(rows)]}),
                   path, row_group_size=2_000)
    run_dir = _run(_config(tmp_path, "parquet", path, {
        "id": {"transform": "passthrough"},
        "city": {"transform": "vocabulary", "default": "nowhere", "missing_indicator": True},
        "n": {"transform": "passthrough", "fill": "mean"},
        "x": {"transform": "z_score"},
    }))
    summary = run_json(run_dir)
    assert summary["rows"]["read"] == parquet_rows(path) == rows
    assert sum(summary["rows"]["written"].values()) == rows and summary["rows"]["quarantined"] == 0
    assert sorted(_vocabulary(run_dir, "city")) == sorted({"nowhere", *(f"c{i}" for i in range(7))})
    written = written_by_id(run_dir)
    mean = np.mean([value for value in n if value is not None], dtype=np.float32)
    assert [written[i]["n"] for i in range(gaps)] == pytest.approx([float(mean)] * gaps)
    assert [written[i]["city_missing"] for i in range(rows)] == [1] * gaps + [0] * (rows - gaps)
    assert [written[i]["n"] for i in range(gaps, rows)] == n[gaps:]


def test_item1_a_csv_whose_optional_column_is_empty_is_filled(tmp_path):
    path = tmp_path / "three.csv"
    path.write_text("id,city,x\n1,,0.5\n2,,1.5\n3,,2.5\n")
    run_dir = _run(_config(tmp_path, "csv", path, {
        "id": {"transform": "passthrough"},
        "city": {"transform": "vocabulary", "default": "nowhere"},
        "x": {"transform": "z_score"},
    }))
    rows = run_json(run_dir)["rows"]
    assert rows["read"] == csv_data_lines(path) == 3
    assert sum(rows["written"].values()) == 3
    assert _vocabulary(run_dir, "city") == ["nowhere"]
    assert {row["city"] for row in written_by_id(run_dir).values()} == {0}


# ---- item 2: a featureless Example is a row, never lost ------------------------------------------------------

def _good_examples(count):
    return [example_of({"id": i, "x": float(i % 9), "s": f"v{i % 4}"}) for i in range(count)]


@pytest.mark.parametrize("featureless", [b"", b"\x08\x96\x01"], ids=["empty", "unknown-field"])
def test_item2_a_featureless_example_is_read_and_quarantined(tmp_path, featureless):
    path = tmp_path / "rows.tfrecord"
    _write_tfrecord(path, _good_examples(190) + [b"garbage!", featureless])
    run_dir = _run(_config(tmp_path, "tfrecord", path, {
        "id": {"transform": "passthrough"}, "x": {"transform": "z_score"}, "s": {"transform": "vocabulary"}}))
    rows = run_json(run_dir)["rows"]
    assert rows["read"] == tfrecord_records(path) == 192
    assert sum(rows["written"].values()) == 190 and rows["quarantined"] == 2
    found = quarantine_by_position(run_dir, "tfrecord")
    assert set(found) == {190, 191}
    assert "required value is missing" in found[191]


def test_item2_a_featureless_example_is_written_when_every_column_is_optional(tmp_path):
    path = tmp_path / "rows.tfrecord"
    _write_tfrecord(path, _good_examples(190) + [b"garbage!", b""])
    run_dir = _run(_config(tmp_path, "tfrecord", path, {
        "id": {"transform": "passthrough", "default": -1}, "x": {"transform": "z_score", "default": 0},
        "s": {"transform": "vocabulary", "default": "none"}}))
    rows = run_json(run_dir)["rows"]
    assert rows["read"] == tfrecord_records(path) == 192
    assert sum(rows["written"].values()) == 191 and rows["quarantined"] == 1
    assert -1 in written_by_id(run_dir)


# ---- item 3: the empty string is a missing value in every format, scalar and in lists ---------------------------

EMPTY_ROWS = 60


def _empty_string_rows():
    """id; s: required string, "" in every 10th row; d: string with a default, "" in every 7th row;
    tags: a list whose items are sometimes ""."""
    rows = []
    for i in range(EMPTY_ROWS):
        rows.append({"id": i, "s": "" if i % 10 == 3 else f"s{i % 3}", "d": "" if i % 7 == 2 else f"d{i % 2}",
                     "tags": [t for t in (f"t{i % 5}", "" if i % 4 == 0 else None, "u") if t is not None]})
    return rows


def _write_empty_string_inputs(folder):
    import tensorflow as tf

    rows = _empty_string_rows()
    csv = folder / "rows.csv"
    csv.write_text("id,s,d,tags\n" + "".join(
        f'{r["id"]},"{r["s"]}","{r["d"]}",{"|".join(r["tags"])}\n' for r in rows))
    parquet = folder / "rows.parquet"
    pq.write_table(pa.table({"id": [r["id"] for r in rows], "s": [r["s"] for r in rows], "d": [r["d"] for r in rows],
                             "tags": pa.array([r["tags"] for r in rows], pa.list_(pa.string()))}), parquet)
    records = []
    for r in rows:
        feature = {"id": tf.train.Feature(int64_list=tf.train.Int64List(value=[r["id"]]))}
        for name in ("s", "d"):
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[r[name].encode()]))
        feature["tags"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[t.encode() for t in r["tags"]]))
        records.append(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    tfrecord = folder / "rows.tfrecord"
    _write_tfrecord(tfrecord, records)
    return {"csv": csv, "parquet": parquet, "tfrecord": tfrecord}


EMPTY_FEATURES = {"id": {"transform": "passthrough"}, "s": {"transform": "vocabulary"},
                  "d": {"transform": "vocabulary", "default": "none"},
                  "tags": {"transform": "vocabulary", "list": True}}


@pytest.fixture(scope="module")
def empty_string_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("empty")
    paths = _write_empty_string_inputs(folder)
    return {fmt: _run(_config(folder, fmt, path, EMPTY_FEATURES)) for fmt, path in paths.items()}


@pytest.mark.parametrize("fmt", ["csv", "parquet", "tfrecord"])
def test_item3_empty_string_in_a_required_column_is_missing_in_every_format(empty_string_runs, fmt):
    run_dir = empty_string_runs[fmt]
    rows = _empty_string_rows()
    expected = {i: "s: required value is missing" for i, row in enumerate(rows) if row["s"] == ""}
    assert quarantine_by_position(run_dir, fmt) == expected
    kept = [row for i, row in enumerate(rows) if i not in expected]
    assert "" not in _vocabulary(run_dir, "s")
    # d: "" takes the default, as a missing value does
    d_counts = pd.Series([row["d"] or "none" for row in kept]).value_counts()
    assert sorted(_vocabulary(run_dir, "d")) == sorted(d_counts.index)
    # tags: an "" item is left out of its list
    tags = _vocabulary(run_dir, "tags")
    assert sorted(tags) == sorted({t for row in kept for t in row["tags"] if t})
    written = written_by_id(run_dir)
    for row in kept:
        assert [tags[i] for i in written[row["id"]]["tags"]] == [t for t in row["tags"] if t], row


def test_item3_the_three_formats_write_the_same_shards(empty_string_runs):
    for split in run_json(empty_string_runs["csv"])["rows"]["written"]:
        expected = split_records(empty_string_runs["csv"], split)
        for fmt in ("parquet", "tfrecord"):
            assert split_records(empty_string_runs[fmt], split) == expected, (fmt, split)


# ---- item 4: the split does not depend on storage types ---------------------------------------------------------

def test_item4_same_split_from_csv_and_parquet_whatever_the_storage_type(tmp_path):
    rng = np.random.default_rng(28)
    rows = 600
    frame = pd.DataFrame({
        "id": np.arange(rows),
        "k": pd.array([None if g else int(v) for v, g in zip(rng.integers(0, 50, rows), rng.random(rows) < 0.1)],
                      dtype="Int64"),
        "c": rng.choice(["red", "green", "blue"], rows),
        "label": rng.integers(0, 2, rows),
    })
    csv = tmp_path / "rows.csv"
    frame.to_csv(csv, index=False)  # ints stay ints in the text (an empty field for a gap)
    as_pandas = frame.astype({"k": "float64", "label": "float64"})  # what pandas holds for ints with gaps
    variants = {
        "float64": as_pandas,
        "category": as_pandas.astype({"c": "category"}),
    }
    features = {"id": {"transform": "passthrough"}, "k": {"transform": "z_score", "fill": "mean"},
                "c": {"transform": "vocabulary"}}
    label = {"column": "label"}
    reference = _split_ids(_run(_config(tmp_path, "csv", csv, features, label)))
    assert sum(map(len, reference.values())) == rows
    for name, variant in variants.items():
        path = tmp_path / f"{name}.parquet"
        variant.to_parquet(path)
        assert _split_ids(_run(_config(tmp_path, "parquet", path, features, label))) == reference, name
    large = tmp_path / "large_string.parquet"
    table = pa.Table.from_pandas(as_pandas, preserve_index=False)
    table = table.set_column(table.schema.get_field_index("c"), pa.field("c", pa.large_string()),
                             table["c"].cast(pa.large_string()))
    pq.write_table(table, large)
    assert _split_ids(_run(_config(tmp_path, "parquet", large, features, label))) == reference


def _split_ids(run_dir) -> dict[str, list[int]]:
    return {split: sorted(parsed_rows(run_dir, split_records(run_dir, split), key="id"))
            for split in run_json(run_dir)["rows"]["written"]}


# ---- item 5: input.na_values ---------------------------------------------------------------------------------

def test_item5_na_tokens_are_missing_in_numeric_and_string_columns(tmp_path):
    lines = ["id,x,s,t"]
    rows = []
    for i in range(40):
        x = "NA" if i % 5 == 0 else (" N/A " if i % 5 == 1 else f"{i}.5")
        s = "NA" if i % 6 == 0 else f"s{i % 3}"
        t = "N/A" if i % 2 else "ok"
        lines.append(f"{i},{x},{s},{t}")
        rows.append((x.strip() in ("NA", "N/A"), s == "NA", t == "N/A"))

    def expected_missing(t_is_missing):  # statistics count the analyzed rows: the quarantined ones are not
        kept = [row for row in rows if not (t_is_missing and row[2])]
        return {"x": sum(row[0] for row in kept), "s": sum(row[1] for row in kept)}
    csv = tmp_path / "rows.csv"
    csv.write_text("\n".join(lines) + "\n")
    features = {"id": {"transform": "passthrough"}, "x": {"transform": "z_score", "default": 0},
                "s": {"transform": "vocabulary", "default": "none"}, "t": {"transform": "vocabulary"}}
    # a list: every column; t's "N/A" is then missing too, and t is required: those rows are quarantined
    config = _config(tmp_path, "csv", csv, features, na_values=["NA", "N/A"])
    config["output"]["max_bad_fraction"] = 0.6
    run_dir = _run(config)
    summary = run_json(run_dir)
    assert summary["features"]["x"]["missing"] == expected_missing(True)["x"]
    assert summary["features"]["s"]["missing"] == expected_missing(True)["s"]
    assert "NA" not in _vocabulary(run_dir, "s") and "none" in _vocabulary(run_dir, "s")
    assert set(quarantine_by_position(run_dir, "csv").values()) == {"t: required value is missing"}
    assert summary["rows"]["quarantined"] == 20

    # a mapping: x and s only; t's "N/A" is a category
    config = _config(tmp_path, "csv", csv, features, na_values={"x": ["NA", "N/A"], "s": ["NA"]})
    config["output"]["dir"] = str(tmp_path / "mapping")
    run_dir = _run(config)
    summary = run_json(run_dir)
    assert summary["rows"]["quarantined"] == 0
    assert summary["features"]["x"]["missing"] == expected_missing(False)["x"]
    assert summary["features"]["s"]["missing"] == expected_missing(False)["s"]
    assert sorted(_vocabulary(run_dir, "t")) == ["N/A", "ok"]


def test_item5_na_tokens_in_parquet_and_example_strings_are_missing(tmp_path):
    ids = list(range(30))
    s = ["NA" if i % 6 == 0 else f"s{i % 3}" for i in ids]
    parquet = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"id": ids, "s": s}), parquet)
    tfrecord = tmp_path / "rows.tfrecord"
    _write_tfrecord(tfrecord, [example_of({"id": i, "s": value}) for i, value in zip(ids, s)])
    features = {"id": {"transform": "passthrough"}, "s": {"transform": "vocabulary", "default": "none"}}
    for fmt, path in (("parquet", parquet), ("tfrecord", tfrecord)):
        run_dir = _run(_config(tmp_path, fmt, path, features, na_values=["NA"]))
        assert run_json(run_dir)["features"]["s"]["missing"] == s.count("NA"), fmt
        assert "NA" not in _vocabulary(run_dir, "s"), fmt


# ---- item 6: label.missing: drop ----------------------------------------------------------------------------------

def _labelled_csv(path, rows=100):
    lines = ["id,x,label"]
    unlabeled = 0
    for i in range(rows):
        label = "" if i % 10 == 4 else ("NA" if i % 10 == 7 else ("no", "yes")[i % 2])
        unlabeled += label in ("", "NA")
        lines.append(f"{i},{'oops' if i == 50 else i % 13},{label}")
    path.write_text("\n".join(lines) + "\n")
    return unlabeled


def test_item6_label_missing_drop_counts_unlabeled_rows_apart(tmp_path):
    csv = tmp_path / "rows.csv"
    unlabeled = _labelled_csv(csv)
    config = _config(tmp_path, "csv", csv, {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"}},
                     label={"column": "label", "map": {"no": 0, "yes": 1}, "missing": "drop"}, na_values=["NA"])
    config["output"]["max_bad_fraction"] = 0.02  # the unlabeled rows are not bad rows
    run_dir = _run(config)
    rows = run_json(run_dir)["rows"]
    assert rows["read"] == csv_data_lines(csv) == 100
    assert rows["unlabeled"] == unlabeled == 20
    assert rows["quarantined"] == 1  # 'oops'
    assert sum(rows["written"].values()) == 100 - unlabeled - 1
    assert rows["read"] == sum(rows["written"].values()) + rows["quarantined"] + rows["unlabeled"]
    assert all(row_id % 10 not in (4, 7) for row_id in written_by_id(run_dir))


def test_item6_apply_takes_max_bad_fraction(tmp_path):
    from skewless.cli import app

    csv = tmp_path / "rows.csv"
    _labelled_csv(csv)
    run_dir = _run(_config(tmp_path, "csv", csv, {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"}},
                           label={"column": "label", "map": {"no": 0, "yes": 1}, "missing": "drop"}, na_values=["NA"]))
    new = tmp_path / "new.csv"
    new.write_text("id,x,label\n" + "".join(f"{i},{'bad' if i % 4 == 0 else i},yes\n" for i in range(20)))
    runner = CliRunner()
    refused = runner.invoke(app, ["apply", run_dir, "--input", str(new), "--output", str(tmp_path / "a"),
                                  "--max-bad-fraction", "0.1"])
    assert refused.exit_code == 2, refused.output
    allowed = runner.invoke(app, ["apply", run_dir, "--input", str(new), "--output", str(tmp_path / "b"),
                                  "--max-bad-fraction", "0.3"])
    assert allowed.exit_code == 0, allowed.output
    rows = run_json(tmp_path / "b")["rows"]
    assert rows["quarantined"] == 5 and sum(rows["written"].values()) == 15


# ---- item 8: degenerate data finishes, or is refused in one line naming the feature ---------------------------------

def _finishes_or_refuses(tmp_path, config, feature) -> dict | None:
    """Runs the job as `skewless run` does: run.json when it finished; None when it refused in one line that
    names `feature` (exit 2). Anything else (a traceback, an exit 1, a line not naming the feature) fails."""
    from skewless.cli import app

    path = tmp_path / "job.yaml"
    path.write_text(json.dumps(config))
    result = CliRunner().invoke(app, ["run", str(path)])
    if result.exit_code == 0:
        return run_json(config["output"]["dir"])
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    errors = [line for line in result.stderr.splitlines() if line.startswith("skewless: error:")]  # not progress
    assert len(errors) == 1, result.stderr
    what = errors[0].split(f"{path}: ", 1)[-1]  # the message after the config's path
    assert re.search(rf"\b{re.escape(feature)}\b", what), result.stderr
    return None


def _text_csv(path, texts):
    path.write_text("id,review\n" + "".join(f'{i},"{text}"\n' for i, text in enumerate(texts)))


@pytest.mark.parametrize("fmt, num_oov_buckets", [("csv", 1), ("csv", 0), ("tfrecord", 0)])
def test_item8_tfidf_with_an_empty_vocabulary(tmp_path, fmt, num_oov_buckets):
    texts = ["!!!", "...", "?", "-- --"] * 5  # only punctuation: no token is left
    if fmt == "csv":
        path = tmp_path / "rows.csv"
        _text_csv(path, texts)
    else:
        path = tmp_path / "rows.tfrecord"
        _write_tfrecord(path, [example_of({"id": i, "review": text}) for i, text in enumerate(texts)])
    config = _config(tmp_path, fmt, path, {
        "id": {"transform": "passthrough"},
        "review": {"transform": "text_vocabulary", "output": "tfidf", "num_oov_buckets": num_oov_buckets}})
    summary = _finishes_or_refuses(tmp_path, config, "review")
    if summary is not None:
        written = written_by_id(config["output"]["dir"])
        assert len(written) == len(texts)
        assert all(row["review"] == [] and row["review_weights"] == [] for row in written.values())


def test_item8_tfidf_with_a_one_token_vocabulary(tmp_path):
    path = tmp_path / "rows.csv"
    _text_csv(path, ["hello", "Hello!", "hello hello", "HELLO."] * 5)
    config = _config(tmp_path, "csv", path, {
        "id": {"transform": "passthrough"},
        "review": {"transform": "text_vocabulary", "output": "tfidf", "num_oov_buckets": 0}})
    summary = _finishes_or_refuses(tmp_path, config, "review")
    if summary is not None:
        written = written_by_id(config["output"]["dir"])
        assert {tuple(row["review"]) for row in written.values()} == {(0,)}
        # tft.tfidf: count / length * (1 + ln((N + 1) / (df + 1))) with df = N: 1 per row
        assert {tuple(np.round(row["review_weights"], 6)) for row in written.values()} == {(1.0,)}


@pytest.mark.parametrize("fill", [{"fill": "mean"}, {"fill": "median"}, {"fill": "most_frequent"}, {"default": 0}])
def test_item8_a_column_with_no_value_anywhere(tmp_path, fill):
    path = tmp_path / "rows.csv"
    path.write_text("id,income,y\n" + "".join(f"{i},,{i % 3}.5\n" for i in range(12)))
    config = _config(tmp_path, "csv", path, {
        "id": {"transform": "passthrough"}, "income": {"transform": "z_score", **fill}, "y": {"transform": "z_score"}})
    summary = _finishes_or_refuses(tmp_path, config, "income")
    if summary is not None:
        assert summary["features"]["income"]["missing"] == 12
        assert sum(summary["rows"]["written"].values()) == 12
        assert all(np.isfinite(row["income"]) for row in written_by_id(config["output"]["dir"]).values())


def test_item8_a_split_with_no_row(tmp_path):
    from example_job import split_of_each_row
    from skewless.config import load_config

    path = tmp_path / "rows.csv"
    path.write_text("id,x,c\n" + "".join(f"{i},{i}.5,c{i % 2}\n" for i in range(4)))
    config = _config(tmp_path, "csv", path, {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"},
                                             "c": {"transform": "vocabulary"}})
    config["output"]["splits"] = {"train": 0.5, "eval": 0.499, "test": 0.001}
    assert 2 not in split_of_each_row(load_config(config))  # the premise: no row falls into test
    summary = _finishes_or_refuses(tmp_path, config, "test")
    if summary is not None:
        assert summary["rows"]["written"]["test"] == 0
        assert sum(summary["rows"]["written"].values()) == 4


# ---- found on the way: a feature of two types among a TFRecord's first records -------------------------------------

def test_a_feature_of_another_type_in_one_example_is_quarantined_not_a_crash_of_type_inference(tmp_path):
    """Without a schema, types come from the first 1,000 records by majority (README "Types without a schema");
    one Example holding text where the others hold floats is a bad row, not an ArrowTypeError."""
    path = tmp_path / "rows.tfrecord"
    _write_tfrecord(path, [example_of({"id": i, "x": float(i)}) for i in range(20)] + [example_of({"id": 20, "x": "abc"})])
    run_dir = _run(_config(tmp_path, "tfrecord", path, {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"}}))
    rows = run_json(run_dir)["rows"]
    assert rows["read"] == tfrecord_records(path) == 21
    assert sum(rows["written"].values()) == 20 and list(quarantine_by_position(run_dir, "tfrecord")) == [20]
