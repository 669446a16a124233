"""The transform graph loaded once per process and contents (pipelines/write/loaded_graph.py): a folder of the same
files anywhere gets the graph loaded before, a folder differing by one byte or one file name loads its own, and the
loaded graph transforms as a graph loaded from the folder itself does."""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
from example_job import ODD_ROWS, example_rows
from real_data import example_of

from skewless.pipelines.output.files import folder_digest
from skewless.pipelines.write import loaded_graph
from skewless.run_directory import RunDirectory


@pytest.fixture
def graph_dir(example_run, tmp_path):
    folder = tmp_path / "graph"
    shutil.copytree(RunDirectory(example_run.output_dir).graph_dir, folder)
    loaded_graph.forget()
    yield folder
    loaded_graph.forget()


def _vocabulary(folder):
    assets = folder / "transform_fn" / "assets"
    return next(assets / name for name in sorted(os.listdir(assets)))


def test_a_folder_of_the_same_files_gets_the_loaded_graph(graph_dir, tmp_path):
    first = loaded_graph.transform_output(str(graph_dir))
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(graph_dir, elsewhere)
    assert loaded_graph.transform_output(str(elsewhere)) is first
    # its files are a copy kept by this process: the run's own folder may go
    shutil.rmtree(graph_dir)
    shutil.rmtree(elsewhere)
    assert first.transformed_feature_spec()


def test_one_byte_or_one_name_changed_loads_another_graph(graph_dir, tmp_path):
    first = loaded_graph.transform_output(str(graph_dir))
    vocabulary = _vocabulary(graph_dir)
    tokens = vocabulary.read_bytes()
    # the first token's first letter, changed in case: the same length, one bit
    vocabulary.write_bytes(bytes([tokens[0] ^ 0x20]) + tokens[1:])
    assert loaded_graph.transform_output(str(graph_dir)) is not first
    vocabulary.write_bytes(tokens)
    assert loaded_graph.transform_output(str(graph_dir)) is first
    renamed = tmp_path / "renamed"
    shutil.copytree(graph_dir, renamed)
    (renamed / "transform_fn" / "assets" / vocabulary.name).rename(
        renamed / "transform_fn" / "assets" / f"{vocabulary.name}_")
    assert folder_digest(str(renamed)) != folder_digest(str(graph_dir))


def test_the_kept_graph_transforms_as_the_folders_own(graph_dir, tmp_path):
    kept = loaded_graph.transform_output(str(graph_dir))
    again = tmp_path / "again"
    shutil.copytree(graph_dir, again)
    assert loaded_graph.transform_output(str(again)) is kept
    own = tft.TFTransformOutput(str(again))
    rows = [{name: (value.decode() if isinstance(value, bytes) else value) for name, value in row.items()}
            for row in example_rows(40) + ODD_ROWS]
    features = tf.io.parse_example([example_of(row) for row in rows], own.raw_feature_spec())
    expected = own.transform_raw_features(features)
    actual = kept.transform_raw_features(features)
    assert expected.keys() == actual.keys()
    for name in expected:
        np.testing.assert_array_equal(tf.convert_to_tensor(actual[name]).numpy(),
                                      tf.convert_to_tensor(expected[name]).numpy())


def test_only_the_last_few_graphs_stay_loaded(graph_dir, monkeypatch):
    monkeypatch.setattr(loaded_graph, "KEPT", 1)
    first = loaded_graph.transform_output(str(graph_dir))
    kept_folder = first.transform_savedmodel_dir
    vocabulary = _vocabulary(graph_dir)
    tokens = vocabulary.read_bytes()
    vocabulary.write_bytes(bytes([tokens[0] ^ 0x20]) + tokens[1:])
    loaded_graph.transform_output(str(graph_dir))
    assert not os.path.exists(kept_folder)  # dropped with its loaded graph
    vocabulary.write_bytes(tokens)
    assert loaded_graph.transform_output(str(graph_dir)) is not first


def test_a_full_temporary_disk_loads_the_folder_itself(graph_dir, monkeypatch):
    def no_space(source, target):
        os.makedirs(target)
        (open(os.path.join(target, "partial"), "wb")).close()
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(loaded_graph.shutil, "copytree", no_space)
    output = loaded_graph.transform_output(str(graph_dir))
    assert output.transform_savedmodel_dir == str(graph_dir / "transform_fn")
    assert output.transformed_feature_spec()
    assert not loaded_graph._outputs and os.listdir(loaded_graph._store()) == []  # nothing kept, no partial copy
