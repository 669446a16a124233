"""Every command answers a bad input it is given with one line naming the file and exit code 2;
`SKEWLESS_DEBUG=1` shows the traceback instead (issue 15, item 7)."""

import errno

import pytest
from commands import cli

from skewless.errors import MESSAGE_CHARACTERS, one_line


def run_dir(folder, summary):
    """A folder that looks like a run directory (a valid config.yaml) with `summary` as its run.json."""
    folder.mkdir()
    (folder / "config.yaml").write_text(
        "name: t\ninput: {format: synthetic, rows: 20}\nfeatures: {age: {transform: z_score}}\n"
        f"output: {{dir: {folder}}}\n"
    )
    (folder / "run.json").write_text(summary)
    return folder


def corrupt_run(folder):
    return run_dir(folder, "{not json")


# Each command with a bad input, and the file its error line must name.
CASES = {
    "run: config that is not YAML": lambda tmp: (["run", str(_write(tmp / "job.yaml", "a: [b"))], "job.yaml"),
    "inspect: run.json not JSON": lambda tmp: (["inspect", str(corrupt_run(tmp / "run"))], "run.json"),
    "report: missing run directory": lambda tmp: (["report", str(tmp / "nothing")], "nothing"),
    # verify's pipeline fails to load the graph: an error (2), not a difference (verify's exit code 1)
    "verify: run without its graph": lambda tmp: (["verify", str(corrupt_run(tmp / "run")), "--sample", "3"],
                                                  "transform_graph"),
    "export: missing model file": lambda tmp: (
        ["export", str(corrupt_run(tmp / "run")), "--model", str(tmp / "no.keras"), "--out", str(tmp / "out")],
        "no.keras",
    ),
    "schema infer: missing input": lambda tmp: (["schema", "infer", str(tmp / "none.csv"), "--header"],
                                                "none.csv"),
    "schema validate: corrupt schema": lambda tmp: (
        ["schema", "validate", str(_write(tmp / "a.csv", "a\n1\n")), "--header",
         "--schema", str(_write(tmp / "s.pbtxt", "feature { name: "))],
        "s.pbtxt",
    ),
}


def _write(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_and_exit_2_for_every_command(case, tmp_path):
    args, named = CASES[case](tmp_path)
    completed = cli(*args)
    assert completed.returncode == 2, completed.stderr[-3000:]
    assert completed.stderr.count("\n") == 1, completed.stderr[-3000:]
    assert completed.stderr.startswith("skewless: error: ") and named in completed.stderr
    assert "Traceback" not in completed.stderr


@pytest.mark.parametrize("case", CASES)
def test_debug_shows_the_traceback_for_every_command(case, tmp_path):
    args, _ = CASES[case](tmp_path)
    completed = cli(*args, debug=True)
    assert completed.returncode != 0 and "Traceback (most recent call last)" in completed.stderr



def test_debug_flag_shows_the_traceback(tmp_path):
    completed = cli("inspect", str(corrupt_run(tmp_path / "run")), "--debug")
    assert completed.returncode != 0 and "Traceback (most recent call last)" in completed.stderr
    assert "run.json: cannot read run summary" in completed.stderr


def test_an_unexpected_errors_long_message_is_cut_in_its_line():
    # Beam's singleton-view error quotes two whole elements (a run's statistics: 100 KB on one line)
    message = "PCollection of size 2 accessed as a singleton view. First two elements are " + "x" * 100_000
    line = one_line(ValueError(message + "\nsecond line"), "job.yaml")
    shown = message[:MESSAGE_CHARACTERS]
    assert line == (f"job.yaml: ValueError: {shown}... ({len(message) - MESSAGE_CHARACTERS:,} more characters) "
                    "(rerun with --debug for the traceback)")
    short = one_line(ValueError("x" * MESSAGE_CHARACTERS), "job.yaml")
    assert "more characters" not in short and "x" * MESSAGE_CHARACTERS in short


@pytest.mark.parametrize("error", [
    OSError(errno.ENOSPC, "No space left on device"),
    RuntimeError("OSError: [Errno 28] No space left on device [while running 'TransformAndWrite/WriteParts']"),
    RuntimeError("a step failed"),
], ids=["an OSError", "Beam's text of one", "raised from one"])
def test_a_full_disk_is_named_as_one_and_where_the_command_writes(error):
    if str(error) == "a step failed":
        try:
            try:
                raise OSError(errno.ENOSPC, "No space left on device", "/out.staging/run/data/x")
            except OSError as cause:
                raise error from cause
        except RuntimeError as raised:
            error = raised
    line = one_line(error, "job.yaml")
    named = "/out.staging/run/data/x" if str(error) == "a step failed" else "job.yaml"  # the file, where one is named
    assert line.startswith(f"{named}: No space left on device: the disk where the command writes is full")
    assert "staging folder" in line and "unchanged" in line
