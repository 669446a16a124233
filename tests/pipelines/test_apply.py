"""`skewless apply`: a run's graph applied to new data, never re-analyzed (issue 21, item 1)."""

import csv
import json
import os

import numpy as np
import pytest

from commands import cli
from run_output import read_rows

WORKCLASSES = ["Private", "Self-emp", "Gov", "Never-worked"]
UNSEEN = "Space-agency"
ROWS = 2000


def write_csv(path, columns, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)
    return str(path)


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    """A run on a CSV of ages, workclasses and labels, with one row the row checks quarantine."""
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("apply")
    rng = np.random.default_rng(21)
    ages = rng.integers(17, 90, ROWS)
    workclasses = rng.choice(WORKCLASSES, ROWS, p=[0.6, 0.2, 0.15, 0.05])
    labels = rng.choice(["<=50K", ">50K"], ROWS)
    rows = [[a, w, l] for a, w, l in zip(ages, workclasses, labels)]
    rows.insert(700, ["not-a-number", "Private", "<=50K"])
    path = write_csv(folder / "train.csv", ["age", "workclass", "label"], rows)
    result = run({
        "name": "apply",
        "input": {"format": "csv", "paths": [path], "header": True},
        "features": {"age": {"transform": "z_score"},
                     "workclass": {"transform": "vocabulary", "num_oov_buckets": 1}},
        "label": {"column": "label", "map": {"<=50K": 0, ">50K": 1}},
        "output": {"dir": str(folder / "run"), "shards": 2},
    })
    return {"folder": folder, "run": result.output_dir, "ages": ages, "workclasses": workclasses, "labels": labels}


@pytest.fixture(scope="module")
def shifted(training):
    """The training rows ten years older, with every 50th workclass one the run never saw."""
    workclasses = training["workclasses"].copy()
    workclasses[::50] = UNSEEN
    return {"ages": training["ages"] + 10, "workclasses": workclasses, "labels": training["labels"]}


def test_shifted_data_takes_the_training_runs_mean_std_and_vocabulary(training, shifted, tmp_path):
    import tensorflow_transform as tft

    from skewless.pipelines import apply
    from skewless.pipelines.output.files import folder_digest
    from skewless.safe_names import vocabulary_filename

    path = write_csv(tmp_path / "shifted.csv", ["age", "workclass", "label"],
                     zip(shifted["ages"], shifted["workclasses"], shifted["labels"]))
    result = apply(training["run"], str(tmp_path / "applied"), inputs=[path], one_split=True)
    rows, _ = read_rows(result.output_dir, "all")

    # z-scores with the training data's mean and (population) std, not the shifted data's
    mean, std = training["ages"].mean(), training["ages"].std()
    np.testing.assert_allclose(rows["age"], (shifted["ages"] - mean) / std, rtol=1e-5, atol=1e-5)
    assert abs(rows["age"].mean() - 10 / std) < 1e-3  # re-analyzed, it would be 0
    # ids from the training vocabulary; the unseen value lands in the OOV bucket, after the vocabulary
    graph = tft.TFTransformOutput(os.path.join(training["run"], "transform_graph"))
    vocabulary = [v.decode() for v in graph.vocabulary_by_name(vocabulary_filename("workclass"))]
    assert sorted(vocabulary) == sorted(WORKCLASSES)
    expected = [vocabulary.index(w) if w != UNSEEN else len(vocabulary) for w in shifted["workclasses"]]
    np.testing.assert_array_equal(rows["workclass"], expected)
    np.testing.assert_array_equal(rows["label"], (shifted["labels"] == ">50K").astype(np.int64))

    summary = json.loads(open(os.path.join(result.output_dir, "run.json")).read())
    graph_dir = os.path.join(training["run"], "transform_graph")
    assert summary["applied"] == {"run": training["run"], "graph_sha256": folder_digest(graph_dir),
                                  "label_left_out": False}
    assert summary["oov_rows"] == {"workclass": int(np.sum(shifted["workclasses"] == UNSEEN))}
    assert summary["rows"] == {"read": ROWS, "written": {"all": ROWS}, "quarantined": 0}


def test_graph_digest_is_sha256sum_of_the_graph_files(training):
    import hashlib
    import subprocess

    from skewless.pipelines.output.files import folder_digest

    graph_dir = os.path.join(training["run"], "transform_graph")
    listing = subprocess.run("find . -type f | LC_ALL=C sort | xargs sha256sum", shell=True, cwd=graph_dir,
                             capture_output=True, check=True).stdout
    assert folder_digest(graph_dir) == hashlib.sha256(listing).hexdigest()


def test_applying_a_run_to_its_own_input_rewrites_its_data_byte_for_byte(training, tmp_path):
    from skewless.pipelines import apply

    result = apply(training["run"], str(tmp_path / "again"))
    for folder in ("data", "quarantine"):
        names = sorted(os.listdir(os.path.join(training["run"], folder)))
        assert names == sorted(os.listdir(os.path.join(result.output_dir, folder)))
        for name in names:
            with open(os.path.join(training["run"], folder, name), "rb") as ran, \
                    open(os.path.join(result.output_dir, folder, name), "rb") as applied:
                assert ran.read() == applied.read(), f"{folder}/{name} differs"
    assert result.rows["quarantined"] == 1


def test_input_without_the_label_column_is_transformed_without_the_label(training, shifted, tmp_path):
    import tensorflow as tf

    from skewless.pipelines import apply, make_dataset

    labeled = apply(training["run"], str(tmp_path / "labeled"), one_split=True, inputs=[
        write_csv(tmp_path / "labeled.csv", ["age", "workclass", "label"],
                  zip(shifted["ages"], shifted["workclasses"], shifted["labels"]))])
    unlabeled = apply(training["run"], str(tmp_path / "unlabeled"), one_split=True, inputs=[
        write_csv(tmp_path / "unlabeled.csv", ["workclass", "age"], zip(shifted["workclasses"], shifted["ages"]))])
    assert unlabeled.label_left_out and not labeled.label_left_out

    with_label, _ = read_rows(labeled.output_dir, "all")
    without_label, records = read_rows(unlabeled.output_dir, "all")
    assert sorted(without_label) == ["age", "workclass"]
    for name in without_label:
        np.testing.assert_array_equal(without_label[name], with_label[name])
    # no label of any value in the shards themselves
    assert set(tf.train.Example.FromString(records[0].numpy()).features.feature) == {"age", "workclass"}

    batches = list(make_dataset(unlabeled.output_dir, split="all", batch_size=ROWS, shuffle_buffer=0))
    assert len(batches) == 1 and sorted(batches[0]) == ["age", "workclass"]
    assert batches[0]["age"].shape[0] == ROWS


@pytest.mark.parametrize("case", ["not a run", "output exists", "input missing"])
def test_user_errors_are_one_line_and_exit_2(training, tmp_path, case):
    arguments = {
        "not a run": [str(tmp_path), "--output", str(tmp_path / "out")],
        "output exists": [training["run"], "--output", training["run"]],
        "input missing": [training["run"], "--output", str(tmp_path / "out"), "--input", str(tmp_path / "none.csv")],
    }[case]
    named = {"not a run": str(tmp_path), "output exists": training["run"], "input missing": "none.csv"}[case]
    answer = cli("apply", *arguments)
    assert answer.returncode == 2, answer.stderr
    lines = answer.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], answer.stderr
    assert not os.path.exists(tmp_path / "out")


def test_a_synthetic_run_applied_to_a_csv_with_a_header(example_run, tmp_path):
    """Another format than the run's: a CSV named by --format and --header, its columns typed as the run's."""
    import tensorflow_transform as tft

    from example_job import EXAMPLE_CONFIG
    from skewless.pipelines import apply
    from skewless.safe_names import vocabulary_filename

    training_ages = np.array([row["age"] for row in synthetic(EXAMPLE_CONFIG["input"]["seed"], 4000)])
    new = synthetic(11, 300)
    columns = [name for name in new[0] if name != "label"]
    path = write_csv(tmp_path / "new.csv", columns, [[as_text(row[name]) for name in columns] for row in new])
    result = apply(example_run.output_dir, str(tmp_path / "applied"), inputs=[path], input_format="csv", header=True,
                   one_split=True)
    applied, _ = read_rows(result.output_dir, "all")

    ages = np.array([row["age"] for row in new])
    np.testing.assert_allclose(applied["age"], (ages - training_ages.mean()) / training_ages.std(), rtol=1e-5, atol=1e-5)
    vocabulary = tft.TFTransformOutput(example_run.graph_dir).vocabulary_by_name(vocabulary_filename("workclass"))
    expected = [list(vocabulary).index(row["workclass"]) if row["workclass"] in vocabulary else len(vocabulary)
                for row in new]
    np.testing.assert_array_equal(applied["workclass"], expected)
    assert result.label_left_out and result.rows["quarantined"] == 0


def synthetic(seed, count) -> list[dict]:
    """`count` rows of the synthetic census-like set, as dicts."""
    from skewless.pipelines.reading.synthetic_rows import synthetic_rows

    return [row for _, table in synthetic_rows(seed, 0, count) for row in table.to_pylist()]


def as_text(value):
    return value.decode() if isinstance(value, bytes) else "" if value is None else value


NEW_FILES = {  # name -> (how its rows are written, the error a user gets, or None: applied)
    "new.csv": ("csv", None),
    "new.jsonl": ("jsonl", None),
    "new.ndjson.gz": ("jsonl.gz", None),
    "new-rows": ("csv", "cannot tell the format from the name"),
    "lacking.jsonl": ("jsonl without capital_gain", "features.capital_gain: no column 'capital_gain'"),
}


@pytest.mark.parametrize("name", list(NEW_FILES))
def test_new_files_given_without_a_format_are_read_as_their_names_say(example_run, tmp_path, name):
    """A run of the synthetic set (the README's main job) applied to new files, no --format: the files' rows
    are what is applied (counted here), never the run's own generator read again in their place."""
    import gzip

    from example_job import EXAMPLE_CONFIG

    kind, refused = NEW_FILES[name]
    new = synthetic(13, 250)
    columns = [column for column in new[0] if column != "label"]
    if kind.startswith("jsonl"):
        kept = [column for column in columns if not (kind.endswith("capital_gain") and column == "capital_gain")]
        text = "".join(json.dumps({column: as_text(row[column]) or None for column in kept}) + "\n" for row in new)
        opened = gzip.open if kind.endswith(".gz") else open
        with opened(tmp_path / name, "wt") as handle:
            handle.write(text)
    else:
        write_csv(tmp_path / name, columns, [[as_text(row[column]) for column in columns] for row in new])

    out = tmp_path / "applied"
    answer = cli("apply", example_run.output_dir, "--input", str(tmp_path / name), "--output", str(out),
                 "--splits", "all")
    if refused:
        assert answer.returncode == 2, answer.stderr
        lines = answer.stderr.strip().splitlines()
        assert len(lines) == 1 and refused in lines[0] and ("--format" in lines[0]) == (kind == "csv"), answer.stderr
        assert not out.exists()
        return
    assert answer.returncode == 0, answer.stderr
    assert json.loads((out / "run.json").read_text())["rows"]["read"] == len(new)
    applied, _ = read_rows(str(out), "all")
    training_ages = np.array([row["age"] for row in synthetic(EXAMPLE_CONFIG["input"]["seed"], 4000)])
    ages = np.array([row["age"] for row in new])
    np.testing.assert_allclose(applied["age"], (ages - training_ages.mean()) / training_ages.std(), rtol=1e-5,
                               atol=1e-5)
