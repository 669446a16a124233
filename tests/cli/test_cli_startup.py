"""The command line answers what needs no TensorFlow without importing it: --version, --help, a config error,
an existing output (issue 18, item 5). Checked on the modules a real `skewless` process loaded, not on time."""

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from example_job import example_config

HEAVY = ("tensorflow", "tensorflow_transform", "apache_beam", "keras", "tfx_bsl")

# Runs the command as the `skewless` script does, then prints on stdout's last line which heavy modules it loaded.
_RUN_AND_LIST = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules))))
sys.argv = ["skewless", *{args!r}]
from skewless.cli import main
main()
"""


def skewless(*args, cwd=None):
    """Runs `skewless ARGS` in a fresh process: (exit code, stdout without the last line, stderr, heavy modules)."""
    environment = {key: value for key, value in os.environ.items() if key != "SKEWLESS_DEBUG"}
    done = subprocess.run([sys.executable, "-c", _RUN_AND_LIST.format(heavy=HEAVY, args=list(args))],
                          capture_output=True, text=True, env=environment, cwd=cwd, timeout=300)
    *out, loaded = done.stdout.splitlines()
    return done.returncode, "\n".join(out), done.stderr, json.loads(loaded)


def test_version_from_the_package_metadata():
    code, out, err, loaded = skewless("--version")
    assert (code, err, loaded) == (0, "", [])
    assert out == f"skewless {importlib.metadata.version('skewless')}"


def test_help_loads_nothing_heavy():
    code, out, _, loaded = skewless("--help")
    assert code == 0 and "--version" in out and "run" in out
    assert loaded == []


def test_config_error_before_tensorflow(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(tmp_path / "out")) + "bogus: 1\n")
    code, _, err, loaded = skewless("run", str(path))
    assert code == 2
    assert err.splitlines() == [f"skewless: error: {path}:{len(path.read_text().splitlines())}: bogus: unknown key"]
    assert loaded == []


def test_set_error_names_the_override_not_a_config_line(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(tmp_path / "out")))
    code, _, err, loaded = skewless("run", str(path), "--set", "features.age.transform=zscore")
    assert code == 2 and loaded == []
    [line] = err.splitlines()
    assert line.startswith("skewless: error: --set features.age.transform=zscore: unknown value 'zscore' (")
    assert str(path) not in line


def test_existing_output_refused_before_tensorflow(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(out)))
    code, _, err, loaded = skewless("run", str(path))
    assert code == 2
    assert err.splitlines() == [f"skewless: error: {out}: output directory exists (pass --overwrite to replace it)"]
    assert loaded == []


def test_inspect_reads_a_plain_run_without_tensorflow(example_run):
    """The example's schemas hold plain features only: their specs (compared with tf.Transform's in
    test_inspect.py) and vocabularies are read from the files."""
    code, out, err, loaded = skewless("inspect", example_run.output_dir, "--json")
    assert (code, err, loaded) == (0, "", [])
    assert json.loads(out)["rows"]["read"] == example_run.rows["read"]


def test_tensorflow_native_log_lines_only_with_debug(tmp_path):
    """`export` imports TensorFlow before it finds the model missing: its C++ start-up lines (absl's format)
    are hidden, unless --debug asks for everything."""
    args = ["-m", "skewless", "export", str(tmp_path), "--model", str(tmp_path / "no.keras"),
            "--out", str(tmp_path / "x")]
    environment = {k: v for k, v in os.environ.items() if k not in ("SKEWLESS_DEBUG", "TF_CPP_MIN_LOG_LEVEL")}
    quiet, debug = (subprocess.run([sys.executable, *args, *extra], capture_output=True, text=True, env=environment,
                                   timeout=300) for extra in ([], ["--debug"]))
    native = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d", re.MULTILINE)
    assert quiet.returncode == 2 and len(quiet.stderr.splitlines()) == 1, quiet.stderr
    assert debug.returncode != 0 and native.search(debug.stderr), debug.stderr


def test_run_loads_no_keras_3_and_ends_through_the_exit_handlers(tmp_path):
    """A job needs tf.Transform's Keras 2 (tf_keras), not Keras 3, which `import tensorflow` used to load;
    the process skips the interpreter's teardown, yet runs the exit handlers (the one that lists the loaded
    modules is one) and flushes what it printed (stdout is a pipe here, so buffered)."""
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(example_config(tmp_path / "out")))
    code, out, err, loaded = skewless("run", str(path))
    assert code == 0, err
    assert loaded == ["apache_beam", "tensorflow", "tensorflow_transform", "tfx_bsl"]
    rows = json.loads((tmp_path / "out" / "run.json").read_text())["rows"]
    assert out.splitlines()[-2].startswith(f"{tmp_path / 'out'}: read {rows['read']:,} rows")
    assert out.splitlines()[-1] == f"report: {tmp_path / 'out' / 'report.html'}"  # the last line names the page


def test_jax_is_hidden_only_while_the_stack_is_imported():
    """tf.lite imports JAX if installed; the job commands' import leaves it out, and it imports as usual after."""
    if importlib.util.find_spec("jax") is None:
        pytest.skip("JAX is not installed: nothing to hide")
    script = ("import sys\nfrom skewless import runtime\nruntime.import_tf_transform_stack('tensorflow')\n"
              "print('jax' in sys.modules)\nimport jax\nprint('jax' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_run_with_the_keras_preprocessor_loads_keras_3_after_the_stack(tmp_path):
    """The job command imports the stack with tf.keras as Keras 2; output.keras_preprocessor still builds a
    Keras 3 model in that process, and the job's own check finds every feature's output equal to the graph's."""
    path = tmp_path / "job.yaml"
    config = example_config(tmp_path / "out", input={"format": "synthetic", "rows": 1500, "seed": 4},
                            output={"shards": 1, "keras_preprocessor": True})
    path.write_text(yaml.safe_dump(config))
    code, out, err, loaded = skewless("run", str(path))
    assert code == 0, err
    assert "keras" in loaded
    check = json.loads((tmp_path / "out" / "keras_preprocessor.json").read_text())
    assert check["rows"] >= 1000
    assert {feature["status"] for feature in check["features"]} == {"exact"}, check["features"]
    assert (tmp_path / "out" / "keras_preprocessor.keras").stat().st_size > 0
