"""Runs on object stores that TensorFlow cannot open (s3:// in TF 2.21), through Beam's filesystems.

TensorFlow 2.21 ships no s3:// filesystem, so neither tf.Transform (which writes the graph with
`tf.io.gfile`) nor tf.data can touch such a path. Beam's filesystems can (`apache-beam[aws]`). So a job
whose output is there writes the whole run on this machine, under `$TMPDIR/skewless-staging/`, and
`upload` copies it to the store file by file, run.json last (a run is complete once it has run.json).
The readers (`inspect`, `verify`, `report`, `export`, `make_dataset`, `make_raw_dataset`) of a run on
any store take a local copy first (`local_run`, through Beam's filesystems like the job), cached under
`$TMPDIR/skewless-runs/` by the content of run.json; make_dataset reads a store TensorFlow opens in place.

Beam's S3 filesystem needs pipeline options even outside a pipeline; connection settings come from
the standard AWS environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...: boto3 reads them), and a job's
`--s3_endpoint_url` and other S3Options apply to that job.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid

from skewless.errors import InputError
from skewless.lazy_imports import lazy_import
from skewless.pipelines.output import files
from skewless.run_directory import DATA_DIR, GRAPH_DIR, RUN_FILE

# on first use: the report and `skewless export` read local runs through this module without Beam (a training or
# serving container has none), and boto3 is needed only for s3://
tf = lazy_import("tensorflow")
boto3 = lazy_import("boto3")
pipeline_options = lazy_import("apache_beam.options.pipeline_options")
botocore_config = lazy_import("botocore.config")
filesystems = lazy_import("apache_beam.io.filesystems")

STAGING_ROOT = "skewless-staging"
CACHE_ROOT = "skewless-runs"


def local_stand_in(output_dir: str, beam_args: list[str]) -> str | None:
    """Where a job writes a run bound for `output_dir` before `upload`; None when TensorFlow writes it itself.

    Also hands Beam's filesystems the job's options, so checking and clearing the output can reach the store.
    """
    if files.is_local(output_dir):
        return None
    use_options(beam_args)
    if tensorflow_opens(output_dir):
        return None
    check_reachable(output_dir, beam_args)
    return _mirror(output_dir, STAGING_ROOT)


def tensorflow_opens(path: str) -> bool:
    """TensorFlow (tf.io.gfile, tf.data) reads and writes `path` itself."""
    return files.is_local(path) or path.split("://", 1)[0] in tf.io.gfile.get_registered_schemes()


def check_reachable(path: str, beam_args: list[str]) -> None:
    """Fails in seconds, in one line, when the bucket of an s3:// `path` cannot be reached: Beam's S3
    client retries an unreachable endpoint for minutes before it gives up, with a traceback.
    """
    if not path.startswith("s3://"):
        return
    options = pipeline_options.PipelineOptions(list(beam_args)).view_as(pipeline_options.S3Options)
    client = boto3.session.Session().client(
        "s3", endpoint_url=options.s3_endpoint_url, region_name=options.s3_region_name,
        aws_access_key_id=options.s3_access_key_id, aws_secret_access_key=options.s3_secret_access_key,
        config=botocore_config.Config(connect_timeout=5, read_timeout=20, retries={"max_attempts": 1}))
    bucket = path[len("s3://") :].split("/", 1)[0]
    try:
        client.head_bucket(Bucket=bucket)
    except Exception as error:  # botocore's connection, credential and HTTP errors share no base class
        raise InputError(f"{path}: cannot reach bucket {bucket!r} ({_first_line(error)})") from None


def use_options(beam_args: list[str]) -> None:
    # Beam's S3 filesystem refuses to open anything until it has pipeline options, even empty ones
    filesystems.FileSystems.set_options(pipeline_options.PipelineOptions(list(beam_args)))


def upload(local_dir: str, target: str) -> None:
    """Copies the finished run in `local_dir` to `target`, which the caller has cleared
    (staging.clear_remote_output: an old run.json goes first).

    The new run.json is copied last, so `target` never passes for a complete run while it holds parts of two.
    """
    sources = sorted(os.path.relpath(path, local_dir) for path in _local_files(local_dir))
    for name in sorted(sources, key=lambda name: name == RUN_FILE):
        copy_file(os.path.join(local_dir, name), filesystems.FileSystems.join(target, *name.split(os.sep)))


def local_run(run_dir: str | os.PathLike, data: bool = False) -> str:
    """A local directory holding the run at `run_dir`: itself on a local disk, else a cached copy.

    The copy leaves out data/ unless `data` is true (only make_dataset reads the shards). Apache Beam
    is imported only for a remote run.
    """
    run_dir = os.fspath(run_dir)
    if files.is_local(run_dir):
        return run_dir
    head, tail = run_dir.rstrip("/").rsplit("/", 1)
    if tail == GRAPH_DIR:  # readers take a run's transform_graph/ for the run
        return os.path.join(local_run(head, data), GRAPH_DIR)
    use_options([])
    check_reachable(run_dir, [])
    marker = filesystems.FileSystems.join(run_dir, RUN_FILE)
    try:
        summary = files.read_bytes(marker)
    except Exception as error:  # Beam wraps a missing key, refused credentials and an unreachable endpoint alike
        raise InputError(f"{marker}: cannot read ({_first_line(error)}); is {run_dir} the output of `skewless run`?") from None
    cached = os.path.join(_mirror(run_dir, CACHE_ROOT), hashlib.sha256(summary).hexdigest()[:16])
    remote = files.files_under(run_dir)
    prefix = run_dir.rstrip("/") + "/"
    names = [path[len(prefix) :] for path in remote]
    if not os.path.isdir(cached):
        _download(run_dir, [name for name in names if not _in_data(name)], cached)
    if data and not os.path.isdir(os.path.join(cached, DATA_DIR)):
        shards = [name for name in names if _in_data(name)]
        _download(run_dir, shards, os.path.join(cached, DATA_DIR), strip=DATA_DIR + "/")
    return cached


def _download(run_dir: str, names: list[str], into: str, strip: str = "") -> None:
    """Copies `names` (relative to `run_dir`) into `into`, which appears whole or not at all."""
    partial = f"{into}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    for name in names:
        local = os.path.join(partial, *name[len(strip) :].split("/"))
        os.makedirs(os.path.dirname(local), exist_ok=True)
        copy_file(filesystems.FileSystems.join(run_dir, name), local)
    os.makedirs(partial, exist_ok=True)
    try:
        os.rename(partial, into)
    except OSError:  # another reader finished the same copy first
        shutil.rmtree(partial, ignore_errors=True)


def copy_file(source: str, target: str) -> None:
    """Streams one file between any two of Beam's filesystems, its bytes unchanged."""
    raw = filesystems.CompressionTypes.UNCOMPRESSED
    beam_files = filesystems.FileSystems
    with beam_files.open(source, compression_type=raw) as reader, beam_files.create(target, compression_type=raw) as writer:
        shutil.copyfileobj(reader, writer, 8 << 20)


def _local_files(folder: str) -> list[str]:
    return [os.path.join(root, name) for root, _, names in os.walk(folder) for name in names]


def _mirror(path: str, root: str) -> str:
    """`scheme://bucket/key` as a folder under $TMPDIR/<root>/: one fixed place per remote path."""
    scheme, rest = path.split("://", 1)
    return os.path.join(tempfile.gettempdir(), root, scheme, *rest.strip("/").split("/"))


def _in_data(name: str) -> bool:
    return name.startswith(DATA_DIR + "/")


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
