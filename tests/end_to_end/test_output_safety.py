"""Where a run may write: never over what another process published meanwhile, `--overwrite` only over a
previous run, one line (no traceback) when the output cannot be written or the pipeline fails, and
`--output` relative to the current directory."""

import errno
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from commands import cli
from example_job import example_config
from skewless.cli import app
from skewless.errors import OutputError
from skewless.pipelines.commands import run as job
from skewless import staged_folder

SMALL = {
    "input": {"format": "synthetic", "rows": 300, "seed": 1},
    "features": {"age": {"transform": "z_score"}, "workclass": {"transform": "vocabulary"}},
    "output": {"splits": {"train": 1.0}, "shards": 1},
}


def small_config(output_dir) -> dict:
    return example_config(output_dir, **SMALL)


def write_config(folder: Path, config: dict) -> Path:
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def staging_left(folder: Path) -> list[str]:
    return [name for name in os.listdir(folder) if ".staging" in name]


def assert_one_line_error(stderr: str, *fragments: str) -> None:
    """One error line, the last (TensorFlow's import notices and progress lines may come before it)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("skewless: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], stderr[-3000:]
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def publish_meanwhile(monkeypatch, output: Path, contents: dict[str, bytes]) -> None:
    """Another process publishes `contents` at `output` once this run has planned (after its up-front check)."""
    planned = job.plan

    def plan_then_another_run_publishes(config):
        result = planned(config)
        for name, data in contents.items():
            (output / name).parent.mkdir(parents=True, exist_ok=True)
            (output / name).write_bytes(data)
        return result

    monkeypatch.setattr(job, "plan", plan_then_another_run_publishes)


OTHER_RUN = {"run.json": b'{"other": "run"}', "data/train-00000-of-00001.tfrecord.gz": b"their shard"}


def test_publish_never_replaces_a_run_published_meanwhile(tmp_path, monkeypatch):
    output = tmp_path / "out"
    publish_meanwhile(monkeypatch, output, OTHER_RUN)
    result = CliRunner().invoke(app, ["run", str(write_config(tmp_path, small_config(output)))])
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, str(output), "--overwrite")
    assert tree(output) == OTHER_RUN
    assert staging_left(tmp_path) == []


def test_overwrite_at_publish_time_refuses_a_folder_that_appeared_meanwhile(tmp_path, monkeypatch):
    output = tmp_path / "out"
    theirs = {"notes.txt": b"mine", "photos/a.jpg": b"\xff\xd8"}
    publish_meanwhile(monkeypatch, output, theirs)
    with pytest.raises(OutputError, match="not a skewless run"):
        job.run(small_config(output), overwrite=True)
    assert tree(output) == theirs
    assert staging_left(tmp_path) == []


@pytest.fixture(params=["available", "missing"])
def renameat2(request, monkeypatch):
    """The kernel's renameat2, or none: staged_folder falls back to plain renames."""
    if request.param == "missing":
        def unavailable(source, destination, flags):
            raise OSError(errno.ENOSYS, "no renameat2")
        monkeypatch.setattr(staged_folder, "_renameat2", unavailable)
    return request.param


def test_rename_no_replace_refuses_an_existing_destination(tmp_path, renameat2):
    (tmp_path / "staged").mkdir()
    (tmp_path / "staged" / "run.json").write_text("new")
    for existing in ("empty", "full"):
        (tmp_path / existing).mkdir()
    (tmp_path / "full" / "run.json").write_text("old")
    for existing in ("empty", "full"):
        with pytest.raises(FileExistsError):
            staged_folder.rename_no_replace(str(tmp_path / "staged"), str(tmp_path / existing))
    assert (tmp_path / "full" / "run.json").read_text() == "old" and os.listdir(tmp_path / "empty") == []
    staged_folder.rename_no_replace(str(tmp_path / "staged"), str(tmp_path / "fresh"))
    assert (tmp_path / "fresh" / "run.json").read_text() == "new" and not (tmp_path / "staged").exists()


def test_publish_swaps_a_replaced_output_into_the_claim(tmp_path, renameat2):
    """With --overwrite the output path holds the old output until the new one takes its place (one exchanging
    rename where the kernel has it, else the old renamed into the claim first); the old one goes with the claim."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.json").write_text("old")
    claimed = staged_folder.claim(str(tmp_path / "out"))
    staged = Path(claimed) / staged_folder.STAGED
    (staged / "run.json").write_text("new")
    checked = []
    staged_folder.publish(str(staged), str(tmp_path / "out"), claimed, checked.append)
    assert checked == [str(tmp_path / "out")] and (tmp_path / "out" / "run.json").read_text() == "new"
    assert sorted(p.read_text() for p in Path(claimed).rglob("run.json")) == ["old"]
    staged_folder.release(claimed)
    assert staging_left(tmp_path) == []


@pytest.mark.parametrize("what", ["file", "user folder"])
def test_overwrite_refuses_what_is_not_a_previous_run(tmp_path, what):
    output = tmp_path / "out"
    if what == "file":
        output.write_bytes(b"precious")
        before = output.read_bytes()
    else:
        (output / "sub").mkdir(parents=True)
        (output / "thesis.tex").write_bytes(b"precious")
        before = tree(output)
    completed = cli("run", str(write_config(tmp_path, small_config(output))), "--overwrite")
    assert completed.returncode == 2
    assert_one_line_error(completed.stderr, str(output), "is a file" if what == "file" else "thesis.tex")
    assert (output.read_bytes() if what == "file" else tree(output)) == before
    assert staging_left(tmp_path) == []


@pytest.mark.parametrize("what", ["previous run", "empty folder"])
def test_overwrite_replaces_a_previous_run_or_an_empty_folder(tmp_path, what):
    output = tmp_path / "out"
    if what == "previous run":
        first = job.run(small_config(output))
        assert first.rows["read"] == 300
        # a shard of the previous run's (a run of more shards): replaced; a user's file would refuse the overwrite
        (output / "data" / "train-00007-of-00008.tfrecord.gz").write_bytes(b"old")
    else:
        output.mkdir()
    result = job.run(small_config(output), overwrite=True)
    assert result.rows == {"read": 300, "written": {"train": 300}, "quarantined": 0}
    assert not (output / "data" / "train-00007-of-00008.tfrecord.gz").exists() and (output / "run.json").exists()
    assert staging_left(tmp_path) == []


def test_overwrite_replaces_a_previous_run_holding_an_output_formats_run_files(tmp_path):
    """A SequenceExample run writes sequence_example.json beside its shards (the format's `run_files`): --overwrite
    replaces such a run as it replaces any other."""
    from skewless.output_formats import OUTPUT_FORMATS, output_format

    output = tmp_path / "out"
    job.run(small_config(output))
    run_files = {name for format_name in OUTPUT_FORMATS for name in output_format(format_name).run_files}
    assert run_files
    for name in run_files:
        (output / name).write_text("{}")
    job.run(small_config(output), overwrite=True)
    assert not any((output / name).exists() for name in run_files) and (output / "run.json").exists()


def test_unwritable_output_parent_is_one_line(tmp_path):
    (tmp_path / "a_file").write_bytes(b"x")
    for output, reason in ((tmp_path / "a_file" / "out", f"{tmp_path / 'a_file'} is a file, not a folder"),
                           (Path("/proc/skewless-out"), "in /proc")):
        completed = cli("run", str(write_config(tmp_path, small_config(output))))
        assert completed.returncode == 2
        assert_one_line_error(completed.stderr, f"{output}: cannot be created", reason)
    assert staging_left(tmp_path) == []


def test_error_raised_inside_the_pipeline_is_one_line_and_traceback_with_debug(tmp_path):
    config = small_config(tmp_path / "out")
    config.update(input={"format": "python", "generator": "generated_rows:breaks_in_the_pipeline"},
                  features={"id": {"transform": "passthrough"}, "city": {"transform": "vocabulary"}}, label=None)
    config["output"]["shards"] = 2
    path = write_config(tmp_path, config)
    completed = cli("run", str(path))
    assert completed.returncode == 2
    assert_one_line_error(completed.stderr, f"{path}: RuntimeError: the source broke mid-read")
    assert "second line" not in completed.stderr
    assert staging_left(tmp_path) == [] and not (tmp_path / "out").exists()
    debug = cli("run", str(path), debug=True)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_relative_output_on_the_command_line_is_relative_to_the_current_directory(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "here").mkdir()
    config = small_config("inside/out")  # a config path: relative to the config's folder
    path = write_config(tmp_path / "configs", config)
    from_flag = cli("run", str(path), "--output", "flagged/out", cwd=tmp_path / "here")
    assert from_flag.returncode == 0, from_flag.stderr[-2000:]
    assert (tmp_path / "here" / "flagged" / "out" / "run.json").exists()
    assert not (tmp_path / "configs" / "flagged").exists()
    from_config = cli("run", str(path), "--set", "output.dir=set/out", cwd=tmp_path / "here")
    assert from_config.returncode == 0, from_config.stderr[-2000:]
    assert (tmp_path / "configs" / "set" / "out" / "run.json").exists()
    assert not (tmp_path / "here" / "set").exists()


def test_a_claim_held_by_a_run_in_another_pid_namespace_is_live(tmp_path):
    """A run in a container sharing the volume records its own namespace's pid (often 1), which here is another
    process or none; its owner file, locked while it holds the claim, still shows it live: `clean` and another
    run refuse, and once it has ended the claim is cleaned."""
    import json
    import subprocess
    import sys

    from skewless.errors import OutputExistsError

    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from skewless import staged_folder\n"
        f"staged_folder.claim({str(out)!r}); print('claimed', flush=True); sys.stdin.read()")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "claimed"
        owner = Path(staged_folder.staging_name(str(out))) / staged_folder.OWNER_FILE
        record = json.loads(owner.read_text())
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        with open(owner, "r+") as handle:  # the same file (its lock stays): the pid as the other namespace saw it
            handle.write(json.dumps({**record, "pid": int(gone.stdout), "started": 1}))
            handle.truncate()
        with pytest.raises(OutputExistsError, match="a running skewless"):
            staged_folder.clean(str(out))
        with pytest.raises(OutputExistsError, match="another skewless run"):
            staged_folder.claim(str(out))
        assert owner.exists()
    finally:
        holder.communicate("")
    assert staged_folder.clean(str(out)) == [staged_folder.staging_name(str(out))]
