"""Output shards: what they are called, and how one is written and finalized (how many of them:
pipelines/plan/shard_count.py).

Names: ``{split}-{index:05d}-of-{count:05d}.tfrecord[.gz]``.

Writing: a shard is written to ``<name>.tmp-<token>`` beside its final name and renamed when complete,
so a retried or killed worker never leaves a file under a final name that is not whole.
"""

from __future__ import annotations

import uuid

import google_crc32c
import numpy as np
from apache_beam.io.filesystems import CompressionTypes, FileSystems
from zlib_ng import zlib_ng

from skewless.pipelines.output.tfrecord_crc import masked
from skewless.pipelines.write import native_records
from skewless.pipelines.write.example_encoder import Records
from skewless.pipelines.runner.stage_thread import StageThread

FRAMING_BYTES = 16  # per record: its length (8), the length's CRC (4), the record's CRC (4)
# The bytes handed to the gzip compressor at a time. zlib-ng's stream depends on where its input is cut (zlib's
# does not), so a shard's bytes are cut at fixed offsets: the gzip bytes then depend on the records alone, not on
# the slices and chunks that wrote them.
GZIP_BLOCK = 1 << 20


def tfrecord_frames(records: Records) -> np.ndarray:
    """The TFRecord framing of `records`, back to back: per record its length (uint64), the masked CRC of
    those 8 bytes, the record, the masked CRC of the record (all little endian). In C, one call for all the
    records, where the package was built with it (native_records), else in Python; the same bytes."""
    native = native_records.frame(records.data, records.lengths)
    return native if native is not None else tfrecord_frames_in_python(records)


def tfrecord_frames_in_python(records: Records) -> np.ndarray:
    """`tfrecord_frames` with NumPy and a google_crc32c call per record.

    Only the records' CRCs take a call each; a length's CRC is computed once per distinct length. The records'
    bytes are copied into the output in one masked assignment: the output is the records with 12 framing bytes
    inserted before each and 4 after.
    """
    lengths = records.lengths.astype(np.int64)
    rows = len(lengths)
    as_u8 = lengths.astype("<u8")
    distinct, which = np.unique(as_u8, return_inverse=True)
    header_crcs = masked(np.array([google_crc32c.value(length.tobytes()) for length in distinct], np.uint64))
    data = records.data.tobytes()  # google_crc32c reads bytes, not buffer views
    ends = np.cumsum(lengths)
    starts = ends - lengths
    data_crcs = masked(np.fromiter((google_crc32c.value(data[a:b]) for a, b in zip(starts.tolist(), ends.tolist())),
                                   np.uint64, rows))
    frame_starts = starts + FRAMING_BYTES * np.arange(rows, dtype=np.int64)
    head_at = frame_starts[:, None] + np.arange(12)  # the length, then its CRC
    tail_at = (frame_starts + 12 + lengths)[:, None] + np.arange(4)  # the record's CRC
    out = np.empty(len(data) + FRAMING_BYTES * rows, dtype=np.uint8)
    record_byte = np.ones(len(out), dtype=bool)
    record_byte[head_at] = False
    record_byte[tail_at] = False
    out[record_byte] = records.data
    out[head_at[:, :8]] = as_u8.view(np.uint8).reshape(rows, 8)
    out[head_at[:, 8:]] = header_crcs[which].view(np.uint8).reshape(rows, 4)
    out[tail_at] = data_crcs.view(np.uint8).reshape(rows, 4)
    return out


class ShardWriter:
    """Writes TFRecord framing (length, masked CRC32C of the length, data, masked CRC32C of the data).

    Through Beam's filesystems, so any path Beam can write works; gzip is done here, in blocks, to keep memory
    flat, by zlib-ng at `gzip_level` (`output.gzip_level`): a standard gzip stream, at level 6 in ~0.7 of zlib's
    CPU and ~6% fewer bytes on census rows (docs/performance.md), the same bytes on every run.
    Compressing and writing run on a thread of the writer's own: zlib-ng releases the GIL, so on a
    multi-core machine gzip overlaps with transforming the next chunk. At most `MAX_PENDING` blocks wait
    for that thread, which bounds the memory it can hold. `threaded=False` compresses and writes on the
    caller's thread instead (the same bytes).
    """

    MAX_PENDING = 2

    def __init__(self, path: str, compression: str, gzip_level: int, threaded: bool = True):
        self.path = path
        self._temp = f"{path}.tmp-{uuid.uuid4().hex[:12]}"
        self._file = FileSystems.create(self._temp, compression_type=CompressionTypes.UNCOMPRESSED)
        self._gzip = zlib_ng.compressobj(gzip_level, zlib_ng.DEFLATED, 31) if compression == "gzip" else None
        self._unzipped = bytearray()  # the shard's bytes not yet compressed: less than one GZIP_BLOCK
        self._compressing = StageThread("shard-writer", self.MAX_PENDING, threaded)
        self.records = 0
        self.bytes = 0

    def write_records(self, records: Records) -> None:
        self._compressing.submit(self._emit, tfrecord_frames(records))
        self.records += len(records.lengths)

    def _emit(self, data) -> None:
        if self._gzip is None:
            self._write(data)
            return
        self._unzipped += memoryview(data)
        whole = len(self._unzipped) - len(self._unzipped) % GZIP_BLOCK
        with memoryview(self._unzipped) as unzipped:
            for start in range(0, whole, GZIP_BLOCK):
                self._write(self._gzip.compress(unzipped[start : start + GZIP_BLOCK]))
        del self._unzipped[:whole]

    def _write(self, data) -> None:
        self._file.write(data)
        self.bytes += len(data)

    def close(self) -> None:
        """Flushes and moves the file under its final name."""
        self._compressing.drain()
        if self._gzip is not None:
            self._write(self._gzip.compress(self._unzipped) + self._gzip.flush())
        self._file.close()
        if FileSystems.exists(self.path):
            FileSystems.delete([self.path])
        FileSystems.rename([self._temp], [self.path])

    def abort(self) -> None:
        self._compressing.abort()
        self._file.close()
        FileSystems.delete([self._temp])
