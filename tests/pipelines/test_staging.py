"""Claiming and publishing a run on an object store, through Beam's filesystems only.

`store://` is a Beam filesystem registered by this module (Beam finds FileSystem subclasses by scheme)
that keeps its files under a local folder but behaves like gs:// or s3://: no folders (a folder is
only the prefix of file names), renames and deletes file by file. A job path that bypassed Beam's
filesystems would fail on `store://` paths or leave a local folder named `store:` in the working folder.
"""

import json
import os

import pytest
from apache_beam.io.filesystem import FileMetadata, FileSystem
from apache_beam.io.localfilesystem import LocalFileSystem

from run_output import minimal_summary
from skewless.pipelines.output import files
from skewless.pipelines.output.staging import claim, publish

PREFIX = "store://"


class StoreFileSystem(FileSystem):
    root = None  # the local folder holding the store's files, set by the fixture
    renames: list = []  # every rename call's sources, in order

    @classmethod
    def scheme(cls):
        return "store"

    def _local(self, path):
        return os.path.join(self.root, path[len(PREFIX):])

    def _store(self, local):
        return PREFIX + os.path.relpath(local, self.root)

    def join(self, basepath, *paths):
        return "/".join([basepath.rstrip("/"), *paths])

    def split(self, path):
        head, _, tail = path.rpartition("/")
        return head, tail

    def mkdirs(self, path):
        pass

    def has_dirs(self):
        return False

    def _list(self, prefix):
        for parent, _, names in os.walk(self.root):
            for name in names:
                path = self._store(os.path.join(parent, name))
                if path.startswith(prefix):
                    yield self.metadata(path)

    def create(self, path, mime_type="application/octet-stream", compression_type=None):
        return LocalFileSystem(None).create(self._local(path), mime_type, compression_type)

    def open(self, path, mime_type="application/octet-stream", compression_type=None):
        return LocalFileSystem(None).open(self._local(path), mime_type, compression_type)

    def copy(self, sources, destinations):
        LocalFileSystem(None).copy([self._local(p) for p in sources], [self._local(p) for p in destinations])

    def rename(self, sources, destinations):
        StoreFileSystem.renames.append(list(sources))
        for source, destination in zip(sources, destinations):
            assert os.path.isfile(self._local(source)), f"{source}: a store renames files, not folders"
            os.makedirs(os.path.dirname(self._local(destination)), exist_ok=True)
            os.replace(self._local(source), self._local(destination))

    def exists(self, path):
        return os.path.isfile(self._local(path))

    def size(self, path):
        return os.path.getsize(self._local(path))

    def last_updated(self, path):
        return os.path.getmtime(self._local(path))

    def checksum(self, path):
        return str(self.size(path))

    def metadata(self, path):
        return FileMetadata(path, self.size(path), self.last_updated(path))

    def delete(self, paths):
        for path in paths:
            assert os.path.isfile(self._local(path)), f"{path}: a store deletes files, not folders"
            os.remove(self._local(path))


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(StoreFileSystem, "root", str(tmp_path / "store"))
    monkeypatch.setattr(StoreFileSystem, "renames", [])
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")  # where an os call on "store://..." would leave a folder "store:"
    yield tmp_path


# its run.json a run summary: --overwrite replaces only a previous run
RUN = {"run.json": json.dumps(minimal_summary()).encode(), "config.yaml": b"name: x\n",
       "data/train-00000-of-00001.tfrecord.gz": b"records", "transform_graph/transform_fn/saved_model.pb": b"graph"}


def write_run(folder, contents):
    for name, data in contents.items():
        files.write_bytes(f"{folder}/{name}", data)


def stored(folder) -> dict[str, bytes]:
    return {path[len(folder) + 1:]: files.read_bytes(path) for path in files.files_under(folder)}


def test_publish_moves_the_run_file_by_file_with_run_json_last(store):
    output = "store://bucket/out"
    claimed = claim(output)
    assert claimed == "store://bucket/out.staging"
    write_run(f"{claimed}/run", RUN)
    publish(f"{claimed}/run", output, claimed, overwrite=False, kind="run")
    assert stored(output) == RUN
    assert files.files_under(claimed) == []
    assert StoreFileSystem.renames[-1] == [f"{claimed}/run/run.json"]  # the run is complete only once it is there
    assert sorted(StoreFileSystem.renames[0]) == sorted(f"{claimed}/run/{name}" for name in RUN if name != "run.json")
    assert os.listdir(store / "work") == []  # nothing went through os calls on a store:// path


def test_a_new_run_replaces_the_old_output_and_a_claim_clears_what_a_killed_run_left(store):
    output = "store://bucket/out"
    write_run(output, {**RUN, "data/train-00000-of-00009.tfrecord.gz": b"old shard"})
    write_run("store://bucket/out.staging/run", {"data/half-written.tmp": b"x"})  # a killed run's leftovers
    assert files.exists(output) and not files.exists("store://bucket/other")

    claimed = claim(output)
    assert files.files_under(claimed) == []
    new_run = {**RUN, "run.json": b'{"new": true}'}
    write_run(f"{claimed}/run", new_run)
    publish(f"{claimed}/run", output, claimed, overwrite=True, kind="run")
    assert stored(output) == new_run
    assert os.listdir(store / "work") == []
