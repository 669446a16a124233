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
from example_job import CENSUS_COLUMNS, CENSUS_NUMERIC, census_config, split_of_each_row
from run_output import read_split

from skewless.pipelines.analyze.stats import EXACT_NUMBERS

VOCABULARIES = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex"]


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
                rows.append({name: (int(v) if name in CENSUS_NUMERIC else v.encode()) for name, v in zip(CENSUS_COLUMNS, fields)})
    spec = {name: tf.io.FixedLenFeature([], tf.int64 if name in CENSUS_NUMERIC else tf.string) for name in CENSUS_COLUMNS}

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
    from skewless.pipelines.commands.verify import verify

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
    from run_output import read_rows

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
    # the new data's own statistics, for `skewless validate` against the run
    from skewless.statistics_files import feature_name, read_statistics

    statistics = {feature_name(f): f for f in read_statistics(result.output_dir, "all").features}
    assert statistics["age"].num_stats.mean == pytest.approx(ages.mean() + 10, rel=1e-12)
    top = {t.value: t.frequency for t in statistics["workclass"].string_stats.top_values}
    assert top["Space-agency"] == len(workclasses[::100])


def test_split_statistics_equal_numpy_over_the_rows_of_each_split(census_run, census_path, tmp_path):
    import collections

    import pandas as pd

    from skewless.statistics_files import feature_name, read_statistics

    frame = pd.read_csv(census_path, header=None, names=CENSUS_COLUMNS, skipinitialspace=True)
    split_index = split_of_each_row(census_config(census_path, tmp_path / "unused"))
    assert len(split_index) == len(frame)
    for index, split in enumerate(["train", "eval"]):
        rows = frame[split_index == index]
        dataset = read_statistics(census_run.output_dir, split)
        assert dataset.num_examples == len(rows) == census_run.rows["written"][split]
        features = {feature_name(feature): feature for feature in dataset.features}
        assert sorted(features) == sorted(CENSUS_COLUMNS)
        # the transformed ages of the split's shards are the z-scores of these rows' ages: the split rule was read right
        transformed = np.sort(read_split(census_run, split)["age"])
        ages = rows["age"].to_numpy(np.float64)
        assert np.allclose(transformed, np.sort((ages - frame["age"].mean()) / frame["age"].std(ddof=0)), atol=1e-5)
        for name in CENSUS_NUMERIC:
            values = rows[name].to_numpy(np.float64)
            stats = features[name].num_stats
            assert (stats.common_stats.num_non_missing, stats.common_stats.num_missing) == (len(values), 0)
            assert stats.common_stats.avg_num_values == 1.0
            assert stats.mean == pytest.approx(values.mean(), rel=1e-12)
            assert stats.std_dev == pytest.approx(values.std(), rel=1e-9)
            assert (stats.min, stats.max) == (values.min(), values.max())
            assert stats.num_zeros == np.count_nonzero(values == 0)
            # the median and the deciles are values of the data (TFDV's are): counted exactly while a column has
            # at most EXACT_NUMBERS values (age's median 37, not 36.65), else read from the sketch, whose rank is
            # 1/2 within its error
            exact = len(np.unique(values)) <= EXACT_NUMBERS
            deciles = [stats.histograms[1].buckets[0].low_value] + [b.high_value for b in stats.histograms[1].buckets]
            assert set(deciles) <= set(values) and stats.median == deciles[5]
            if exact:
                assert deciles == np.quantile(values, np.linspace(0, 1, 11), method="inverted_cdf").tolist()
            else:
                assert np.mean(values < stats.median) <= 0.51 and np.mean(values <= stats.median) >= 0.49
            assert len(stats.histograms) == 2
            for histogram in stats.histograms:
                assert sum(bucket.sample_count for bucket in histogram.buckets) == pytest.approx(len(values))
                assert histogram.buckets[0].low_value == values.min()
                assert histogram.buckets[-1].high_value == values.max()
            # one value per row: TFDV's num_values_histogram, 10 quantile buckets [1, 1]
            per_row = stats.common_stats.num_values_histogram
            assert [(b.low_value, b.high_value, b.sample_count) for b in per_row.buckets] == [
                (1, 1, len(values) / 10)] * 10
            # no weight feature: no weighted statistics, rather than zeros
            assert not stats.HasField("weighted_numeric_stats") and not stats.common_stats.HasField(
                "weighted_common_stats")
            custom = {c.name: c for c in features[name].custom_stats}
            assert custom["approximate"].str == ("histograms" if exact else "median, histograms, distribution")
            distribution = [(b.high_value, b.sample_count) for b in custom["distribution"].histogram.buckets]
            assert sum(count for _, count in distribution) == len(values)
            if exact:
                assert distribution == sorted(collections.Counter(values.tolist()).items())
        for name in sorted(set(CENSUS_COLUMNS) - set(CENSUS_NUMERIC)):
            values = rows[name]
            stats = features[name].string_stats
            counter = collections.Counter(values)
            assert (stats.common_stats.num_non_missing, stats.common_stats.num_missing) == (len(values), 0)
            assert stats.unique == len(counter)
            expected = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
            # only values in 2 rows or more are frequent values (eval's one 'Never-worked' row is not)
            assert [(top.value, top.frequency) for top in stats.top_values] == [
                (value, count) for value, count in expected if count >= 2][:20]
            assert [(b.label, b.sample_count) for b in stats.rank_histogram.buckets] == expected  # all: < 1,000
            assert stats.avg_length == pytest.approx(values.str.len().mean(), rel=1e-6)
            assert not features[name].custom_stats  # all exact
