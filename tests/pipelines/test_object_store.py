"""A whole run on an S3-compatible server, through Beam's S3 filesystem, read back by every reader.

The server is moto's standalone S3 emulator (`moto[server]`; no real S3 server installs here), started
on a free port; boto3 (under Beam's filesystem and in this test) finds it through AWS_ENDPOINT_URL.
"""

import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from example_job import example_config

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto.server")
pytest.importorskip("apache_beam.io.aws.s3filesystem")

BUCKET = "skewless-test"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    settings = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        client = boto3.client("s3")
        deadline = time.time() + 30
        while True:
            try:
                client.create_bucket(Bucket=BUCKET)
                break
            except Exception:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        yield client
    finally:
        server.terminate()
        server.wait(10)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def runs(s3, example_run):
    """The same config run to s3:// and to a local folder (the suite's shared run of it)."""
    from skewless.pipelines import run

    remote = run(example_config(f"s3://{BUCKET}/run"))
    return remote.output_dir, example_run.output_dir


def _objects(client, prefix: str) -> dict[str, bytes]:
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)["Contents"]
    return {item["Key"][len(prefix):]: client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
            for item in listed}


def test_a_run_on_s3_holds_shards_graph_and_run_json_byte_identical_to_a_local_run(s3, runs):
    remote, local = runs
    objects = _objects(s3, "run/")
    assert "run.json" in objects and "transform_graph/transform_fn/saved_model.pb" in objects
    shards = sorted(name for name in objects if name.startswith("data/"))
    local_shards = sorted(os.path.relpath(os.path.join(root, name), local)
                          for root, _, names in os.walk(os.path.join(local, "data")) for name in names)
    assert shards == local_shards and len(shards) == 4  # 2 shards x train/eval
    for name in shards:
        with open(os.path.join(local, name), "rb") as handle:
            assert objects[name] == handle.read(), name
    assert not any(name.startswith(("run.staging", "tmp/", "_")) for name in objects)
    summary, local_summary = json.loads(objects["run.json"]), json.load(open(os.path.join(local, "run.json")))
    assert summary["rows"] == local_summary["rows"] and summary["features"] == local_summary["features"]


def test_make_dataset_reads_a_run_on_s3_like_the_local_run(runs):
    from skewless.pipelines import make_dataset

    remote, local = runs

    def rows(run_dir):
        batches = list(make_dataset(run_dir, "eval", batch_size=64, label="label"))
        return np.concatenate([b[0]["age"].numpy() for b in batches]), np.concatenate([b[1].numpy() for b in batches])

    (age, label), (local_age, local_label) = rows(remote), rows(local)
    assert len(age) == json.load(open(os.path.join(local, "run.json")))["rows"]["written"]["eval"]
    # the shards are read interleaved, so the row order may differ between two reads
    order, local_order = np.lexsort((label, age)), np.lexsort((local_label, local_age))
    np.testing.assert_array_equal(age[order], local_age[local_order])
    np.testing.assert_array_equal(label[order], local_label[local_order])


def test_cli_inspects_verifies_reports_and_exports_a_run_on_s3(s3, runs, tmp_path):
    import keras
    import tensorflow as tf
    from typer.testing import CliRunner

    from skewless.cli import app

    remote, local = runs
    described = CliRunner().invoke(app, ["inspect", "--json", remote])
    assert described.exit_code == 0, described.output
    description = json.loads(described.stdout)
    local_description = json.loads(CliRunner().invoke(app, ["inspect", "--json", local]).stdout)
    assert description.pop("run_dir") == remote
    for varies in ("run_dir", "seconds"):
        local_description.pop(varies)
    description.pop("seconds")
    assert description == local_description

    verified = CliRunner().invoke(app, ["verify", remote, "--sample", "200"])
    assert verified.exit_code == 0, verified.output

    reported = CliRunner().invoke(app, ["report", remote])
    assert reported.exit_code == 0 and reported.stdout.strip() == f"{remote}/report.html"
    assert remote.encode() in s3.get_object(Bucket=BUCKET, Key="run/report.html")["Body"].read()

    age = keras.Input((1,), name="age")
    keras.Model({"age": age}, keras.layers.Dense(1)(age)).save(tmp_path / "model.keras")
    exported = CliRunner().invoke(app, ["export", remote, "--model", str(tmp_path / "model.keras"),
                                        "--out", str(tmp_path / "export")])
    assert exported.exit_code == 0, exported.output
    assert "serving_default" in tf.saved_model.load(str(tmp_path / "export")).signatures

    refused = CliRunner().invoke(app, ["export", remote, "--model", str(tmp_path / "model.keras"),
                                       "--out", f"s3://{BUCKET}/export"])
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
    assert "TensorFlow cannot write" in refused.output


def test_a_missing_run_on_s3_is_one_line(s3):
    from typer.testing import CliRunner

    from skewless.cli import app

    result = CliRunner().invoke(app, ["inspect", f"s3://{BUCKET}/nothing"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert f"s3://{BUCKET}/nothing/run.json" in result.output


def test_an_unreachable_s3_endpoint_is_one_line_within_seconds(s3, tmp_path, monkeypatch):
    import yaml
    from typer.testing import CliRunner

    from skewless.cli import app

    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_free_port()}")  # nothing listens there
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(example_config(f"s3://{BUCKET}/unreachable")))
    for command in (["run", str(config)], ["inspect", f"s3://{BUCKET}/run"]):
        started = time.time()
        result = CliRunner().invoke(app, command)
        # `run` says first that it is starting (before importing TensorFlow); the error is then its one line
        lines = [line for line in result.output.strip().splitlines() if not line.startswith("skewless run example:")]
        assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("skewless: error: "), result.output
        assert f"cannot reach bucket '{BUCKET}'" in lines[0]
        assert time.time() - started < 30  # Beam's own S3 client retries for minutes
