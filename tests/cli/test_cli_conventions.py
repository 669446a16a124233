"""One set of conventions across the commands (issue 32): `--output/-o` wherever a command writes (export's and
schema infer's former `--out` still accepted), help that shows flags as flags, and a first line from `run` before
it imports TensorFlow."""

import os
import subprocess
import sys

import pytest
import typer
import yaml
from typer.testing import CliRunner

from example_job import example_config
from skewless.cli import app

ROOT = typer.main.get_command(app)
WRITERS = {("run",): "output", ("apply",): "output", ("predict",): "output", ("export",): "out",
           ("schema", "infer"): "out"}


def _commands(group=ROOT, path=()):
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


@pytest.mark.parametrize("path", sorted(WRITERS), ids=" ".join)
def test_every_command_that_writes_takes_output_and_o(path):
    command = dict(_commands())[path]
    [option] = [p for p in command.params if p.name == WRITERS[path]]
    assert {"--output", "-o"} <= set(option.opts)


@pytest.mark.parametrize("flag", ["--output", "-o", "--out"])
@pytest.mark.parametrize("path", [("export",), ("schema", "infer")], ids=" ".join)
def test_export_and_schema_infer_keep_out_as_an_alias(path, flag):
    command = dict(_commands())[path]
    args = ["out/run", "--model", "m.keras"] if path == ("export",) else ["data.csv"]
    context = command.make_context(" ".join(path), [*args, flag, "place"])
    assert context.params[WRITERS[path]] == "place"


def test_every_command_writes_to_output_and_no_command_uses_out_alone():
    # a command added later that writes with --out only would break the convention
    for path, command in _commands():
        for param in command.params:
            if "--out" in param.opts:
                assert "--output" in param.opts, f"skewless {' '.join(path)}: --out without --output"


@pytest.mark.parametrize("path", [(), ("schema",), *(path for path, _ in _commands())], ids=lambda p: " ".join(p) or "skewless")
def test_help_shows_flags_without_a_value_type_and_arguments_by_name(path):
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "<bool>" not in shown.output
    command = dict(_commands()).get(path)
    for argument in [p for p in command.params if p.param_type_name == "argument"] if command else []:
        assert argument.name.upper() in shown.output.split("Usage:")[1].splitlines()[0]
    if path == ("run",):
        row = next(line for line in shown.output.splitlines() if "--overwrite" in line)
        assert "<" not in row  # a flag takes no value
        assert "<str>" in next(line for line in shown.output.splitlines() if "--output" in line)


def test_run_prints_its_first_line_before_importing_tensorflow(tmp_path):
    """A tensorflow that says when it is imported, then stops the command: the job's first line comes before."""
    fake = tmp_path / "fake" / "tensorflow"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("import sys\nprint('tensorflow imported', file=sys.stderr, flush=True)\n"
                                      "raise ImportError('not this time')\n")
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(example_config(tmp_path / "out")))
    environment = {key: value for key, value in os.environ.items() if key != "SKEWLESS_DEBUG"}
    environment["PYTHONPATH"] = str(tmp_path / "fake")
    done = subprocess.run([sys.executable, "-m", "skewless", "run", str(config)], capture_output=True, text=True,
                          env=environment, timeout=300)
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert lines[0] == "skewless run example: starting (importing TensorFlow, tf.Transform and Beam)", lines
    assert lines[1] == "tensorflow imported", lines
    assert lines[-1].startswith("skewless: error:") and "not this time" in lines[-1], lines
