"""`skewless validate`: a shifted copy of census is flagged on the shifted features, census's own splits pass,
and the distances equal NumPy's / SciPy's on the same distributions. Skips where the census file is absent."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import jensenshannon
from example_job import CENSUS_COLUMNS, census_config, census_frame, split_of_each_row
from typer.testing import CliRunner

from example_job import REPO
from skewless.cli import app
from skewless.drift import DEFAULT_THRESHOLDS, binned, jensen_shannon, reference_edges

SWAPPED = {"Private": "Self-emp-not-inc", "Self-emp-not-inc": "Private"}


@pytest.fixture(scope="module")
def shifted_census(census_path, tmp_path_factory):
    """Census with every age 10 years more and two workclass values swapped: (the run, its input file)."""
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("shifted")
    frame = census_frame(census_path)
    frame["age"] += 10
    frame["workclass"] = frame["workclass"].replace(SWAPPED)
    path = folder / "adult-shifted.data"
    frame.to_csv(path, header=False, index=False)
    return run(census_config(path, folder / "out")), path


def validate(*args) -> tuple[int, dict]:
    result = CliRunner().invoke(app, ["validate", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def train_rows(path, tmp_path) -> pd.DataFrame:
    """The rows of a census file that the job writes to its train split."""
    frame = census_frame(path)
    return frame[split_of_each_row(census_config(path, tmp_path / "unused")) == 0]


def linf_by_numpy(base: pd.Series, test: pd.Series) -> float:
    shares = pd.concat([base.value_counts(normalize=True), test.value_counts(normalize=True)], axis=1).fillna(0.0)
    return float(np.max(np.abs(shares.iloc[:, 0].to_numpy() - shares.iloc[:, 1].to_numpy())))


def test_a_shifted_copy_is_flagged_on_the_shifted_features_only(census_run, shifted_census, census_path, tmp_path):
    from skewless.schemas import load_schema, write_schema

    shifted_run, shifted_path = shifted_census
    schema = load_schema(REPO / "schemas" / "census.pbtxt")
    for feature in schema.feature:
        if feature.name == "age":
            feature.drift_comparator.jensen_shannon_divergence.threshold = 0.1
        if feature.name == "workclass":
            feature.drift_comparator.infinity_norm.threshold = 0.15
    schema_path = tmp_path / "schema.pbtxt"
    write_schema(schema, schema_path)

    code, report = validate(shifted_run.output_dir, "--against", census_run.output_dir, "--splits", "train",
                            "--schema", str(schema_path), "--threshold", "0.05", "--threshold", "sex=0.5")
    assert code == 1
    (comparison,) = report["comparisons"]
    assert comparison["comparator"] == "drift_comparator"
    features = {f["feature"]: f for f in comparison["features"]}
    assert sorted(features) == sorted(CENSUS_COLUMNS)
    assert {name for name, f in features.items() if f["verdict"] == "CROSSED"} == {"age", "workclass"}
    assert report["crossed"] == 2
    assert all(f["verdict"] == "ok" for name, f in features.items() if name not in ("age", "workclass"))
    thresholds = {name: f["threshold"] for name, f in features.items()}
    assert (thresholds["age"], thresholds["workclass"], thresholds["sex"], thresholds["race"]) == (0.1, 0.15, 0.5, 0.05)
    assert features["age"]["measure"] == "Jensen-Shannon" and features["workclass"]["measure"] == "L-infinity"

    # L-infinity over each run's train rows, counted by pandas
    base, test = train_rows(census_path, tmp_path), train_rows(shifted_path, tmp_path)
    for name in ("workclass", "education", "sex"):
        assert features[name]["distance"] == pytest.approx(linf_by_numpy(base[name], test[name]), abs=1e-12)
    # Jensen-Shannon by SciPy over pandas' counts of each run's train ages in the baseline's bins (age has fewer
    # distinct values than the sketch keeps, so the bins follow its exact counts), and the rows above its range
    counts = base["age"].value_counts().sort_index()
    edges = reference_edges(counts.index.to_numpy(np.float64), counts.to_numpy(np.float64), zeros=False)
    masses = [np.array([(ages <= edges[0]).sum()] + [((ages > low) & (ages <= high)).sum()
                                                      for low, high in zip(edges[:-1], edges[1:])]
                       + [(ages > edges[-1]).sum()], dtype=np.float64) for ages in (base["age"], test["age"])]
    expected = jensenshannon(masses[0] / masses[0].sum(), masses[1] / masses[1].sum(), base=2) ** 2
    assert features["age"]["distance"] == pytest.approx(expected, rel=1e-9)
    assert features["age"]["distance"] > 0.1


def test_train_and_eval_of_census_pass(census_run, census_path, tmp_path):
    code, report = validate(census_run.output_dir, "--threshold", "0.1")
    assert code == 0 and report["crossed"] == 0
    (comparison,) = report["comparisons"]
    assert comparison["comparator"] == "skew_comparator"
    assert comparison["base"].endswith(":train") and comparison["test"].endswith(":eval")
    features = {f["feature"]: f for f in comparison["features"]}
    assert all(f["verdict"] == "ok" for f in features.values())
    frame = census_frame(census_path)
    split = split_of_each_row(census_config(census_path, tmp_path / "unused"))
    for name in ("workclass", "native-country", "label"):
        expected = linf_by_numpy(frame[name][split == 0], frame[name][split == 1])
        assert features[name]["distance"] == pytest.approx(expected, abs=1e-12)


def test_a_run_against_itself_is_at_distance_zero(census_run):
    code, report = validate(census_run.output_dir, "--against", census_run.output_dir, "--threshold", "0")
    assert code == 0
    assert [c["test"].rsplit(":", 1)[1] for c in report["comparisons"]] == ["train", "eval"]
    assert all(f["distance"] == pytest.approx(0, abs=1e-12) for c in report["comparisons"] for f in c["features"])


def test_the_baselines_bins_hold_equal_rows_and_frequent_values_and_zero_alone():
    # 20 values 1..20, one row each: deciles, each bin (edges[i], edges[i + 1]] two values
    values, rows = np.arange(1.0, 21.0), np.ones(20)
    assert reference_edges(values, rows, zeros=False).tolist() == [np.nextafter(1.0, 0)] + list(range(2, 21, 2))
    # a value with a tenth of the rows or more is a bin by itself: 0 (50 rows), 3 (30 rows), 4 (10 rows); 0 is
    # one also when the other side alone has zeros
    values, rows = np.array([0.0, 1.0, 2.0, 3.0, 4.0]), np.array([50.0, 5.0, 5.0, 30.0, 10.0])
    assert reference_edges(values, rows, zeros=True).tolist() == [np.nextafter(0.0, -1), 0.0, 2.0,
                                                                   np.nextafter(3.0, 0), 3.0, np.nextafter(4.0, 0),
                                                                   4.0]
    assert reference_edges(np.array([1.0, 2.0]), np.array([1.0, 1.0]), zeros=True).tolist() == [
        np.nextafter(0.0, -1), 0.0, np.nextafter(1.0, 0), 1.0, np.nextafter(2.0, 0), 2.0]
    # rows below the first edge, in each bin, above the last: a value's rows are its own, a bucket between two
    # values spreads its rows over its width
    edges = np.array([np.nextafter(0.0, -1), 0.0, 2.0, 5.0])
    assert binned(np.array([0.0, 1.0, 3.0]), np.array([5.0, 2.0, 4.0]), edges).tolist() == [0.0, 5.0, 4.0, 2.0, 0.0]
    assert binned(np.array([-1.0, 2.0, 6.0]), np.array([1.0, 3.0, 2.0]), edges).tolist() == [
        2.0, 0.0, 2.0, 1.5, 0.5]
    assert jensen_shannon(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == 1.0  # disjoint: the log-2 maximum


def test_train_and_eval_of_census_pass_at_the_default_thresholds(census_run):
    code, report = validate(census_run.output_dir)
    assert code == 0 and report["crossed"] == 0
    features = report["comparisons"][0]["features"]
    assert {(f["measure"], f["threshold"]) for f in features} == set(DEFAULT_THRESHOLDS.items())


@pytest.mark.parametrize("flag, message", [("x", "--threshold x: not a distance"),
                                           ("nosuch=0.1", "--threshold: no feature nosuch")])
def test_a_bad_threshold_is_one_line_and_exit_2(census_run, flag, message):
    result = CliRunner().invoke(app, ["validate", census_run.output_dir, "--threshold", flag])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and message in result.output


def test_new_data_applied_to_the_run_is_validated_against_it(census_run, shifted_census, tmp_path):
    """`skewless apply` of the run's graph to the shifted file, then `validate OUTPUT --against RUN`: the
    applied output has statistics and no config, its splits are compared with the run's."""
    from skewless.pipelines import apply

    _, shifted_path = shifted_census
    applied = apply(census_run.output_dir, str(tmp_path / "applied"), inputs=[str(shifted_path)])
    code, report = validate(applied.output_dir, "--against", census_run.output_dir, "--threshold", "0.05")
    assert code == 1
    assert sorted(c["test"].rsplit(":", 1)[1] for c in report["comparisons"]) == ["eval", "train"]
    for comparison in report["comparisons"]:
        crossed = {f["feature"] for f in comparison["features"] if f["verdict"] == "CROSSED"}
        assert crossed == {"age", "workclass"}, comparison["test"]


def test_a_folder_without_statistics_is_one_line_and_exit_2(tmp_path):
    result = CliRunner().invoke(app, ["validate", str(tmp_path)])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "no statistics" in result.output
