"""Input files for every reader of raw input: which files a config names, their format, their bytes.

One rule each, for the job, `skewless schema infer/validate`, `make_raw_dataset` and `skewless verify`:
- paths and globs expand through Beam's filesystems (local, gs://, s3:// with Beam's extras), each glob's
  matches sorted, globs in config order; a pattern that matches no file is an error naming it (for a local
  pattern `local_matches` tells it before Beam is imported);
- a local file is opened and sized without Beam (Beam's local filesystem is Python's `open` too);
- a file is gzip when it starts with gzip's magic bytes, whatever its name says (a name can lie, the bytes
  cannot), and a gzip stream cut short or failing its CRC is an `InputError`, never an early end of file;
- the format follows the name's suffix (a trailing .gz/.gzip aside; `skewless.input_formats`) where no config
  says it.
"""

from __future__ import annotations

import fnmatch
import gzip
import os
import re
import zlib
from typing import BinaryIO, Sequence

from skewless.errors import ConfigError, InputError
from skewless.input_formats import INPUT_FORMATS
from skewless.lazy_imports import lazy_import
from skewless.pipelines.output.files import is_local

# Beam's filesystems on first use: the CLI checks input paths with this module before it imports Beam
filesystems = lazy_import("apache_beam.io.filesystems")

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_SUFFIXES = (".gz", ".gzip")
_GLOB_CHARACTERS = re.compile(r"[*?\[]")


def format_of(paths: Sequence[str], remedy: str) -> str:
    """The input format the names' suffixes say (`FormatEntry.suffixes`); all must agree. `remedy` ends the errors."""
    found = set()
    for path in paths:
        told = told_format(path)
        if told is None:
            known = ", ".join(suffix for entry in INPUT_FORMATS.values() for suffix in entry.suffixes)
            raise ConfigError(f"{path}: cannot tell the format from the name (expected {known}, optionally .gz); {remedy}")
        found.add(told)
    if len(found) != 1:
        raise ConfigError(f"the inputs mix formats ({', '.join(sorted(found))}); {remedy}")
    return found.pop()


def told_format(path: str) -> str | None:
    """The input format `path`'s suffix says (a trailing .gz/.gzip aside), or None where it says none."""
    name = path.lower()
    for suffix in _GZIP_SUFFIXES:
        name = name.removesuffix(suffix)
    return next((entry.name for entry in INPUT_FORMATS.values()
                 if any(name.endswith(suffix) for suffix in entry.suffixes)), None)


def expand_paths(patterns: Sequence[str]) -> list[str]:
    """The files `patterns` name: each glob's matches sorted, globs in pattern order, as the user spelled
    them (a JobConfig's paths are absolute since it was loaded)."""
    paths: list[str] = []
    for resolved in patterns:
        if is_local(resolved) and os.path.isdir(resolved):
            raise a_folder(resolved)
        try:
            matches = filesystems.FileSystems.match([resolved])[0].metadata_list
        except Exception as error:  # Beam raises BeamIOError subclasses per filesystem
            raise InputError(f"{resolved}: cannot list input: {error}") from None
        # a local glob matches folders too; on an object store a name ending in "/" is a folder marker
        files = sorted(m.path for m in matches if not m.path.endswith("/") and not (is_local(m.path) and os.path.isdir(m.path)))
        if not files:
            raise no_match(resolved)
        paths.extend(path for path in files if path not in paths)
    return paths


def a_folder(pattern: str) -> InputError:
    return InputError(f"{pattern}: is a folder; name the files (a glob works)")


def no_match(pattern: str) -> InputError:
    return InputError(f"{pattern}: no input file matches")


def local_matches(pattern: str) -> list[str] | None:
    """The files a local pattern names, sorted, found without importing Beam (the CLI's checks before the job);
    None where only Beam's own matching can tell.

    A literal path is the file itself. In a glob, `*` and `[...]` match within one name, names starting with a
    dot included, as Beam's do (tests/pipelines/test_input_paths.py compares the two); Beam's `?` and `**` match
    across folders, which this leaves to Beam. Folders (followed where Beam's listing would not) are a superset
    of Beam's: when nothing matches here, nothing matches there."""
    if not _GLOB_CHARACTERS.search(pattern):
        return [pattern] if os.path.isfile(pattern) else []
    if "**" in pattern or "?" in pattern:
        return None
    first, *names = pattern.split(os.sep)
    found = [first or os.sep]
    for name in names:
        if not _GLOB_CHARACTERS.search(name):
            found = [os.path.join(folder, name) for folder in found if os.path.lexists(os.path.join(folder, name))]
            continue
        found = [os.path.join(folder, entry) for folder in found if os.path.isdir(folder)
                 for entry in os.listdir(folder) if fnmatch.fnmatchcase(entry, name)]
    return sorted(path for path in found if os.path.isfile(path))


def file_sizes(paths: Sequence[str]) -> list[int]:
    """Each file's size in bytes."""
    if all(map(is_local, paths)):
        return [os.path.getsize(path) for path in paths]
    return [filesystems.FileSystems.match([path])[0].metadata_list[0].size_in_bytes for path in paths]


def open_input(path: str, gunzip: bool = True) -> BinaryIO:
    """The bytes of an input file, gunzipped when `gunzip` and it starts with gzip's magic bytes."""
    try:
        raw = open(path, "rb") if is_local(path) else _open_remote(path)
    except Exception as error:  # each Beam filesystem raises its own error types
        raise InputError(f"{path}: cannot open input: {error}") from None
    if not gunzip:
        return raw
    compressed = raw.read(len(_GZIP_MAGIC)) == _GZIP_MAGIC
    raw.seek(0)
    return GunzippedFile(raw, path) if compressed else raw


def _open_remote(path: str) -> BinaryIO:
    return filesystems.FileSystems.open(path, compression_type=filesystems.CompressionTypes.UNCOMPRESSED)


def is_gzip(path: str) -> bool:
    """Whether the file starts with gzip's magic bytes (such a file cannot be cut at byte offsets)."""
    with open_input(path, gunzip=False) as handle:
        return handle.read(len(_GZIP_MAGIC)) == _GZIP_MAGIC


class GunzippedFile:
    """A gzip file's content; damage or a stream cut short is an InputError, never an early end of file."""

    def __init__(self, raw: BinaryIO, path: str):
        self._raw = raw
        self._path = path
        self._gzip = gzip.GzipFile(fileobj=raw)

    def read(self, size: int = -1) -> bytes:
        return self._checked(self._gzip.read, size)

    def readline(self, size: int = -1) -> bytes:
        return self._checked(self._gzip.readline, size)

    def __iter__(self):
        return iter(self.readline, b"")

    def _checked(self, method, *args) -> bytes:
        try:
            return method(*args)
        except (EOFError, OSError, zlib.error) as error:  # a cut stream is EOFError, a bad CRC BadGzipFile
            raise InputError(
                f"{self._path}: corrupt or truncated gzip stream near compressed byte {self._raw.tell()}: {error}"
            ) from None

    def close(self) -> None:
        self._gzip.close()
        self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
