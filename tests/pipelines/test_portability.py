"""The pipeline pickles and runs in worker processes and threads: their runs write the in-process run's bytes."""

import os

import pytest

from example_job import example_config
from run_output import files_of

WORKERS = {
    "multi_processing": ["--direct_num_workers=2", "--direct_running_mode=multi_processing"],
    "multi_threading": ["--direct_num_workers=2", "--direct_running_mode=multi_threading"],
}


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    """The in-process run's files; the runs compared with it write to the same path, which the graph names."""
    from skewless.pipelines import run

    config = example_config(tmp_path_factory.mktemp("portability") / "run")
    return config, files_of(run(config).output_dir)


@pytest.mark.parametrize("mode", WORKERS)
def test_worker_run_equals_the_in_process_run(in_process, mode):
    """Shards, saved_model.pb, vocabularies, variables and metadata, byte for byte.

    saved_model.pb holds names TensorFlow numbers with per-process counters; the job rewrites them
    canonically (pipelines/analyze/canonical_graph.py), so where the graph was traced does not show.
    """
    import tensorflow_transform as tft

    from skewless.pipelines import run

    config, reference = in_process
    result = run(config, overwrite=True, beam_args=WORKERS[mode])
    files = files_of(result.output_dir)
    assert sorted(files) == sorted(reference)
    assert [name for name in files if files[name] != reference[name]] == []
    assert "transform_graph/transform_fn/saved_model.pb" in files
    assert sum(name.startswith("data/") for name in files) == 4
    assert tft.TFTransformOutput(os.path.join(result.output_dir, "transform_graph")).transformed_feature_spec()
