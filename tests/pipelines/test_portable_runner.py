"""The job on Beam's portable runner: a job service and SDK workers in other processes, as under Flink/Spark.

Beam's local job service receives the pipeline proto (through tests/pipelines/portable_job_service.py, which runs a
job on the SDK workers it asks for: Beam's own runs every job on one) and a worker pool (`worker_pool_main`)
starts the SDK harnesses; the output must be byte for byte the in-process run's. A job whose job service is
unreachable, or whose workers never start, fails in bounded time with one line.
"""

import re

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from example_job import example_config
from scoring_data import small_export, write_scoring_csv

pytestmark = pytest.mark.portable

# the worker pool launches `python`: the one first on PATH must be this interpreter, with skewless installed
PYTHON_DIR = str(Path(sys.executable).parent)
JOB_SERVICE = str(Path(__file__).with_name("portable_job_service.py"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def _env(first_on_path: str = PYTHON_DIR) -> dict:
    return {**os.environ, "PATH": f"{first_on_path}{os.pathsep}{os.environ['PATH']}", "TF_CPP_MIN_LOG_LEVEL": "3"}


def _serve(command: list[str], port_flag: str, env: dict, log: Path):
    """Starts a Beam service on a free port; returns (process, port) once the port accepts."""
    port = _free_port()
    name = Path(command[-1]).name
    process = subprocess.Popen([sys.executable, *command, port_flag, str(port)], env=env,
                               stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{name} exited: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("localhost", port), timeout=1).close()
            return process, port
        except OSError:
            time.sleep(0.5)
    process.kill()
    pytest.fail(f"{name} did not listen on {port} within 120 s")


@pytest.fixture(scope="module")
def services(tmp_path_factory):
    """Beam's local job service, a worker pool of this python, and a pool whose `python` dies at start."""
    logs = tmp_path_factory.mktemp("services")
    broken_bin = logs / "broken-bin"
    broken_bin.mkdir()
    (broken_bin / "python").write_text("#!/bin/sh\necho 'this python cannot import skewless' >&2\nexit 1\n")
    (broken_bin / "python").chmod(0o755)
    started = [
        _serve([JOB_SERVICE], "--port", _env(), logs / "jobs.log"),
        _serve(["-m", "apache_beam.runners.worker.worker_pool_main"], "--service_port", _env(), logs / "pool.log"),
        _serve(["-m", "apache_beam.runners.worker.worker_pool_main"], "--service_port", _env(str(broken_bin)),
               logs / "broken-pool.log"),
    ]
    yield {"pool_log": logs / "pool.log",
           **{name: port for name, (_, port) in zip(("jobs", "pool", "broken_pool"), started)}}
    for process, _ in started:
        process.terminate()
    for process, _ in started:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def _skewless_run(config: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skewless", "run", str(config), *args], env=_env(),
                          capture_output=True, text=True, timeout=timeout)


def _portable_args(job_port: int, pool_port: int) -> list[str]:
    return ["--", "--runner=PortableRunner", f"--job_endpoint=localhost:{job_port}", "--environment_type=EXTERNAL",
            f"--environment_config=localhost:{pool_port}", "--direct_num_workers=2"]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def _workers_started(pool_log: Path) -> set[str]:
    return set(re.findall(r'worker_id="([^"]+)"', pool_log.read_text()))


def _one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("skewless: error")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr[-3000:]
    return errors[0]


def test_portable_runner_with_two_sdk_workers_writes_the_in_process_bytes(services, tmp_path):
    from skewless.pipelines import run

    output = tmp_path / "run"
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(example_config(output, output={"shards": 4})))
    # the graph records its output path, so both runs write to the same one
    run(str(config))
    in_process = tmp_path / "in-process"
    output.rename(in_process)

    workers_before = _workers_started(services["pool_log"])
    done = _skewless_run(config, *_portable_args(services["jobs"], services["pool"]))
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(_workers_started(services["pool_log"]) - workers_before) == 2
    for part in ("data", "transform_graph"):
        portable, expected = _files(output / part), _files(in_process / part)
        assert expected and portable.keys() == expected.keys()
        assert [name for name in expected if portable[name] != expected[name]] == []


def test_predict_on_the_portable_runner_writes_the_in_process_bytes(services, example_run, tmp_path):
    from skewless.pipelines import predict

    export = small_export(example_run.output_dir, tmp_path / "export")
    scoring = tmp_path / "new.csv"
    write_scoring_csv(scoring, 1000)
    in_process = predict(export, [str(scoring)], str(tmp_path / "in-process"), keys=["id"]).output_dir

    workers_before = _workers_started(services["pool_log"])
    output = tmp_path / "portable"
    done = subprocess.run([sys.executable, "-m", "skewless", "predict", export, "--input", str(scoring), "--output",
                           str(output), "--keys", "id", *_portable_args(services["jobs"], services["pool"])],
                          env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _workers_started(services["pool_log"]) - workers_before
    portable, expected = _files(output), _files(Path(in_process))
    del portable["run.json"], expected["run.json"]  # it holds the seconds each took
    assert len(expected) == 2 and portable == expected  # the predictions and the quarantined row


def test_unreachable_job_service_fails_at_once_with_one_line(tmp_path):
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(example_config(tmp_path / "run")))
    started = time.monotonic()
    done = _skewless_run(config, *_portable_args(_free_port(), _free_port()), timeout=180)
    assert done.returncode == 2
    assert "job service unreachable" in _one_error_line(done.stderr)
    assert time.monotonic() - started < 120
    assert [path.name for path in tmp_path.iterdir()] == ["job.yaml"]  # no output, no staging left


def test_workers_that_never_start_fail_after_start_timeout_with_one_line(services, tmp_path):
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(example_config(tmp_path / "run")))
    started = time.monotonic()
    done = _skewless_run(config, "--set", "runner.start_timeout=15",
                         *_portable_args(services["jobs"], services["broken_pool"]), timeout=300)
    assert done.returncode == 2
    assert "runner.start_timeout=15" in _one_error_line(done.stderr)
    assert time.monotonic() - started < 240
    assert [path.name for path in tmp_path.iterdir()] == ["job.yaml"]
