"""configs/census.yaml on the real UCI Adult file, against a plain tft_beam.AnalyzeAndTransformDataset.

Skips where ../shared/data/census is absent.
"""

import csv
import glob
import json
import os
import tempfile

import numpy as np
import pytest

from test_job import read_split

from conftest import REPO

NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
           "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "label"]
VOCABULARIES = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex"]


@pytest.fixture(scope="module")
def census_run(census_path, tmp_path_factory):
    from skewless.pipelines import run

    from skewless.config import load_config

    config = load_config(REPO / "configs" / "census.yaml", output_dir=str(tmp_path_factory.mktemp("census") / "out"))
    config.input.paths = [str(census_path)]
    return run(config)


def reference_rows(census_path):
    """The same preprocessing written as plain tf.Transform, on instance dicts, AnalyzeAndTransformDataset."""
    import apache_beam as beam
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam
    from tensorflow_transform.tf_metadata import dataset_metadata, schema_utils

    rows = []
    with open(census_path) as handle:
        for fields in csv.reader(handle, skipinitialspace=True):
            if fields:
                rows.append({name: (int(v) if name in NUMERIC else v.encode()) for name, v in zip(COLUMNS, fields)})
    spec = {name: tf.io.FixedLenFeature([], tf.int64 if name in NUMERIC else tf.string) for name in COLUMNS}

    def preprocessing_fn(inputs):
        out = {}
        for name in ["age", "education-num", "capital-gain", "capital-loss"]:
            out[name] = tft.scale_to_z_score(tf.cast(inputs[name], tf.float32))
        out["fnlwgt"] = tft.scale_to_0_1(tf.cast(inputs["fnlwgt"], tf.float32))
        out["hours-per-week"] = tft.bucketize(tf.cast(inputs["hours-per-week"], tf.float32), 10)
        for name in VOCABULARIES:
            out[name] = tft.compute_and_apply_vocabulary(inputs[name], num_oov_buckets=1)
        out["native-country"] = tft.hash_strings(inputs["native-country"], 64)
        out["label"] = tf.cast(tf.equal(inputs["label"], ">50K"), tf.int64)
        return out

    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(spec))
    folder = tempfile.mkdtemp()
    with beam.Pipeline() as pipeline, tft_beam.Context(temp_dir=folder):
        (transformed, _), _ = (pipeline | beam.Create(rows), metadata) | tft_beam.AnalyzeAndTransformDataset(
            preprocessing_fn
        )
        _ = (
            transformed
            | beam.Map(lambda row: json.dumps({name: np.asarray(value).item() for name, value in row.items()}))
            | beam.io.WriteToText(os.path.join(folder, "rows"), num_shards=1)
        )
    result = [json.loads(line) for path in glob.glob(os.path.join(folder, "rows*")) for line in open(path)]
    return {name: np.array([row[name] for row in result]) for name in result[0]}


def sort_rows(rows):
    # float32 on both sides, so equal values sort equal (the reference's JSON carries them as float64)
    rows = {name: v.astype(np.float32) if v.dtype.kind == "f" else v for name, v in rows.items()}
    keys = [rows[name] for name in sorted(rows)]
    order = np.lexsort(keys[::-1])
    return {name: values[order] for name, values in rows.items()}


def test_census_writes_every_row_and_equals_plain_tf_transform(census_run, census_path):
    import tensorflow_transform as tft

    assert census_run.rows["read"] == 32_561
    assert sum(census_run.rows["written"].values()) == 32_561 and census_run.rows["quarantined"] == 0
    tft.TFTransformOutput(census_run.graph_dir).transformed_feature_spec()  # the graph loads
    parts = [read_split(census_run, split) for split in ("train", "eval")]
    ours = sort_rows({name: np.concatenate([p[name] for p in parts]) for name in parts[0]})
    theirs = sort_rows(reference_rows(census_path))
    assert set(ours) == set(theirs)
    for name in ours:
        if ours[name].dtype.kind == "f":
            np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)


def test_skew_check_on_the_census_run(census_run):
    """`skewless verify` on the census run: zero differences, the native Keras layers included."""
    from skewless.pipelines.verify import verify

    result = verify(census_run.output_dir, sample=500)
    assert result.rows == 500 and result.unseen_rows == 50
    assert len(result.features) == 15 and result.differences == 0
    assert result.native is not None and result.native.exact


def test_apply_on_shifted_census_uses_the_training_runs_statistics(census_run, census_path, tmp_path):
    """`skewless apply` on census ten years older with a new workclass: the run's mean/std and vocabulary,
    never re-analyzed (issue 21)."""
    import tensorflow_transform as tft

    from skewless.pipelines import apply
    from skewless.safe_names import vocabulary_filename
    from test_apply import read_rows

    with open(census_path) as handle:
        rows = [fields for fields in csv.reader(handle, skipinitialspace=True) if fields]
    ages = np.array([int(fields[0]) for fields in rows])
    workclasses = np.array([fields[1] for fields in rows], dtype=object)
    workclasses[::100] = "Space-agency"
    shifted = tmp_path / "shifted.csv"
    with open(shifted, "w", newline="") as handle:
        csv.writer(handle).writerows([[age + 10, work, *fields[2:]] for age, work, fields in zip(ages, workclasses, rows)])

    result = apply(census_run.output_dir, str(tmp_path / "applied"), inputs=[str(shifted)], one_split=True)
    applied, _ = read_rows(result.output_dir, "all")
    assert result.rows["read"] == len(rows) and result.rows["quarantined"] == 0
    np.testing.assert_allclose(applied["age"], (ages + 10 - ages.mean()) / ages.std(), rtol=1e-5, atol=1e-5)
    vocabulary = [v.decode() for v in tft.TFTransformOutput(census_run.graph_dir)
                  .vocabulary_by_name(vocabulary_filename("workclass"))]
    expected = [vocabulary.index(w) if w in vocabulary else len(vocabulary) for w in workclasses]
    assert "Space-agency" not in vocabulary
    np.testing.assert_array_equal(applied["workclass"], expected)
