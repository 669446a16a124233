"""The job's file access, through Beam's filesystems: local paths, and gs://, s3://, hdfs:// with Beam's extras.

On an object store a folder is only a name prefix: it exists while a file under it does, and is removed
file by file. These helpers treat folders that way everywhere, so the job behaves the same on both.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import shutil
import tempfile
import threading

from skewless.lazy_imports import lazy_import

# Beam's filesystems on first use: `skewless inspect`/`report` read a local run through this module without Beam
filesystems = lazy_import("apache_beam.io.filesystems")


_process_folders_lock = threading.Lock()
_process_folders: dict[str, str] = {}


def process_folder(name: str) -> str:
    """A local temporary folder of this process for what it keeps between runs (`name` says what), made on first
    use and removed at exit: the same folder on every call."""
    with _process_folders_lock:
        if name not in _process_folders:
            folder = tempfile.mkdtemp(prefix=f"skewless-{name}-")
            atexit.register(shutil.rmtree, folder, True)
            _process_folders[name] = folder
        return _process_folders[name]


def is_local(path: str) -> bool:
    """A path on this machine's filesystem (no scheme): the only kind with atomic renames and process ids."""
    return "://" not in path


def read_bytes(path: str) -> bytes:
    with filesystems.FileSystems.open(path, compression_type=filesystems.CompressionTypes.UNCOMPRESSED) as handle:
        return handle.read()


def write_bytes(path: str, data: bytes) -> None:
    with filesystems.FileSystems.create(path, compression_type=filesystems.CompressionTypes.UNCOMPRESSED) as handle:
        handle.write(data)


def read_json(path: str):
    return json.loads(read_bytes(path))


def write_json(value, path: str) -> None:
    write_bytes(path, json.dumps(value, sort_keys=True).encode())


def files_under(folder: str) -> list[str]:
    """Every file below `folder`, at any depth, sorted; [] when there is none."""
    pattern = filesystems.FileSystems.join(folder, "**")
    return sorted(metadata.path for metadata in filesystems.FileSystems.match([pattern])[0].metadata_list)


def folder_digest(folder: str) -> str:
    """sha256 of every file below `folder`: of the listing `sha256sum` prints for them, sorted by path relative to
    the folder, so `cd FOLDER && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum` gives the same
    digest."""
    root = folder.rstrip("/")
    listing = []
    for path in files_under(root):
        relative = "./" + path[len(root):].lstrip("/")
        listing.append((relative, hashlib.sha256(read_bytes(path)).hexdigest()))
    return hashlib.sha256("".join(f"{digest}  {path}\n" for path, digest in sorted(listing)).encode()).hexdigest()


def exists(path: str) -> bool:
    """A file, or a folder with a file in it."""
    return filesystems.FileSystems.exists(path) or bool(files_under(path))


def remove_tree(folder: str) -> None:
    """Deletes `folder` and everything in it; nothing to do when it is absent."""
    if is_local(folder):
        if filesystems.FileSystems.exists(folder):
            filesystems.FileSystems.delete([folder])  # recursive on a local disk, empty folders included
        return
    paths = files_under(folder)
    if paths:
        filesystems.FileSystems.delete(paths)
