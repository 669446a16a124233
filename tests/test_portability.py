"""The pipeline pickles and runs in worker processes: multi-process and in-process runs write the same output."""

import os

import numpy as np

from conftest import example_config
from test_atomic import files_of


def test_multi_process_run_equals_the_in_process_run(example_run, tmp_path):
    """Shards, vocabularies, variables and metadata byte for byte; the graph transforms raw rows bit for bit.

    saved_model.pb itself differs only in the numbers TensorFlow gives the traced functions, which
    depend on what else the process that wrote it had traced (see README "Running at scale").
    """
    import tensorflow_transform as tft

    from skewless.layers import transform_raw_rows
    from skewless.pipelines import run
    from skewless.pipelines.synthetic import synthetic_rows

    config = example_config(tmp_path / "run")
    processes = run(config, beam_args=["--direct_num_workers=2", "--direct_running_mode=multi_processing"])
    ours, theirs = files_of(example_run.output_dir), files_of(processes.output_dir)
    assert sorted(ours) == sorted(theirs)
    differ = [name for name in ours if ours[name] != theirs[name]]
    assert differ in ([], ["transform_graph/transform_fn/saved_model.pb"])
    assert sum(name.startswith("data/") for name in ours) == 4
    rows = [row for _, table in synthetic_rows(config["input"]["seed"], 0, 300) for row in table.to_pylist()]
    a = transform_raw_rows(example_run.output_dir, rows)
    b = transform_raw_rows(processes.output_dir, rows)
    for name in a:
        assert a[name].dtype == b[name].dtype
        np.testing.assert_array_equal(a[name].view(np.uint8), b[name].view(np.uint8), err_msg=name)
    assert tft.TFTransformOutput(os.path.join(processes.output_dir, "transform_graph")).transformed_feature_spec()
