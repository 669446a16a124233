"""The Python API prints no noise on stderr (issue 42 item 7): pasting the README's training block printed ~15
lines (TensorFlow's CUDA and oneDNN notices, "failed call to cuInit", tf.data's INFO lines, Keras' warning that
`shuffle=True` does not apply to a Dataset). Run without TF_CPP_MIN_LOG_LEVEL, as a reader's shell has it."""

import shutil
import subprocess
import sys

import pytest

from doc_blocks import reader_environment, runnable_blocks
from example_job import REPO


def _plain_environment() -> dict:
    environment = reader_environment()
    del environment["TF_CPP_MIN_LOG_LEVEL"]
    return environment


def test_the_readme_training_block_prints_nothing_on_stderr(example_run_dir, tmp_path):
    shutil.copytree(example_run_dir, tmp_path / "out" / "example")
    [training] = [block for block in runnable_blocks(REPO / "README.md") if "model.fit(" in block.code]
    # pasted into `python -c`, as a reader runs a snippet (no source file: AutoGraph cannot read the lambda's)
    done = subprocess.run([sys.executable, "-c", training.code], cwd=tmp_path, env=_plain_environment(),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr == ""
    assert "Epoch 2/2" in done.stdout and (tmp_path / "model.keras").stat().st_size > 0


@pytest.mark.parametrize("statement", ["import skewless.layers", "from skewless.pipelines import make_dataset"])
def test_importing_the_python_api_is_quiet(statement):
    done = subprocess.run([sys.executable, "-c", statement], env=_plain_environment(), capture_output=True,
                          text=True, timeout=600)
    assert (done.returncode, done.stderr) == (0, "")
