"""Opening input files strictly: gzip and TFRecord damage is an error naming the file and the offset.

tf.data's `TFRecordDataset` ends without an error on some damage (a file cut inside a record's data,
a gzip stream that stops early), which would drop the rest of a file silently. Here any damage is an
`InputError` naming the file, the record number (1-based) and its byte offset (in the uncompressed stream for
gzip files); a gzip stream cut short or failing its own CRC is one too (see `open_input`).

A record is: uint64 length, uint32 masked CRC32C of those 8 bytes, the data, uint32 masked CRC32C
of the data (little endian), as `tf.io.TFRecordWriter` and `shards.ShardWriter` write them.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from typing import BinaryIO, Iterator

from skewless.errors import InputError
from skewless.pipelines.shards import masked_crc

READ_BYTES = 1 << 20
_HEADER = 12
_FOOTER = 4


def is_gzip(path: str) -> bool:
    return path.endswith(".gz") or path.endswith(".gzip")


def open_input(path: str) -> BinaryIO:
    """The bytes of an input file (gunzipped when its name ends in .gz), through Beam's filesystems."""
    from apache_beam.io.filesystems import CompressionTypes, FileSystems

    try:
        raw = FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
    except Exception as error:  # each Beam filesystem raises its own error types
        raise InputError(f"{path}: cannot open input: {error}") from None
    return _Gunzipped(raw, path) if is_gzip(path) else raw


class _Gunzipped:
    """A gzip file's content; damage or a stream cut short is an InputError, never an early end of file."""

    def __init__(self, raw: BinaryIO, path: str):
        self._raw = raw
        self._path = path
        self._gzip = gzip.GzipFile(fileobj=raw)

    def read(self, size: int = -1) -> bytes:
        return self._checked(self._gzip.read, size)

    def readline(self) -> bytes:
        return self._checked(self._gzip.readline)

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


def read_records(path: str, start: int = 0, stop: int = -1) -> Iterator[bytes]:
    """The data of records `start` to `stop - 1` (0-based; `stop` -1: to the end) of a TFRecord file.

    Records before `start` are framed and their length checked, not their data.
    """
    with open_input(path) as handle:
        for index, data in _frames(handle, path, check_from=start, stop=stop):
            if index >= start:
                yield data


def count_records(path: str) -> int:
    """How many records the file holds, having checked every one."""
    count = 0
    with open_input(path) as handle:
        for count, _ in enumerate(_frames(handle, path, check_from=0, stop=-1), start=1):
            pass
    return count


def _frames(handle: BinaryIO, path: str, check_from: int, stop: int) -> Iterator[tuple[int, bytes | None]]:
    """(index, data) per record up to `stop` (-1: all); data is None (not copied, not checked) before `check_from`."""
    where = "uncompressed byte" if is_gzip(path) else "byte"
    buffer, position, base, index = b"", 0, 0, 0  # base: stream offset of buffer[0]
    at_end = False
    while stop < 0 or index < stop:
        if len(buffer) - position < _HEADER:
            if at_end:
                break
            buffer, base, position = buffer[position:], base + position, 0
            chunk = handle.read(READ_BYTES)
            at_end = not chunk
            buffer += chunk
            continue
        header = buffer[position : position + 8]
        (length,) = struct.unpack_from("<Q", buffer, position)
        (header_crc,) = struct.unpack_from("<I", buffer, position + 8)
        if masked_crc(header) != header_crc:
            raise InputError(
                f"{path}: record {index + 1} at {where} {base + position}: its length fails the CRC check (corrupt file)"
            )
        size = _HEADER + length + _FOOTER
        while len(buffer) - position < size and not at_end:
            buffer, base, position = buffer[position:], base + position, 0
            chunk = handle.read(max(READ_BYTES, size - len(buffer)))
            at_end = not chunk
            buffer += chunk
        if len(buffer) - position < size:
            raise InputError(
                f"{path}: record {index + 1} at {where} {base + position}: the file ends inside it "
                f"({len(buffer) - position} of {size} bytes; truncated file)"
            )
        data = None
        if index >= check_from:
            data = buffer[position + _HEADER : position + _HEADER + length]
            (data_crc,) = struct.unpack_from("<I", buffer, position + _HEADER + length)
            if masked_crc(data) != data_crc:
                raise InputError(
                    f"{path}: record {index + 1} at {where} {base + position}: its data fails the CRC check (corrupt record)"
                )
        yield index, data
        position += size
        index += 1
    if len(buffer) > position and index != stop:
        raise InputError(
            f"{path}: record {index + 1} at {where} {base + position}: the file ends inside its header "
            f"({len(buffer) - position} of {_HEADER} bytes; truncated file)"
        )
